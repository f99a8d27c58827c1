"""The gradient-check exercises (``minigrad.exercises``): the checker, its diagnoses, the
shipped stubs, ``start`` and the command line.

Solutions live in ``exercise_solutions/`` (never shipped): ``NN_name.py`` are reference
solutions that differentiate a composed forward with the engine's own reverse mode;
``numpy_vjps.py`` holds plain-NumPy VJPs as a learner writes them, each with switches for
one classic mistake.
"""
import ast
import functools
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import mutually_broadcastable_shapes

from minigrad.exercises import (STUBS, all_exercises, check_file, check_function, checker,
                                copy_stubs, diagnose, find, report)
from minigrad.exercises.__main__ import main

HERE = Path(__file__).parent
SOLUTIONS = HERE / "exercise_solutions"
REPO = HERE.parent.parent
NAMES = [e.name for e in all_exercises()]
BACKWARD = [e.name for e in all_exercises() if e.kind == "backward"]  # 17-22: test_exercises_forward


def _load(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


numpy_vjps = _load(SOLUTIONS / "numpy_vjps.py")


def _diagnoses(rep) -> list:
    """Every piece of text the checker said about a failing report."""
    texts = [rep.message]
    for case in rep.cases:
        texts += [case.error or ""] + case.side_effects
        texts += [r.diagnosis or "" for r in case.results]
    return texts


# ---- the catalogue ---------------------------------------------------------------------------

def test_catalogue_has_the_required_exercises_easy_to_hard():
    required = {"mul", "matmul", "tanh", "sigmoid", "sum_axis", "softmax", "log_softmax_ce",
                "masked_softmax", "additive_score", "attention_read", "scaled_dot_product",
                "gru_cell", "layer_norm", "causal_attention", "hvp", "read_second"}
    assert len(BACKWARD) >= 16 and required <= set(BACKWARD)
    parts = [[e for e in all_exercises() if e.kind == "backward"],           # 1-16
             [e for e in all_exercises() if e.kind == "forward" and not e.lesson],  # 17-20
             [e for e in all_exercises() if e.lesson]]                         # 21-22
    assert [e for part in parts for e in part] == list(all_exercises())
    for part in parts:  # each part easy to hard
        assert part and [e.stars for e in part] == sorted(e.stars for e in part)
    for e in all_exercises():
        assert len(e.hints) == 2 and all(e.hints)
        assert find(e.name) is e and find(e.file) is e and find(str(e.number)) is e


@pytest.mark.parametrize("name", NAMES)
def test_every_exercise_checks_several_input_shapes(name):
    e = find(name)
    cases = e.cases(np.random.default_rng(e.seed))
    assert len(cases) >= 3
    assert len({tuple(x.shape for x in inputs.values()) for inputs, _ in cases}) >= 3
    assert all(x.dtype == np.float64 for inputs, _ in cases for x in inputs.values())


def test_exercises_import_only_numpy_stdlib_and_minigrad():
    allowed = set(sys.stdlib_module_names) | {"numpy", "minigrad"}
    for path in (REPO / "minigrad" / "exercises").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                tops = [a.name.split(".")[0] for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                tops = [node.module.split(".")[0]]
            else:
                continue
            assert set(tops) <= allowed, f"{path.name} imports {tops}"


# ---- correct solutions pass ------------------------------------------------------------------

@pytest.mark.parametrize("name", NAMES)
def test_engine_reference_solution_passes(name):
    rep = check_file(find(name), SOLUTIONS)
    assert rep.status == "done", report.full(rep)
    assert all(r.ok and r.rel <= diagnose.TOL for c in rep.cases for r in c.results)


@pytest.mark.parametrize("name", BACKWARD)
def test_handwritten_numpy_solution_passes(name):
    rep = check_function(find(name), numpy_vjps.VJPS[name])
    assert rep.status == "done", report.full(rep)


# ---- wrong solutions fail with the right diagnosis -------------------------------------------

@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")  # the 0/0 mistake
@pytest.mark.parametrize("name, mistake, text", numpy_vjps.MISTAKES,
                         ids=[f"{n}-{m}" for n, m, _ in numpy_vjps.MISTAKES])
def test_wrong_solution_fails_with_its_diagnosis(name, mistake, text):
    rep = check_function(find(name), functools.partial(numpy_vjps.VJPS[name], mistake=mistake))
    assert rep.status == "failing"
    assert any(text in d for d in _diagnoses(rep)), report.full(rep)


def test_report_gives_verdict_worst_element_values_and_error_per_input():
    rep = check_function(find("tanh"), functools.partial(numpy_vjps.tanh, mistake="no factor"))
    text = report.full(rep)
    assert text.count("FAIL") == 2 * len(rep.cases)  # the input's line and dx's line
    first = rep.cases[0].results[0]
    assert (f"worst [{first.worst[0]}]: analytic {first.analytic: .6g}, "
            f"numeric {first.numeric: .6g}") in text
    assert "rel. error" in text and "missing factor 1 − tanh²(x)" in text
    ok = report.full(check_function(find("tanh"), numpy_vjps.tanh))
    assert "FAIL" not in ok and "all 3 inputs pass -- done." in ok


def test_checker_is_deterministic():
    wrong = functools.partial(numpy_vjps.gru_cell, mistake="dz sign")
    assert report.full(check_function(find("gru_cell"), wrong)) == \
        report.full(check_function(find("gru_cell"), wrong))


def test_a_vjp_that_changes_its_inputs_in_place_fails():
    def tanh_vjp(g, x):
        g *= 1 - np.tanh(x) ** 2
        return g
    rep = check_function(find("tanh"), tanh_vjp)
    assert rep.status == "failing"
    assert all(r.ok for c in rep.cases for r in c.results)  # right values, wrong manners
    assert "changed g in place" in report.full(rep)


# ---- diagnoses, pattern by pattern -----------------------------------------------------------

def test_shape_diagnoses():
    rng = np.random.default_rng(0)
    n = rng.standard_normal((3, 1))
    grad = np.broadcast_to(n / 8, (2, 3, 4)).copy()  # stretched over a new axis 0 and axis 2
    text = diagnose.shape_diagnosis(grad, n, "b")
    assert "broadcasting not undone" in text and "axes (0, 2)" in text
    assert "`grad.sum(axis=0).sum(axis=1, keepdims=True)`" in text and "matches" in text
    n = rng.standard_normal((2, 3))
    assert "extra axis 1" in diagnose.shape_diagnosis(np.stack([n / 2, n / 2], axis=1), n, "q")
    assert "Put axis 1 back" in diagnose.shape_diagnosis(n[:, 0], n, "x")
    assert "transposed" in diagnose.shape_diagnosis(n.T, n, "W")
    m = rng.standard_normal((2, 3, 4))
    assert ".T on a batched array" in diagnose.shape_diagnosis(m.T, m, "K")
    assert "right number of elements" in diagnose.shape_diagnosis(m.reshape(4, 6), m, "K")
    assert "wrong shape (5,)" in diagnose.shape_diagnosis(np.ones(5), m, "K")


@given(mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=3),
       st.integers(0, 2**32 - 1))
def test_the_suggested_sum_undoes_any_broadcast(shapes, seed):
    """Whatever broadcast a learner forgot to undo, the code the diagnosis suggests fixes it."""
    x_shape, out_shape = shapes.input_shapes[1], shapes.result_shape
    if np.prod(x_shape) == np.prod(out_shape):
        return  # nothing was stretched
    grad = np.random.default_rng(seed).standard_normal(out_shape)
    truth = grad.sum(axis=tuple(range(len(out_shape) - len(x_shape))))   # prepended axes
    truth = truth.sum(axis=tuple(i for i, n in enumerate(x_shape) if n == 1), keepdims=True)
    text = diagnose.shape_diagnosis(grad, truth, "b")
    assert "after that it matches the numeric gradient" in text, text
    code = text.split("`")[1]
    assert np.allclose(eval(code, {"grad": grad}), truth)


def test_value_diagnoses():
    rng = np.random.default_rng(1)
    n = rng.standard_normal((4, 4))
    assert "sign error" in diagnose.value_diagnosis(-n, n, "x")
    assert "transposed" in diagnose.value_diagnosis(n.T, n, "W")
    assert "≈ 8 ×" in diagnose.value_diagnosis(8 * n, n, "x")
    assert "1/√2" in diagnose.value_diagnosis(n / np.sqrt(2), n, "Q")
    assert "all zeros" in diagnose.value_diagnosis(np.zeros_like(n), n, "x")
    masked = np.where(np.arange(4) < 2, n, 0.0)
    assert "nonzero where the gradient must be 0" in diagnose.value_diagnosis(n, masked, "x")
    t = np.tanh(rng.standard_normal((4, 4)))
    assert "missing factor?" in diagnose.value_diagnosis(n, n * (1 - t * t), "x")
    nan = n.copy()
    nan[1, 2] = np.nan
    assert "NaN/inf at [1, 2]" in diagnose.value_diagnosis(nan, n, "x", "a masked row")
    assert diagnose.value_diagnosis(rng.standard_normal((4, 4)), n, "x") is None
    assert "sum to 0" in diagnose.zero_sum_note(n, -1, "e")
    assert diagnose.zero_sum_note(n - n.mean(-1, keepdims=True), -1, "e") is None


# ---- the stubs as shipped, learners' files, start --------------------------------------------

@pytest.mark.parametrize("name", NAMES)
def test_shipped_stub_fails_with_not_implemented_yet(name):
    e = find(name)
    source = (STUBS / e.file).read_text(encoding="utf-8")
    assert f"def {e.function}({'' if e.kind == 'forward' else 'g, '}" in source
    assert "Shapes" in source
    assert "raise NotImplementedError" not in source
    rep = check_file(e, STUBS)
    assert rep.status == "not implemented"
    text = report.full(rep)
    assert "not implemented yet" in text and "Traceback" not in text


def test_learner_files_that_do_not_run_are_reported_kindly(tmp_path):
    (tmp_path / "01_mul.py").write_text("def mul(g, a, b):\n    return g * b, g * a\n")
    (tmp_path / "02_tanh.py").write_text("import numpy as np\ndef tanh_vjp(g, x):\n"
                                         "    dx = g * (1 - np.tanh(x) ** 2)\n")
    (tmp_path / "03_sigmoid.py").write_text("def sigmoid_vjp(g, x):\n    return g @ x.T @ x\n")
    (tmp_path / "04_sum_axis.py").write_text("def sum_axis_vjp(g, x, axis)\n    return g\n")
    texts = {e.name: report.full(check_file(e, tmp_path)) for e in all_exercises()[:5]}
    assert "has no function mul_vjp" in texts["mul"]
    assert "did you forget the `return`" in texts["tanh"]
    assert "sigmoid_vjp raised ValueError" in texts["sigmoid"]
    assert "03_sigmoid.py line 2" in texts["sigmoid"]
    assert "could not load 04_sum_axis.py: SyntaxError" in texts["sum_axis"]
    assert "no 05_matmul.py in" in texts["matmul"] and "start" in texts["matmul"]
    assert not any("Traceback" in t for t in texts.values())


def test_sys_exit_in_a_learners_file_is_a_failure_not_a_silent_success(tmp_path, capsys):
    (tmp_path / "01_mul.py").write_text("import sys\nsys.exit(0)\n")            # on load
    (tmp_path / "02_tanh.py").write_text("import sys\ndef tanh_vjp(g, x):\n    sys.exit(0)\n")
    mul, tanh = (report.full(check_file(find(n), tmp_path)) for n in ("mul", "tanh"))
    assert "could not load 01_mul.py: SystemExit" in mul and "01_mul.py line 2" in mul
    assert "tanh_vjp raised SystemExit" in tanh and "02_tanh.py line 3" in tanh
    assert main(["check", "tanh", "--dir", str(tmp_path)]) == 1
    assert main(["check", "--all", "--dir", str(tmp_path)]) == 1
    assert main(["list", "--dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "sys.exit" in out and all(name in out for name in NAMES)     # list ran to the end


def test_an_endless_learners_file_is_stopped_and_reported(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(checker, "TIMEOUT", 0.2)  # 10 s as shipped
    (tmp_path / "01_mul.py").write_text("while True:\n    pass\n")                # on load
    (tmp_path / "02_tanh.py").write_text("def tanh_vjp(g, x):\n    while True:\n"
                                         "        try:\n            pass\n"
                                         "        except Exception:\n            pass\n")
    mul, tanh = check_file(find("mul"), tmp_path), check_file(find("tanh"), tmp_path)
    assert mul.status == "broken" and "took longer than 0.2 s — an infinite loop?" in mul.message
    assert tanh.status == "failing" and len(tanh.cases) == 1          # stops at the first input
    assert "tanh_vjp took longer than 0.2 s — an infinite loop?" in report.full(tanh)
    assert main(["list", "--dir", str(tmp_path)]) == 0
    assert main(["check", "--all", "--dir", str(tmp_path)]) == 1
    assert "an infinite loop?" in capsys.readouterr().out


def test_start_copies_every_stub_and_never_overwrites(tmp_path):
    mine = "def mul_vjp(g, a, b):\n    return g * b, g * a  # my work\n"
    (tmp_path / "01_mul.py").write_text(mine)
    copied, kept = copy_stubs(tmp_path)
    assert kept == ["01_mul.py"] and len(copied) == len(NAMES) - 1
    assert (tmp_path / "01_mul.py").read_text() == mine
    for e in all_exercises()[1:]:
        assert (tmp_path / e.file).read_bytes() == (STUBS / e.file).read_bytes()
    (tmp_path / "02_tanh.py").write_text("# started")
    assert copy_stubs(tmp_path) == ([], [e.file for e in all_exercises()])
    assert (tmp_path / "02_tanh.py").read_text() == "# started"


# ---- the command line, as a learner runs it --------------------------------------------------

def _run(*args, cwd):
    env = dict(os.environ, PYTHONIOENCODING="utf-8",
               PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    return subprocess.run([sys.executable, "-m", "minigrad.exercises", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, encoding="utf-8", timeout=120)


def test_command_line_from_a_temp_dir(tmp_path):
    course = tmp_path / "course"
    course.mkdir()
    mine = "def mul_vjp(g, a, b):\n    return g * b, g * a\n"  # broadcasting not undone
    (course / "01_mul.py").write_text(mine)

    r = _run("start", "course", cwd=tmp_path)
    assert r.returncode == 0 and f"copied {len(NAMES) - 1} stub(s)" in r.stdout
    assert "kept 1 file(s) already there (not overwritten): 01_mul.py" in r.stdout
    assert (course / "01_mul.py").read_text() == mine

    r = _run("list", cwd=course)
    assert r.returncode == 0 and all(name in r.stdout for name in NAMES)
    assert "not started" in r.stdout and "1/4 inputs pass" in r.stdout

    r = _run("check", "mul", cwd=course)
    assert r.returncode == 1 and "input 2: a (2, 3, 4), b (4,)" in r.stdout
    assert "broadcasting not undone" in r.stdout and "`grad.sum(axis=(0, 1))`" in r.stdout

    r = _run("check", "softmax", "--dir", "course", cwd=tmp_path)
    assert r.returncode == 1 and "not implemented yet" in r.stdout
    assert "Traceback" not in r.stdout + r.stderr

    r = _run("check", "--all", "--dir", str(SOLUTIONS), cwd=tmp_path)
    assert r.returncode == 0 and f"{len(NAMES)} of {len(NAMES)} done" in r.stdout

    r = _run("hint", "softmax", cwd=tmp_path)
    assert r.returncode == 0 and "hint 1 of 2 (shape bookkeeping)" in r.stdout
    r = _run("hint", "softmax", "--level", "2", cwd=tmp_path)
    assert r.returncode == 0 and "α ⊙ (g − αᵀg)" in r.stdout

    r = _run("check", "nosuch", cwd=tmp_path)
    assert r.returncode == 2 and "no exercise called 'nosuch'" in r.stderr


def test_bare_command_lists_the_exercises_and_how_to_go_on(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main([]) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in NAMES)
    for command in ("start DIR", "check NAME", "hint NAME"):
        assert command in out
