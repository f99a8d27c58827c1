"""Shared test settings: which run a test belongs to, Hypothesis profiles, and Ctrl-C given back
to pytest after each test.

Three runs, each test in exactly one (``setup.cfg``'s ``addopts`` deselects the last two by
default; a ``-m`` on the command line replaces its ``-m``):

- ``python -m pytest -q``: the specification, fast -- the engine, the ops and their gradchecks,
  attention, the models' small gradchecks, the one-line refusals, the documents' tables;
- ``python -m pytest -q -m slow``: end to end -- the files and tests listed in ``SLOW`` below
  (walkthroughs, README transcripts, command-line training runs, the exercise checker's
  sandbox, the benchmarks' smoke tests) and any test marked ``@pytest.mark.slow`` where it is
  defined;
- ``python -m pytest -q -m parity``: against PyTorch, the files in ``PARITY`` (needs
  ``pip install -e '.[parity]'``).

A slow file run by itself needs its marker too (``python -m pytest -m slow tests/models/test_tours.py``);
``-m ""`` runs everything.

Hypothesis: ``ci`` (chosen when the environment has CI=true) is derandomized, so a run is
reproducible, with 25 examples per property; ``dev`` (otherwise) draws 15 random ones, so the
specification stays fast and repeated local runs explore more; ``--hypothesis-profile=thorough``
draws 200. None has a deadline: timings on a shared machine are noise, not failures.
"""
import os
import signal
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("ci", deadline=None, derandomize=True, max_examples=25,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", deadline=None, max_examples=15,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", deadline=None, max_examples=200,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("ci" if os.environ.get("CI") == "true" else "dev")

# The messages in English, whatever this machine's locale: the READMEs' transcripts are English.
# (``minigrad.i18n`` reads LANGUAGE first; tests of Chinese output pass --lang zh.)
os.environ["LANGUAGE"] = "en"


@pytest.fixture(autouse=True)
def keep_sigint():
    """``models`` main() ignores Ctrl-C once it is exiting after one: restore pytest's handler."""
    previous = signal.getsignal(signal.SIGINT)
    yield
    signal.signal(signal.SIGINT, previous)


TESTS = Path(__file__).resolve().parent
# Slow: end-to-end runs that take seconds each (a file, a folder, or one test as file::name).
SLOW = [
    "models/test_tours.py",                    # the walkthroughs, trained and drawn
    "models/test_tours_zh.py",
    "docs/test_readme_runs.py",                # every README block and transcript, run
    "models/test_models_cli.py",               # python -m models: train, translate, inspect
    "models/test_cli_output.py",
    "models/test_app_signals.py",              # Ctrl-C, SIGTERM, SIGHUP during training
    "models/test_run_safety.py",
    "models/test_training.py",
    "models/test_nanotrain.py",
    "models/test_config_size.py::test_inspect_reads_a_transformer_run_which_has_no_recurrent_path",
    "attention/test_attention_demos.py::test_python_dash_m_attention_runs_every_demo",
    "minigrad/test_grader_isolation.py",       # the exercise checker's sandbox
    "minigrad/test_grader_sandbox_holes.py",
    "minigrad/test_grader_integrity.py",
    "minigrad/test_exercise_isolation.py",
    "minigrad/test_exercises.py::test_command_line_from_a_temp_dir",
    "minigrad/test_exercises.py::test_an_endless_learners_file_is_stopped_and_reported",
    "minigrad/test_exercises.py::test_sys_exit_in_a_learners_file_is_a_failure_not_a_silent_success",
    "minigrad/test_exercises_forward.py::test_exits_hangs_and_in_place_changes_fail",
    "minigrad/test_exercises_forward.py::test_reference_files_pass_in_the_sandbox",
    "minigrad/test_exercises_second.py::test_a_learners_wrong_file_is_named_through_the_sandbox",
    "minigrad/test_exercises_zh.py::test_check_prints_the_diagnosis_and_the_verdict_in_chinese",
    "minigrad/test_exercises_zh.py::test_check_all_in_chinese_with_the_same_marks_and_exit_status",
    "benchmarks/",                             # the benchmarks' smoke tests
]
PARITY = ["minigrad/test_torch_parity.py", "models/test_torch_parity_models.py"]


def _where(item):
    """The item's file relative to tests/, and its test as file::name (all its parameters)."""
    where = Path(str(item.path)).resolve().relative_to(TESTS).as_posix()
    return where, where + "::" + item.name.split("[")[0]


def _matches(entry, where, test) -> bool:
    return where.startswith(entry) if entry.endswith("/") else entry in (where, test)


@pytest.hookimpl(tryfirst=True)  # before -m deselects by marker
def pytest_collection_modifyitems(config, items):
    matched, files = set(), set()
    for item in items:
        where, test = _where(item)
        files.add(where)
        parity = [e for e in PARITY if _matches(e, where, test)]
        slow = [e for e in SLOW if _matches(e, where, test)]
        matched.update(parity, slow)
        if parity:
            item.add_marker(pytest.mark.parity)
        elif slow:
            item.add_marker(pytest.mark.slow)
        if item.get_closest_marker("slow") and item.get_closest_marker("parity"):
            raise pytest.UsageError(f"{item.nodeid} is marked both slow and parity: one run each")
    # An entry of a collected file that matches no test names a test renamed or removed.
    stale = [e for e in SLOW + PARITY if e not in matched and e.split("::")[0] in files]
    stale += [e for e in SLOW + PARITY if not (TESTS / e.split("::")[0]).exists()]
    for entry in stale:
        config.issue_config_time_warning(pytest.PytestConfigWarning(
            f"tests/conftest.py lists {entry!r}, which names no test (renamed or removed?)"), 2)
