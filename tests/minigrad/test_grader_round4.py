"""Issue 33, the exercise checker: it reads nothing the learner could not, touches nothing it
did not start, refuses to grade with anything changed that decides a verdict, and answers
signals, broken catalogs and odd outputs in one line."""
import ctypes
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from minigrad.exercises import check_file, find, report

pytestmark = pytest.mark.slow
TANH = "import numpy as np\ndef tanh_vjp(g, x):\n    return g * (1 - np.tanh(x) ** 2)\n"
SECRET = "root:SECRET-HASH-a1b2c3:19000:0:99999:7:::"


# ---- High 1: the learner's file is read as the learner would read it --------------------------

def _secret(tmp_path) -> Path:
    """A file outside the course folder that only its owner may read (as root: a stand-in
    for /etc/shadow, which the child, ``nobody``, cannot read)."""
    secret = tmp_path / "shadow"
    secret.write_text(SECRET + "\n")
    secret.chmod(0o600)
    return secret


@pytest.mark.parametrize("link", ["symlink", "dangling", "hard link"])
def test_no_byte_of_a_linked_file_reaches_the_report(tmp_path, link):
    course = tmp_path / "course"
    course.mkdir()
    target, learner = _secret(tmp_path), course / "02_tanh.py"
    if link == "hard link":
        if os.geteuid() != 0:  # CI runs as root: there this case must run
            assert os.environ.get("CI") != "true", "CI=true runs as root; this case needs root"
            pytest.skip("only root reads a hard link the learner could not (tested as root)")
        os.link(target, learner)
    else:
        learner.symlink_to(target if link == "symlink" else tmp_path / "nowhere")
    rep = check_file(find("tanh"), course)
    text = report.full(rep)
    assert rep.status == "broken" and "SECRET" not in text and "root:" not in text
    assert ("it has other names (hard links)" if link == "hard link" else
            "it is a symbolic link: put the file itself in the folder") in text


# ---- High 2: used as a library, the check leaves the caller as it was --------------------------

def _flags() -> tuple:
    """(dumpable, child subreaper) of this process."""
    libc, was = ctypes.CDLL(None), ctypes.c_int(0)
    libc.prctl(37, ctypes.byref(was), 0, 0, 0)
    return libc.prctl(3, 0, 0, 0, 0), was.value


def _sandboxes() -> list:
    pids = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if b"sandbox.py" in f.read():
                    pids.append(pid)
        except OSError:
            pass
    return pids


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl and /proc: Linux")
def test_the_callers_own_processes_and_flags_survive_a_check(tmp_path):
    course = tmp_path / "course"
    course.mkdir()
    (course / "02_tanh.py").write_text("import time\n" + TANH.replace(
        "    return", "    time.sleep(0.3)\n    return"))
    before = _flags()
    early = subprocess.Popen(["sh", "-c", "sleep 2; exit 1"])  # started before the check
    result, late = {}, None
    thread = threading.Thread(target=lambda: result.update(rep=check_file(find("tanh"), course)))
    thread.start()
    for _ in range(600):  # until the sandbox runs: a process started now is "since" it
        if _sandboxes():
            break
        time.sleep(0.01)
    late = subprocess.Popen(["sh", "-c", "sleep 2; exit 3"], start_new_session=True)
    thread.join()
    assert result["rep"].status == "done"
    assert early.wait(timeout=30) == 1 and late.wait(timeout=30) == 3  # not killed, not reaped
    assert _flags() == before


# ---- 9: the command the stubs give runs nothing from the current folder ----------------------

def test_the_stubs_command_imports_nothing_from_a_shadowing_course_folder(tmp_path):
    """`python -I` (every supported Python; `-P` is 3.11+) puts no current folder on the
    path: a learner's numpy.py or minigrad/ there never runs, and the checker refuses the
    folder in one line."""
    from minigrad.exercises import STUBS, all_exercises
    for e in all_exercises():
        assert "python -I -m minigrad.exercises check " in (STUBS / e.file).read_text()
    (tmp_path / "02_tanh.py").write_text(TANH)
    (tmp_path / "numpy.py").write_text("print('LEARNER RAN')\nimport os\nos._exit(0)\n")
    (tmp_path / "minigrad").mkdir()
    (tmp_path / "minigrad" / "__init__.py").write_text("print('tanh: all 3 inputs pass -- "
                                                       "done.')\nraise SystemExit(0)\n")
    run = subprocess.run([sys.executable, "-I", "-m", "minigrad.exercises", "check", "tanh"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert "LEARNER RAN" not in run.stdout + run.stderr and "done." not in run.stdout
    assert run.returncode == 1 and run.stdout.count("\n") <= 3, run.stdout + run.stderr
    assert "would shadow the library" in run.stdout


# ---- 8: the digests cover what decides a verdict ---------------------------------------------

@pytest.mark.parametrize("name, old, new", [
    ("../gradcheck.py", b"def numerical_grad(", b"def _unused(fn, *a):\n    pass\n\n\n"
                                                b"def numerical_grad("),
    ("../ops.py", b"def tanh(", b"def _tanh_unused(x):\n    pass\n\n\ndef tanh("),
    ("../i18n.py", b"text = _catalog(", b"text = 'pass' or _catalog("),
    ("../locale/zh/LC_MESSAGES/minigrad.mo", "通过".encode(), "FAIL".encode() + b"\0\0")])
def test_a_changed_numeric_op_or_catalog_is_refused(tmp_path, name, old, new):
    """On a copy of the package: the numerics the verdict is computed with, an op a forward
    calls, the translator and the catalog (通过 for FAIL) are digested with the checker."""
    import shutil
    from minigrad.exercises import integrity
    package = Path(integrity.__file__).parent.parent
    shutil.copytree(package, tmp_path / "minigrad", ignore=shutil.ignore_patterns("__pycache__"))
    root = tmp_path / "minigrad" / "exercises"
    assert integrity.problem(root) is None
    changed = root / name
    data = changed.read_bytes()
    assert old in data
    changed.write_bytes(data.replace(old, new, 1))
    line = integrity.problem(root)
    assert "\n" not in line and f"({name} in " in line and integrity.REGENERATE in line


# ---- Low: one line instead of a traceback, a wrong word or a folder left behind --------------

HANG = "def tanh_vjp(g, x):\n    while True:\n        pass\n"


def _cli(*args, cwd=None, env=None, **kwargs):
    return subprocess.Popen([sys.executable, "-m", "minigrad.exercises", *args], cwd=cwd,
                            env={**os.environ, **(env or {})}, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kwargs)


@pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="POSIX signals")
@pytest.mark.parametrize("name", ["SIGHUP", "SIGQUIT", "SIGUSR1", "SIGALRM"])
def test_a_stopping_signal_ends_the_check_and_leaves_no_folder(tmp_path, name):
    course, temp = tmp_path / "course", tmp_path / "tmp"
    course.mkdir()
    temp.mkdir()
    (course / "02_tanh.py").write_text(HANG)
    proc = _cli("check", "tanh", "--dir", str(course), env={"TMPDIR": str(temp)})
    for _ in range(600):  # until the check's private folder exists
        if list(temp.iterdir()):
            break
        time.sleep(0.02)
    time.sleep(0.3)
    proc.send_signal(getattr(signal, name))
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 128 + getattr(signal, name)
    assert err == "stopped: the check was interrupted, nothing was judged\n" and out == ""
    assert list(temp.iterdir()) == []


@pytest.mark.parametrize("module", ["minigrad.exercises.checker", "concurrent.futures"])
def test_ctrl_c_while_the_checker_starts_prints_no_traceback(module):
    """A KeyboardInterrupt raised by the import of ``module`` (in the package, then in the
    command line's own imports), as `python -m` runs it."""
    code = ("import runpy, sys\nclass Stop:\n    def find_spec(self, name, path=None, target=None):"
            f"\n        if name == {module!r}:\n            raise KeyboardInterrupt\n"
            "sys.meta_path.insert(0, Stop())\nsys.argv = ['-m', 'list']\n"
            "runpy._run_module_as_main('minigrad.exercises')\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 130 and run.stderr == "" and run.stdout == ""


@pytest.mark.parametrize("command", [("minigrad.exercises", "list"), ("minigrad.gradcheck",)])
@pytest.mark.parametrize("stdout", ["/dev/full", "closed"])
def test_an_unwritable_stdout_is_one_line_or_quiet(tmp_path, command, stdout):
    if not os.path.exists("/dev/full"):  # every Linux has it: under CI=true it must be there
        assert os.environ.get("CI") != "true", "CI=true on Linux: /dev/full must exist"
        pytest.skip("no /dev/full here")
    args = [sys.executable, "-m", *command] + (["--dir", str(tmp_path)] if len(command) > 1
                                               else [])
    if stdout == "closed":
        run = subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                             timeout=120, pass_fds=(), preexec_fn=lambda: os.close(1))
        assert run.stderr == "" and run.returncode == 0
        return
    with open("/dev/full", "w") as full:
        run = subprocess.run(args, stdout=full, stderr=subprocess.PIPE, text=True, timeout=120)
    assert run.returncode == 1 and "Traceback" not in run.stderr
    assert run.stderr == "error: the output could not be written: No space left on device\n"


@pytest.mark.parametrize("body, what", [("'hello'", "str"), ("{'c': 1}", "dict"),
                                        ("(x for x in [1])", "generator")])
def test_a_forward_returning_no_array_says_what_it_returned(tmp_path, body, what):
    e = find("forward_read")
    (tmp_path / e.file).write_text(f"def {e.function}(*args, **kwargs):\n    return {body}\n")
    text = report.full(check_file(e, tmp_path))
    assert "no gradient" not in text and "NotAnArray" not in text
    assert "c          FAIL  no output\n" in text
    assert f"→ c is a {what}, not an array of numbers: return an array of shape" in text


def test_a_vjp_returning_a_generator_is_named_not_an_internal_class(tmp_path):
    (tmp_path / "01_mul.py").write_text("def mul_vjp(g, a, b):\n    return (x for x in [1])\n")
    text = report.full(check_file(find("mul"), tmp_path))
    assert "NotAnArray" not in text
    assert "returned a generator; return a tuple of 2 gradients (da, db)" in text


@pytest.mark.parametrize("data", ["def tanh_vjp(g, x):\n    return g\n".encode("utf-16"),
                                  b"def tanh_vjp(g, x):\n    return g\0\n"])
def test_a_utf16_or_nul_file_is_named_as_such(tmp_path, data):
    (tmp_path / "02_tanh.py").write_bytes(data)
    rep = check_file(find("tanh"), tmp_path)
    assert rep.status == "broken" and "line None" not in rep.message
    assert rep.message == ("cannot read 02_tanh.py: it holds NUL bytes (saved as UTF-16?): save "
                           "it as UTF-8 text")


def test_a_syntax_error_without_a_line_names_no_line():
    from minigrad.exercises.sandbox import where
    err = SyntaxError("source code string cannot contain null bytes")
    assert where(err, None) == "SyntaxError: source code string cannot contain null bytes"


def test_dir_naming_a_file_or_a_deleted_current_folder_is_one_line(tmp_path):
    (tmp_path / "notes.txt").write_text("")
    proc = _cli("check", "tanh", "--dir", str(tmp_path / "notes.txt"))
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 2 and out == ""
    assert err == (f"error: --dir {tmp_path / 'notes.txt'} is a file, not a folder: name the "
                   "folder of your exercise files\n")
    gone = tmp_path / "gone"
    gone.mkdir()
    proc = _cli("check", "tanh", cwd=gone, preexec_fn=lambda: os.rmdir(gone))
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 2 and out == ""
    assert err == ("error: the current folder no longer exists: cd to your exercise folder, or "
                   "give --dir DIR\n")


def test_chinese_under_an_ascii_output_is_english_not_question_marks(tmp_path):
    (tmp_path / "02_tanh.py").write_text(TANH)
    proc = _cli("check", "tanh", "--dir", str(tmp_path),
                env={"LANGUAGE": "zh", "PYTHONIOENCODING": "ascii"})
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0 and "??" not in out
    assert out.splitlines()[-1] == "tanh: all 3 inputs pass -- done."
