"""Importing is free of process-wide effects: glibc's malloc thresholds (``minigrad/runtime/malloc.py``)
are set only by programs that own their process, never by importing a module; importing
``models.__main__`` does not start the CLI; and importing a module writes no file.

A walkthrough (``models/app/tours/source_*.py``, a percent-cell script: its first line is
``# %%``) is the lesson itself at its top level -- it trains models and draws figures when run --
so it is compiled here, not imported; ``tests/models/test_tours.py`` (a slow test) runs it.
"""
import os
import subprocess
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Run in a fresh process, in an empty folder: mallopt cannot be undone, this interpreter has
# imported most modules already, and a module that wrote a file would leave it there. Any route
# to mallopt fails loudly: the function of minigrad.runtime.malloc, and a lookup of "mallopt" in
# a C library loaded through ctypes. The CLI's entry point fails too.
IMPORT_EVERYTHING = textwrap.dedent("""
    import ctypes, importlib, importlib.util, pkgutil

    class NoMallopt(ctypes.CDLL):
        def __getattr__(self, name):
            if name == "mallopt":
                raise AssertionError("mallopt looked up while importing")
            return super().__getattr__(name)

    ctypes.CDLL = NoMallopt

    import models.app.cli, minigrad.runtime.malloc

    def forbidden(*args, **kwargs):
        raise AssertionError("called while importing")

    minigrad.runtime.malloc.keep_freed_memory = forbidden
    models.app.cli.main = forbidden

    def is_script(name):
        # a percent-cell script (a walkthrough): its top level is the lesson, run, not imported
        origin = importlib.util.find_spec(name).origin
        with open(origin, encoding="utf-8") as f:
            return f.readline().startswith("# %%")

    names = []
    for package in ("minigrad", "attention", "models"):
        path = importlib.import_module(package).__path__
        for info in pkgutil.walk_packages(path, package + "."):
            if not info.ispkg and is_script(info.name):
                origin = importlib.util.find_spec(info.name).origin
                with open(origin, encoding="utf-8") as f:
                    compile(f.read(), origin, "exec")
                names.append("compiled:" + info.name)
                continue
            importlib.import_module(info.name)
            names.append(info.name)
    print(" ".join(names))
""")


def test_importing_every_module_neither_sets_malloc_nor_runs_the_cli_nor_writes(tmp_path):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    run = subprocess.run([sys.executable, "-c", IMPORT_EVERYTHING], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    imported = run.stdout.split()
    assert "models.__main__" in imported and "minigrad.runtime.malloc" in imported
    assert "minigrad.tensor" in imported and "attention.scores" in imported
    assert "compiled:models.app.tours.source_003" in imported, imported
    assert sorted(os.listdir(tmp_path)) == [], "importing wrote files into the current folder"


def test_python_dash_m_models_still_runs_the_cli(tmp_path):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    run = subprocess.run([sys.executable, "-m", "models", "--help"], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("usage:")
    assert sorted(os.listdir(tmp_path)) == []
