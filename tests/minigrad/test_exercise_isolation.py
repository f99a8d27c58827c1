"""A learner's file cannot fake a grade, hang the checker or stop ``check --all``: it runs in a
child process that only returns its VJP's outputs; the verdict is computed in the parent."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

import minigrad.exercises as exercises
from minigrad.exercises import all_exercises, check_file, checker, copy_stubs, find, report
from minigrad.exercises.__main__ import main

REPO = Path(__file__).parent.parent.parent
RIGHT_MUL = ("import numpy as np\n"
             "def _undo(grad, shape):\n"
             "    while grad.ndim > len(shape):\n        grad = grad.sum(axis=0)\n"
             "    return grad.sum(axis=tuple(i for i, n in enumerate(shape) if n == 1), keepdims=True)\n"
             "def mul_vjp(g, a, b):\n    return _undo(g * b, a.shape), _undo(g * a, b.shape)\n")
WRONG_MUL = "import numpy as np\ndef mul_vjp(g, a, b):\n    return np.zeros_like(a), np.zeros_like(b)\n"

FILES = {
    "exit at import": ("01_mul.py", "import os\nos._exit(0)\n", "broken",
                       "ended the process (exit status 0"),
    "patches the checker": ("01_mul.py", "import minigrad.exercises.diagnose as d\n"
                            "import minigrad.exercises.checker as c\n"
                            "d.TOL = 1e300\nc._judge = None\nc.check_file = None\n" + WRONG_MUL,
                            "failing", "0 of 4 inputs pass"),
    "KeyboardInterrupt at import": ("01_mul.py", "raise KeyboardInterrupt\n", "broken",
                                    "could not load 01_mul.py: KeyboardInterrupt"),
    "custom BaseException in the VJP": ("02_tanh.py", "class Boom(BaseException):\n    pass\n"
                                        "def tanh_vjp(g, x):\n    raise Boom('no')\n", "failing",
                                        "tanh_vjp raised"),
    "exit in the VJP": ("02_tanh.py", "import os\ndef tanh_vjp(g, x):\n    os._exit(3)\n",
                        "failing", "ended the process (exit status 3"),
    "complex gradient": ("02_tanh.py", "import numpy as np\ndef tanh_vjp(g, x):\n"
                         "    return g * (1 - np.tanh(x) ** 2) + 5j\n", "failing",
                         "dtype complex128"),
    "object gradient": ("02_tanh.py", "import numpy as np\ndef tanh_vjp(g, x):\n"
                        "    return np.array([object()] * len(x), dtype=object)\n",
                        "failing", "not an array of numbers"),
    "a string": ("02_tanh.py", "def tanh_vjp(g, x):\n    return 'dx'\n", "failing",
                 "dx is a str, not an array of numbers"),
}


@pytest.mark.parametrize("case", list(FILES))
def test_a_learner_file_fails_in_one_line_and_cannot_fake_a_pass(case, tmp_path):
    name, source, status, fragment = FILES[case]
    (tmp_path / name).write_text(source)
    rep = check_file(find(name[3:-3]), tmp_path)
    assert rep.status == status
    line = report.first_problem(rep)
    assert fragment in report.full(rep) and line and "\n" not in line
    assert "Traceback" not in report.full(rep)


def test_a_loop_that_catches_base_exception_is_killed(tmp_path, monkeypatch):
    monkeypatch.setattr(checker, "TIMEOUT", 1.0)  # 10 s as shipped
    (tmp_path / "02_tanh.py").write_text(
        "def tanh_vjp(g, x):\n    while True:\n        try:\n            while True:\n"
        "                pass\n        except BaseException:\n            pass\n")
    (tmp_path / "01_mul.py").write_text(
        "import signal\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)\n"
        "while True:\n    try:\n        pass\n    except BaseException:\n        pass\n")
    tanh, mul = check_file(find("tanh"), tmp_path), check_file(find("mul"), tmp_path)
    assert tanh.status == "failing" and len(tanh.cases) == 1
    assert "took longer than 1 s" in report.first_problem(tanh)
    assert mul.status == "broken" and "took longer than 1 s" in mul.message


def test_check_all_goes_on_and_exits_1_unless_all_pass(tmp_path):
    """As a course runs it: a separate process, an os._exit(0) in the first file, streams
    closed in the second; every exercise still gets its line and the status is 1."""
    (tmp_path / "01_mul.py").write_text("import os\nos._exit(0)\n")
    (tmp_path / "02_tanh.py").write_text("import os, sys\nsys.stdout.close()\nos.close(2)\n"
                                         "import numpy as np\ndef tanh_vjp(g, x):\n"
                                         "    return g * (1 - np.tanh(x) ** 2)\n")
    run = lambda d: subprocess.run([sys.executable, "-m", "minigrad.exercises", "check", "--all",
                                    "--dir", str(d)], cwd=REPO, capture_output=True, text=True,
                                   timeout=300)
    done = run(tmp_path)
    assert done.returncode == 1, done.stderr
    assert "✗  1 mul" in done.stdout and "ended the process" in done.stdout
    assert "✓  2 tanh" in done.stdout and f"1 of {len(all_exercises())} done" in done.stdout
    (tmp_path / "01_mul.py").write_text(RIGHT_MUL)
    assert main(["check", "mul", "--dir", str(tmp_path)]) == 0


def test_start_refuses_a_file_a_foreign_folder_and_an_unwritable_one(tmp_path, monkeypatch, capsys):
    (tmp_path / "notes.txt").write_text("mine")
    assert main(["start", str(tmp_path / "notes.txt")]) == 2
    assert main(["start", str(tmp_path)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == [f"error: start: {tmp_path / 'notes.txt'} is a file, not a folder: name a new folder",
                   f"error: start: {tmp_path} already holds other files (notes.txt): name a new "
                   "or empty folder (or one made by start)"]
    assert os.listdir(tmp_path) == ["notes.txt"]

    def read_only(*args, **kwargs):
        raise PermissionError(13, "Permission denied")
    monkeypatch.setattr(exercises, "open", read_only, raising=False)
    assert main(["start", str(tmp_path / "course")]) == 2
    assert "error: start: cannot write" in capsys.readouterr().err
    monkeypatch.undo()
    copy_stubs(tmp_path / "course")  # a folder made by start is topped up, never overwritten
    assert len(copy_stubs(tmp_path / "course")[1]) == len(all_exercises())
