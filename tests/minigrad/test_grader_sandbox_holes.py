"""The holes a red team found in the checker's sandbox, one test per class, each closed: the
child cannot start or reach another process, arm signals, leave IPC objects, use root's powers
or change the system; modules from the course or current folder are refused; signals during
the clean-up leave nothing behind; a learner's text cannot forge a line of the report.

Each system call is made with arguments the kernel rejects (a bad pointer, an unknown flag):
if the call reached the kernel the error would be EFAULT, EINVAL, EBADF ..., and nothing would
happen; the sandbox must answer EPERM (ENOTTY for ioctl, ENOSYS for the io_uring calls)."""
import errno
import os
import platform
import signal
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from pathlib import Path

import pytest

from minigrad.exercises import check_file, checker, child, find, integrity, report, sandbox

REPO = Path(__file__).parent.parent.parent
FILTERED = sys.platform.startswith("linux") and platform.machine() == "x86_64"
ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
filtered = pytest.mark.skipif(not FILTERED, reason="the seccomp filter is Linux x86-64 only")

# (what it is, x86-64 number, arguments, errno expected); "PPID" and "FD" are filled in by the child
CALLS = [
    ("execve", 59, [1, 1, 1], "EPERM"),
    ("execveat", 322, [-1, 1, 1, 1, 0], "EPERM"),
    ("fork", 57, [], "EPERM"),
    ("clone without CLONE_THREAD", 56, [0x800, 0, 0, 0, 0], "EPERM"),  # CLONE_SIGHAND, no VM
    ("socket", 41, [-1, 0, 0], "EPERM"),
    ("socketpair", 53, [-1, 0, 0, 1], "EPERM"),
    ("connect", 42, [-1, 1, 1], "EPERM"),
    ("bind", 49, [-1, 1, 1], "EPERM"),
    ("kill", 62, ["PPID", 0], "EPERM"),
    ("ptrace", 101, [2, "PPID", 0, 0], "EPERM"),                       # PTRACE_PEEKDATA
    ("process_vm_readv", 310, ["PPID", 1, 1, 1, 1, 0], "EPERM"),
    ("prlimit64 on the checker", 302, ["PPID", 7, 0, 1], "EPERM"),    # RLIMIT_NOFILE
    ("fcntl F_SETOWN", 72, ["FD", 8, "PPID"], "EPERM"),
    ("fcntl F_SETSIG", 72, ["FD", 10, 99999], "EPERM"),
    ("fcntl F_SETOWN_EX", 72, ["FD", 15, 1], "EPERM"),
    ("fcntl F_SETFL O_ASYNC", 72, ["FD", 4, 0o20000], "EPERM"),
    ("ioctl FIOASYNC", 16, ["FD", 0x5452, 1], "ENOTTY"),
    ("ioctl FIOSETOWN", 16, ["FD", 0x8901, 1], "ENOTTY"),
    ("ioctl FS_IOC_SETFLAGS", 16, ["FD", 0x40086602, 1], "ENOTTY"),
    ("ioctl TIOCSTI", 16, ["FD", 0x5412, 1], "ENOTTY"),
    ("prctl PR_SET_PDEATHSIG", 157, [1, 99999, 0, 0, 0], "EPERM"),
    ("prctl PR_SET_DUMPABLE", 157, [4, 7, 0, 0, 0], "EPERM"),
    ("openat for writing", 257, [-100, b"/nonexistent-minigrad/x", 0o101, 0o600], "EPERM"),
    ("shmget", 29, [0x7EAD0000, 1 << 62, 0], "EPERM"),
    ("msgget", 68, [0x7EAD0000, 0], "EPERM"),
    ("semget", 64, [0x7EAD0000, -1, 0], "EPERM"),
    ("mount", 165, [1, 1, 1, 0, 1], "EPERM"),
    ("umount2", 166, [1, 0], "EPERM"),
    ("open_tree", 428, [-1, 1, 0], "EPERM"),
    ("move_mount", 429, [-1, 1, -1, 1, 0], "EPERM"),
    ("fsopen", 430, [1, 0], "EPERM"),
    ("fsconfig", 431, [-1, 0, 0, 0, 0], "EPERM"),
    ("fsmount", 432, [-1, 0, 0], "EPERM"),
    ("mount_setattr", 442, [-1, 1, 0, 1, 0], "EPERM"),
    ("pivot_root", 155, [1, 1], "EPERM"),
    ("chroot", 161, [1], "EPERM"),
    ("mknod", 133, [1, 0, 0], "EPERM"),
    ("unshare", 272, [0xFFFFFFFF], "EPERM"),
    ("setns", 308, [-1, 0], "EPERM"),
    ("acct", 163, [1], "EPERM"),
    ("reboot", 169, [0, 0, 0, 0], "EPERM"),
    ("sethostname", 170, [1, 1], "EPERM"),
    ("setdomainname", 171, [1, 1], "EPERM"),
    ("init_module", 175, [1, 1, 1], "EPERM"),
    ("finit_module", 313, [-1, 1, 0], "EPERM"),
    ("delete_module", 176, [1, 0], "EPERM"),
    ("kexec_file_load", 320, [-1, -1, 0, 1, 0xFFFFFFFF], "EPERM"),
    ("swapon", 167, [1, 0], "EPERM"),
    ("swapoff", 168, [1], "EPERM"),
    ("settimeofday", 164, [1, 0], "EPERM"),
    ("clock_settime", 227, [0, 1], "EPERM"),
    ("clock_adjtime", 305, [0, 1], "EPERM"),
    ("adjtimex", 159, [1], "EPERM"),
    ("iopl", 172, [99], "EPERM"),
    ("ioperm", 173, [0xFFFFFFFF, 1, 1], "EPERM"),
    ("perf_event_open", 298, [1, 0, -1, -1, 0], "EPERM"),
    ("keyctl", 250, [0xFFFF, 0, 0, 0, 0], "EPERM"),
    ("add_key", 248, [1, 1, 1, 1, 0], "EPERM"),
    ("request_key", 249, [1, 1, 1, 0], "EPERM"),
    ("bpf", 321, [0xFFFF, 0, 0], "EPERM"),
    ("userfaultfd", 323, [0xFFFFFFFF], "EPERM"),
    ("pidfd_open", 434, [-1, 0], "EPERM"),
    ("pidfd_send_signal", 424, [-1, 0, 0, 0], "EPERM"),
    ("pidfd_getfd", 438, [-1, 0, 0], "EPERM"),
    ("io_uring_setup", 425, [0, 1], "ENOSYS"),
    ("a system call Linux does not have yet", 999, [], "EPERM"),
]

PROBE = """import ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
CALLS = {calls!r}
def mul_vjp(g, a, b):
    fd = os.open(__file__, os.O_RDONLY)
    wrong = []
    for name, nr, args, want in CALLS:
        args = [os.getppid() if x == "PPID" else fd if x == "FD" else x for x in args]
        args = [x if isinstance(x, bytes) else ctypes.c_long(x) for x in args]
        ctypes.set_errno(0)
        got = libc.syscall(ctypes.c_long(nr), *args)
        code = errno.errorcode.get(ctypes.get_errno(), str(ctypes.get_errno()))
        if got != -1 or code != want:
            wrong.append(f"{{name}}={{got}}/{{code}}")
    raise RuntimeError("WRONG[" + ",".join(wrong) + "]")
"""


def _check(folder: Path, source: str, name: str = "mul"):
    e = find(name)
    folder.mkdir(exist_ok=True)
    (folder / e.file).write_text(source)
    rep = check_file(e, folder)
    return rep, report.full(rep)


def _between(text: str, start: str, end: str) -> str:
    assert start in text, text
    return text.split(start, 1)[1].split(end, 1)[0]


# ---- system calls (findings 1, 2, 4, 5, 6, 7) ------------------------------------------------

@filtered
def test_every_dangerous_system_call_fails_in_the_child(tmp_path):
    rep, text = _check(tmp_path, PROBE.format(calls=CALLS))
    assert rep.status == "failing"
    assert _between(text.replace("\n         ", ""), "WRONG[", "]") == ""


@filtered
def test_the_allow_list_leaves_ordinary_python_alone(tmp_path):
    """Threads, sleeping, imports of modules not loaded yet, reading files and folders, its
    own limits, formatting a traceback and NumPy all still work under the filter."""
    rep, text = _check(tmp_path, (
        "import os, threading, time, traceback\nimport numpy as np\n"
        "def tanh_vjp(g, x):\n"
        "    import fractions, decimal, statistics, resource\n"
        "    box = []\n"
        "    t = threading.Thread(target=lambda: box.append(np.linalg.inv(np.eye(3)).sum()))\n"
        "    t.start(); t.join(); time.sleep(0.01)\n"
        "    listing = os.listdir('.')\n"
        "    open(__file__).read()\n"
        "    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))\n"
        "    try:\n        1 / 0\n    except ZeroDivisionError:\n"
        "        shown = traceback.format_exc()\n"
        "    assert box == [3.0] and '02_tanh.py' in listing and 'ZeroDivisionError' in shown\n"
        "    return g * (1 - np.tanh(x) ** 2)\n"), name="tanh")
    assert rep.status == "done", text


@filtered
def test_the_child_has_no_capabilities_no_new_privileges_and_a_filter(tmp_path):
    rep, text = _check(tmp_path, (
        "def mul_vjp(g, a, b):\n"
        "    st = dict(l.split(':', 1) for l in open('/proc/self/status'))\n"
        "    raise RuntimeError('STATUS[' + ' '.join(st[k].split()[0] for k in ('CapEff', 'CapPrm',"
        " 'CapBnd', 'NoNewPrivs', 'Seccomp', 'Uid', 'Gid')) + ']')\n"))
    cap_eff, cap_prm, cap_bnd, nnp, seccomp, uid, gid = _between(text, "STATUS[", "]").split()
    assert nnp == "1" and seccomp == "2"
    if ROOT:  # root's child gives up every capability, even the bounding set, and root itself
        assert cap_eff == cap_prm == cap_bnd == "0" * 16  # when every user can read Python
        readable = sandbox._readable_by_all([Path(os.__file__).parent,
                                             *child.allowed_path(tmp_path)])
        assert (uid, gid) == ((str(sandbox.NOBODY),) * 2 if readable else ("0", "0"))
    else:
        assert uid == str(os.getuid())


def test_only_a_python_every_user_can_read_is_run_as_nobody(tmp_path):
    (tmp_path / "open").mkdir(mode=0o755)
    (tmp_path / "open").chmod(0o755)
    tmp_path.chmod(0o711)
    assert sandbox._readable_by_all([tmp_path / "open"]) == all(
        os.stat(p).st_mode & 0o001 for p in tmp_path.parents)
    tmp_path.chmod(0o700)  # a folder on the way that others cannot pass, as /root
    assert not sandbox._readable_by_all([tmp_path / "open"])
    tmp_path.chmod(0o755)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc is Linux's")
def test_the_child_cannot_read_the_checkers_memory_or_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("MINIGRAD_TMUX_LIKE_SECRET", "/tmp/tmux-0/default,1,0")
    rep, text = _check(tmp_path, (
        "import os\ndef mul_vjp(g, a, b):\n    got = []\n"
        "    for what in ('environ', 'mem', 'maps'):\n"
        "        try:\n            open(f'/proc/{os.getppid()}/{what}', 'rb').read(1)\n"
        "            got.append(what)\n        except OSError:\n            pass\n"
        "    raise RuntimeError('READ[' + ','.join(got) + ']')\n"))
    assert _between(text, "READ[", "]") == ""


def test_the_child_has_at_most_1_gib_of_memory(tmp_path):
    rep, text = _check(tmp_path, (
        "import resource\ndef mul_vjp(g, a, b):\n"
        "    raise RuntimeError(f'AS[{resource.getrlimit(resource.RLIMIT_AS)[1]}]')\n"))
    assert 0 < int(_between(text, "AS[", "]")) <= 1 << 30


# ---- the course folder and the current folder (finding 3) ------------------------------------

def test_a_module_loaded_from_the_course_folder_is_refused_whatever_its_name(tmp_path,
                                                                            monkeypatch):
    course = tmp_path / "course"
    (course / "helpers_pkg").mkdir(parents=True)
    (course / "helpers_pkg" / "__init__.py").write_text("X = 1\n")
    (course / "01_mul.py").write_text("def mul_vjp(g, a, b):\n    return g, g\n")
    monkeypatch.syspath_prepend(str(course))
    monkeypatch.delitem(sys.modules, "helpers_pkg", raising=False)
    __import__("helpers_pkg")
    try:
        rep = check_file(find("mul"), course)
        line = report.first_problem(rep)
        assert rep.status == "broken" and "\n" not in line
        assert line.startswith("refusing to check: the checker imported helpers_pkg from ")
        monkeypatch.chdir(course)  # also as the current folder with --dir elsewhere
        rep = check_file(find("mul"), tmp_path)
        assert "the checker imported helpers_pkg" in report.first_problem(rep)
    finally:
        del sys.modules["helpers_pkg"]


JSON_PACKAGE = """# a course-folder package named like a stdlib module the checker imports
import importlib.machinery, importlib.util, os, sys
_course = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_spec = importlib.machinery.PathFinder.find_spec(
    "json", [p for p in sys.path if os.path.abspath(p or ".") != _course])
__path__ = list(_spec.submodule_search_locations)
_real = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_real)
globals().update({k: v for k, v in vars(_real).items()
                  if k not in ("__file__", "__spec__", "__loader__", "__path__")})
import minigrad.exercises.diagnose as _d
_d.TOL = 1e300  # every gradient now "passes"
"""


def test_a_json_package_in_the_folder_python_is_run_from_is_refused(tmp_path):
    (tmp_path / "json").mkdir()
    (tmp_path / "json" / "__init__.py").write_text(JSON_PACKAGE)
    (tmp_path / "01_mul.py").write_text("def mul_vjp(g, a, b):\n    return g, g\n")
    proc = subprocess.run([sys.executable, "-m", "minigrad.exercises", "check", "mul"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1 and "done" not in proc.stdout.splitlines()[-1]
    assert "refusing to check: the checker imported json from" in proc.stdout
    assert "Traceback" not in proc.stdout + proc.stderr


def test_python_m_imports_nothing_more_from_the_current_folder(tmp_path):
    """`python -m` puts the current folder first on the path; the command line takes it off
    before it imports anything else (what was imported before it is caught by the refusal)."""
    (tmp_path / "argparse.py").write_text("raise SystemExit('shadowed')\n")
    proc = subprocess.run([sys.executable, "-m", "minigrad.exercises", "hint", "mul"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "shadowed" not in proc.stderr, proc.stderr
    assert proc.stdout.startswith("mul, hint 1 of 2")


# ---- signals (finding 4) ---------------------------------------------------------------------

@pytest.mark.skipif(not hasattr(signal, "pthread_sigmask"), reason="no signal masks here")
def test_signals_during_the_clean_up_leave_no_private_folder(tmp_path):
    course, tmp = tmp_path / "course", tmp_path / "tmp"
    course.mkdir()
    tmp.mkdir()
    (course / "01_mul.py").write_text("import time\ndef mul_vjp(g, a, b):\n    time.sleep(60)\n")
    proc = subprocess.Popen([sys.executable, "-m", "minigrad.exercises", "check", "mul",
                             "--dir", str(course)], cwd=REPO, env=dict(os.environ, TMPDIR=str(tmp)),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for _ in range(600):  # until the child's private folder exists
        if any(tmp.iterdir()):
            break
        time.sleep(0.05)
    time.sleep(0.5)
    for i in range(300):  # a storm of SIGTERM and SIGINT, before, during and after the clean-up
        try:
            os.kill(proc.pid, signal.SIGTERM if i % 2 else signal.SIGINT)
        except ProcessLookupError:
            break
        time.sleep(0.002)
    out, err = proc.communicate(timeout=60)
    assert list(tmp.iterdir()) == []
    # stopped once, in order; a signal after main() returned may still end the exit by signal
    assert proc.returncode in (130, 143, -signal.SIGINT, -signal.SIGTERM), err
    assert err == "stopped: the check was interrupted, nothing was judged\n" and out == ""


@pytest.mark.skipif(not hasattr(signal, "pthread_sigmask"), reason="no signal masks here")
def test_a_signal_that_arrives_during_the_clean_up_waits_for_it(tmp_path, monkeypatch):
    """SIGTERM (as the command line handles it: KeyboardInterrupt) just as the child is being
    killed: it is raised only after the child is dead and the private folder removed."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    kill = child._kill_session

    def kill_then_signal(proc):
        kill(proc)
        signal.pthread_kill(threading.main_thread().ident, signal.SIGTERM)

    def stop(signum, frame):
        raise KeyboardInterrupt
    monkeypatch.setattr(child, "_kill_session", kill_then_signal)
    previous = signal.signal(signal.SIGTERM, stop)
    e = find("tanh")
    try:
        with pytest.raises(KeyboardInterrupt):
            child.run(b"def tanh_vjp(g, x):\n    return g\n", e.file, e.function,
                      checker._cases(e), 10.0, child.allowed_path(tmp_path))
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert list(tmp_path.iterdir()) == [] and not child.LIVE


# ---- the in-place check (finding 10) ---------------------------------------------------------

def test_the_checker_itself_tells_that_a_vjp_changed_its_inputs(tmp_path):
    """The child sends the inputs back as they are after the call and the checker compares
    their bytes with what it sent, so patching NumPy in the child hides nothing."""
    rep, text = _check(tmp_path, (
        "import numpy as np\ndef tanh_vjp(g, x):\n    dx = g * (1 - np.tanh(x) ** 2)\n"
        "    x *= 0\n    g[...] = 0\n    np.array_equal = lambda *a, **k: True\n"
        "    return dx\n"), "tanh")
    assert rep.status == "failing"
    assert all(c.side_effects and c.results and all(r.ok for r in c.results) for c in rep.cases)
    assert "your VJP changed x in place" in text and "your VJP changed g in place" in text


# ---- text (findings 8, 9) --------------------------------------------------------------------

def test_printable_maps_everything_that_could_forge_or_break_a_line():
    bad = "\x1b\r\x07\t\udcff\u00a0\u2028\u2029\u202e\u2066\u200b\ufeff\ue000\x85\u3000"
    assert integrity.printable("a" + bad + "b\nc d") == "a" + "?" * len(bad) + "b\nc d"
    assert integrity.printable("x" * 5000) == "x" * 2000
    assert integrity.printable("ok: ∂L/∂x ≤ 1e-5, ⊙, ᵀ, 中文") == "ok: ∂L/∂x ≤ 1e-5, ⊙, ᵀ, 中文"


def test_wrap_keeps_no_placeholder_and_adds_no_space():
    lines = report.wrap("see `a b` and \ue000x\u00a0y " * 10, "")
    assert all("\ue000" not in line and "\u00a0" not in line for line in lines)
    assert "`a b`" in " ".join(lines) and "?x?y" in " ".join(lines)


def test_a_learners_text_cannot_fake_a_verdict_or_break_the_report(tmp_path):
    fake = "mul: all 4 inputs pass -- done."
    rep, text = _check(tmp_path, (
        f"def mul_vjp(g, a, b):\n    raise ValueError('\\udcff oops ' + '\\u00a0' * 71 + "
        f"{fake!r}.replace(' ', '\\u00a0') + '\\u202e\\x1b[1A\\r' + {fake!r})\n"))
    assert rep.status == "failing"
    text.encode("utf-8")  # strict: no lone surrogate reaches the terminal
    lines = text.splitlines()
    assert not any(fake in line for line in lines)  # the control codes became "?", not a line
    assert not any(c in text for c in "\u00a0\u202e\x1b\r")
    report.summary([rep]).encode("utf-8")


def test_a_file_name_with_escape_codes_is_shown_harmlessly(tmp_path):
    name = "json.\x1b[2K\x1b[1Amul: all 4 inputs pass -- done.\x1b[8m.py"
    (tmp_path / name).write_text("")
    (tmp_path / "01_mul.py").write_text("def mul_vjp(g, a, b):\n    return g, g\n")
    rep = check_file(find("mul"), tmp_path)
    line = report.first_problem(rep)
    assert rep.status == "broken" and "would shadow the library json" in line
    assert "\x1b" not in line and "\x1b" not in report.full(rep)


# ---- warnings (finding 11) -------------------------------------------------------------------

def test_huge_gradients_are_diagnosed_without_numpy_warnings(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a RuntimeWarning would fail the check here
        rep, text = _check(tmp_path, "import numpy as np\ndef mul_vjp(g, a, b):\n"
                                     "    return np.full(a.shape, 1e308), np.full(b.shape, -1e308)\n")
    assert rep.status == "failing" and "Warning" not in text
