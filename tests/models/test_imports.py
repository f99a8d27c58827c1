"""Importing is free of process-wide effects: glibc's malloc thresholds (``minigrad/runtime/malloc.py``)
are set only by programs that own their process, never by importing a module, and importing
``models.__main__`` does not start the CLI."""
import os
import subprocess
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Run in a fresh process: mallopt cannot be undone, and this interpreter has imported most
# modules already. Any route to mallopt fails loudly: the function of minigrad.runtime.malloc, and a
# lookup of "mallopt" in a C library loaded through ctypes. The CLI's entry point fails too.
IMPORT_EVERYTHING = textwrap.dedent("""
    import ctypes, importlib, pkgutil

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

    names = []
    for package in ("minigrad", "attention", "models"):
        path = importlib.import_module(package).__path__
        for info in pkgutil.walk_packages(path, package + "."):
            importlib.import_module(info.name)
            names.append(info.name)
    print(" ".join(names))
""")


def test_importing_every_module_neither_sets_malloc_nor_runs_the_cli():
    run = subprocess.run([sys.executable, "-c", IMPORT_EVERYTHING], cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    imported = run.stdout.split()
    assert "models.__main__" in imported and "minigrad.runtime.malloc" in imported
    assert "minigrad.tensor" in imported and "attention.scores" in imported


def test_python_dash_m_models_still_runs_the_cli():
    run = subprocess.run([sys.executable, "-m", "models", "--help"], cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("usage:")
