"""Grading you can trust: what a learner's file tries, class by class, and why none of it
changes a verdict, hangs the checker or outlives the check. (The checker's own files are
covered by ``test_grader_integrity.py``.)"""
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import tracemalloc
import uuid
from pathlib import Path

import pytest

from minigrad.exercises import check_file, checker, child, find, report

REPO = Path(__file__).parent.parent.parent
FILTERED = sys.platform.startswith("linux") and platform.machine() == "x86_64"  # seccomp here
WRONG_TANH = "import numpy as np\ndef tanh_vjp(g, x):\n    return g * 0.5\n"
CHANNEL = "import sys, struct, json, os\nmain = sys.modules['__main__']\n"


def _check(tmp_path, source, name="tanh"):
    e = find(name)
    (tmp_path / e.file).write_text(source)
    rep = check_file(e, tmp_path)
    text = report.full(rep)
    assert "Traceback" not in text
    return rep, text


def _one_line(rep) -> str:
    line = report.first_problem(rep)
    assert line and "\n" not in line
    return line


def _alive(marker: str) -> list:
    """Processes (other than this one) whose command line holds ``marker``."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read()
            with open(f"/proc/{pid}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker.encode() in cmd and int(pid) != os.getpid() and state != "Z":
            found.append(int(pid))
    return found


# ---- isolation -------------------------------------------------------------------------------

def test_the_child_is_isolated_limited_and_in_a_private_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("MINIGRAD_SECRET", "do not pass me on")
    rep, _ = _check(tmp_path, "import os, sys, resource\ndef tanh_vjp(g, x):\n"
                    "    r = resource\n"
                    "    raise RuntimeError(repr((sorted(os.environ), sys.flags.isolated,"
                    " sys.flags.no_site, sys.path, os.getcwd(), oct(os.stat('.').st_mode & 0o777),"
                    " [r.getrlimit(k)[1] for k in (r.RLIMIT_FSIZE, r.RLIMIT_NPROC, r.RLIMIT_CPU,"
                    " r.RLIMIT_AS)], os.getsid(0) == os.getpid())))\n")
    env, isolated, no_site, path, cwd, mode, limits, leader = eval(
        rep.cases[0].error.split("RuntimeError: ", 1)[1].splitlines()[0])
    assert set(env) <= {"PATH", "LD_LIBRARY_PATH", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS",
                        "MKL_NUM_THREADS", "LC_CTYPE"}
    assert isolated == 1 and no_site == 1 and leader
    allowed = child.allowed_path(tmp_path)  # minigrad's folder and NumPy's, then the stdlib
    assert path[:len(allowed)] == allowed and str(tmp_path) not in path and "" not in path
    assert all(p.startswith(sys.base_prefix) for p in path[len(allowed):])
    assert Path(cwd).name.startswith("minigrad-check-") and mode == "0o700"
    assert Path(cwd).parent == Path(tempfile.gettempdir()).resolve()
    fsize, nproc, cpu, memory = limits
    assert fsize == 0 and nproc == 0 and 0 < cpu < 10_000 and 0 < memory <= 1 << 30
    assert not Path(cwd).exists()  # the private folder is gone after the check


def test_a_module_in_the_course_folder_shadowing_a_library_is_refused_in_one_line(tmp_path):
    (tmp_path / "02_tanh.py").write_text(WRONG_TANH)
    (tmp_path / "numpy_vjps.py").write_text("")  # named like numpy, shadows nothing
    (tmp_path / "notes").mkdir()
    assert check_file(find("tanh"), tmp_path).status == "failing"
    for shadow in ["numpy.py", "types.py", "minigrad/__init__.py"]:
        (tmp_path / shadow).parent.mkdir(exist_ok=True)
        (tmp_path / shadow).write_text("raise SystemExit('shadowed')\n")
        rep = check_file(find("tanh"), tmp_path)
        module = shadow.split("/")[0].removesuffix(".py")
        assert rep.status == "broken" and f"would shadow the library {module}" in _one_line(rep)
        (tmp_path / shadow).unlink()


def test_even_unrefused_a_shadow_is_never_imported_by_the_child(tmp_path, monkeypatch):
    """The refusal is for the learner; isolation alone already keeps the course folder and
    the current folder off the child's path."""
    (tmp_path / "numpy.py").write_text("raise SystemExit('shadowed')\n")
    monkeypatch.chdir(tmp_path)
    e = find("tanh")
    source = b"import numpy as np\ndef tanh_vjp(g, x):\n    return g * (1 - np.tanh(x) ** 2)\n"
    cases = checker._cases(e)
    outcomes, trouble = child.run(source, e.file, e.function, cases, 10.0,
                                  child.allowed_path(tmp_path))
    assert trouble is None and outcomes[0] == {"loaded": True} and len(outcomes) == len(cases) + 1
    assert str(tmp_path) not in child.allowed_path(tmp_path)


# ---- the learner's file ----------------------------------------------------------------------

@pytest.mark.skipif(not FILTERED, reason="the write filter is Linux x86-64 only")
def test_a_file_that_deletes_or_rewrites_itself_fails_and_stays_as_it_was(tmp_path):
    source = (f"import os\nfor f in (lambda: os.remove({str(tmp_path / '02_tanh.py')!r}),\n"
              f"          lambda: open({str(tmp_path / '02_tanh.py')!r}, 'w'),\n"
              f"          lambda: os.remove(__file__)):\n"
              f"    try:\n        f()\n    except OSError:\n        pass\n" + WRONG_TANH)
    rep, _ = _check(tmp_path, source)
    assert rep.status == "failing" and "0 of" in report.full(rep).splitlines()[-1]
    assert (tmp_path / "02_tanh.py").read_text() == source


@pytest.mark.parametrize("change", ["rewrite", "delete"])
def test_a_file_that_changes_during_the_check_is_not_judged(tmp_path, change):
    path = tmp_path / "02_tanh.py"
    path.write_text("import time\ntime.sleep(1.0)\n" + WRONG_TANH)

    def meanwhile():  # once the child runs, as an editor saving the file would
        for _ in range(1200):
            if [p for p in _alive("sandbox.py") if _parent(p) == os.getpid()]:
                break
            time.sleep(0.05)
        path.write_text("x = 1\n") if change == "rewrite" else path.unlink()
    later = threading.Thread(target=meanwhile)
    later.start()
    rep = check_file(find("tanh"), tmp_path)
    later.join()
    assert rep.status == "broken"
    assert "02_tanh.py changed or went away while it was being checked" in _one_line(rep)


def test_a_file_that_cannot_be_read_is_answered_in_one_line_without_blocking(tmp_path):
    os.mkfifo(tmp_path / "02_tanh.py")          # opening a FIFO to read would wait forever
    (tmp_path / "03_sigmoid.py").mkdir()
    (tmp_path / "05_matmul.py").write_bytes(b"#" * (2 << 20))
    lines = {n: _one_line(check_file(find(n), tmp_path)) for n in ("tanh", "sigmoid", "matmul")}
    assert lines["tanh"] == "cannot read 02_tanh.py: it is not a regular file"
    assert lines["sigmoid"].startswith("cannot read 03_sigmoid.py: ")
    assert lines["matmul"] == "cannot read 05_matmul.py: it is larger than 1024 KiB"


# ---- the channel: flooding, bombs, malformed frames ------------------------------------------

FLOODS = {
    "frame files": ("import os\ndef tanh_vjp(g, x):\n    n = 0\n    while True:\n"
                    "        n += 1\n        try:\n            open(f'frame-{n}.npz', 'wb').close()\n"
                    "        except OSError:\n            pass\n", "took longer than 1 s"),
    "a trickle of bytes": (CHANNEL + "import time\ndef tanh_vjp(g, x):\n"
                           "    os.write(main.CHANNEL, struct.pack('<I', 1000))\n    while True:\n"
                           "        os.write(main.CHANNEL, b' ')\n        time.sleep(0.05)\n",
                           "took longer than 1 s"),
    "a torrent of bytes": (CHANNEL + "def tanh_vjp(g, x):\n    while True:\n"
                           "        os.write(main.CHANNEL, b'\\xff' * 65536)\n",
                           "sent output the checker cannot read"),
    "endless valid frames": (CHANNEL + "def tanh_vjp(g, x):\n    while True:\n"
                             "        main.send({'step': 'case', 'error': 'flood'})\n",
                             "input 1: flood"),
}


@pytest.mark.parametrize("flood", list(FLOODS))
def test_flooding_is_bounded_by_the_deadline(tmp_path, monkeypatch, flood):
    monkeypatch.setattr(checker, "TIMEOUT", 1.0)
    source, fragment = FLOODS[flood]
    start = time.monotonic()
    rep, text = _check(tmp_path, source)
    assert rep.status == "failing" and fragment in _one_line(rep)
    assert time.monotonic() - start < 30  # one second per step at most, plus starting up


BAD_FRAMES = {
    "not JSON": b"struct.pack('<I', 5) + b'{nope'",
    "a huge header": b"struct.pack('<I', 1 << 30)",
    "a dtype off the list": b"frame({'step': 'loaded', 'ok': True, 'arrays': [['|V8', [1]]]})",
    "an object dtype": b"frame({'step': 'loaded', 'ok': True, 'arrays': [['|O', [1]]]})",
    "a negative shape": b"frame({'step': 'loaded', 'ok': True, 'arrays': [['<f8', [-1]]]})",
    "a step out of order": b"frame({'step': 'case', 'error': 'x', 'arrays': []})",
    "ok that is not a bool": b"frame({'step': 'loaded', 'ok': 'yes', 'arrays': []})",
    "a header that is a list": b"frame([1, 2])",
    "more items than arrays": b"LOADED + frame({'step': 'case', 'structure': 'single', 'items':"
                              b" ['array', 'array'], 'arrays': [['<f8', [1]]]})"
                              b" + bytes(8)",
    "an item that is neither": b"LOADED + frame({'step': 'case', 'structure': 'single', 'items':"
                               b" [5], 'arrays': []})",
    "no inputs after the call": b"LOADED + frame({'step': 'case', 'none': True, 'arrays': []})",
    "a gradient where an input belongs": b"LOADED + frame({'step': 'case', 'none': True,"
                                         b" 'arrays': [['<f8', [1]]]}) + bytes(8)",
}


@pytest.mark.parametrize("bad", list(BAD_FRAMES))
def test_a_malformed_frame_is_answered_in_one_line(tmp_path, bad):
    source = (CHANNEL + "def frame(h):\n    t = json.dumps(h).encode()\n"
              "    return struct.pack('<I', len(t)) + t\n"
              "LOADED = frame({'step': 'loaded', 'ok': True, 'arrays': []})\n"
              f"os.write(main.CHANNEL, {BAD_FRAMES[bad].decode()})\nos._exit(0)\n")
    rep, _ = _check(tmp_path, source)
    line = _one_line(rep)
    assert rep.status != "done" and "sent output the checker cannot read" in line, line


def test_a_compressed_bomb_is_never_inflated(tmp_path):
    """A claim of 8 TiB of float64 is refused from its header, and a zip bomb (256 MiB of
    zeros in ~250 KiB) sent as the gradient stays bytes: the checker never decompresses."""
    claim = (CHANNEL + "def tanh_vjp(g, x):\n    t = json.dumps({'step': 'case', 'structure':"
             " 'single', 'items': ['array'], 'arrays': [['<f8', [1 << 40]]]})"
             ".encode()\n    os.write(main.CHANNEL, struct.pack('<I', len(t)) + t)\n"
             "    os._exit(0)\n")
    rep, _ = _check(tmp_path, claim)
    assert "sent output the checker cannot read (8796093022208 bytes of arrays)" in _one_line(rep)
    bomb = ("import io, numpy as np\nbuf = io.BytesIO()\n"
            "np.savez_compressed(buf, bomb=np.zeros(1 << 25))\nBOMB = buf.getvalue()\n"
            "def tanh_vjp(g, x):\n    return np.frombuffer(BOMB, np.uint8)\n")
    tracemalloc.start()
    try:
        rep, text = _check(tmp_path, bomb)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert rep.status == "failing" and "dx      FAIL  shape (" in text
    assert peak < 64 << 20  # the bomb inflates to 256 MiB


# ---- faking the verdict, and what outlives the check -----------------------------------------

def _cli(folder, *extra, **kwargs):
    return subprocess.Popen([sys.executable, "-m", "minigrad.exercises", "check", "tanh",
                             "--dir", str(folder), *extra], cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kwargs)


def test_text_written_to_the_checkers_stdout_cannot_fake_a_pass(tmp_path):
    fake = "tanh: all 3 inputs pass -- done."
    (tmp_path / "02_tanh.py").write_text(
        "import os\nfor fd in (1, 2):\n    try:\n"
        f"        with open(f'/proc/{{os.getppid()}}/fd/{{fd}}', 'w') as f:\n"
        f"            f.write({fake!r} + '\\n')\n    except OSError:\n        pass\n" + WRONG_TANH)
    proc = _cli(tmp_path)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 1, err
    assert out.splitlines()[-1].startswith("tanh: 0 of ")  # the verdict comes last, after the child is dead
    if FILTERED:
        assert fake not in out + err


SPAWNS = ("import os, subprocess, sys, time\nMARK = {mark!r}\nLOOP = 'while 1: pass  # ' + MARK\n"
          "spawned = 0\n"
          "def tries():\n"
          "    yield lambda: subprocess.Popen([sys.executable, '-c', LOOP])\n"
          "    yield lambda: subprocess.Popen([sys.executable, '-c', LOOP], start_new_session=True)\n"
          "    yield lambda: os.fork() or os.execv(sys.executable, [sys.executable, '-c', LOOP])\n"
          "    yield lambda: os.fork() or (os.setsid(), os.fork() or os.execv(sys.executable,"
          " [sys.executable, '-c', LOOP]), os._exit(0))\n"
          "def tanh_vjp(g, x):\n    global spawned\n    for t in tries():\n        try:\n"
          "            t()\n            spawned += 1\n        except OSError:\n            pass\n"
          "{end}")


@pytest.mark.parametrize("end", ["returns", "times out"])
def test_no_process_the_learner_starts_outlives_the_check(tmp_path, monkeypatch, end):
    monkeypatch.setattr(checker, "TIMEOUT", 1.0)
    mark = f"minigrad-grader-{uuid.uuid4().hex}"
    tail = ("    raise RuntimeError(f'spawned {spawned}')\n" if end == "returns" else
            "    while True:\n        pass\n")
    rep, text = _check(tmp_path, SPAWNS.format(mark=mark, end=tail))
    assert rep.status == "failing"
    if end == "returns":  # where the filter is, nothing could even be started
        assert ("spawned 0" if FILTERED else "spawned ") in text
    time.sleep(0.2)
    assert _alive(mark) == []


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL])
def test_killing_the_checker_kills_the_child_and_all_it_started(tmp_path, sig):
    mark = f"minigrad-grader-{uuid.uuid4().hex}"
    (tmp_path / "02_tanh.py").write_text(SPAWNS.format(mark=mark, end="    while True:\n"
                                                                      "        pass\n"))
    proc = _cli(tmp_path)
    children = []
    for _ in range(600):  # until the sandbox has started (a few seconds on a busy machine)
        children = [p for p in _alive("sandbox.py") if _parent(p) == proc.pid]
        if children:
            break
        time.sleep(0.05)
    assert children, "the sandbox did not start"
    folder = Path(os.readlink(f"/proc/{children[0]}/cwd"))  # its private folder
    time.sleep(0.5)  # the learner's code is running now
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=30)
    assert folder.exists() == (sig == signal.SIGKILL)  # only a killed checker cannot tidy up
    shutil.rmtree(folder, ignore_errors=True)
    if sig != signal.SIGKILL:  # Ctrl-C and SIGTERM: the checker kills the child, then exits
        assert proc.returncode == {signal.SIGINT: 130, signal.SIGTERM: 143}[sig]
        assert err == "stopped: the check was interrupted, nothing was judged\n" and out == ""
    else:  # nothing runs in the checker now: the child dies with it (PR_SET_PDEATHSIG)
        assert proc.returncode == -signal.SIGKILL
    time.sleep(0.2)
    assert not [p for p in children if p in _alive("sandbox.py")]
    if FILTERED or sig != signal.SIGKILL:  # after a SIGKILL only the filter (none started) helps
        assert _alive(mark) == []


def _parent(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except OSError:
        return -1


@pytest.mark.skipif(not sys.platform.startswith("linux") or os.geteuid() != 0,
                    reason="the sweep reads /proc, and adopts only as root")
def test_the_sweep_kills_a_grandchild_that_left_the_session():
    """Where the filter is missing (not x86-64) and the user is root (RLIMIT_NPROC does not
    apply), a learner could start a process in a session of its own and let its parent die;
    the checker adopts it as subreaper and kills it -- it has no capability, as nothing the
    sandbox starts has. A process of the caller's own that was adopted the same way lives."""
    mark = f"minigrad-grader-{uuid.uuid4().hex}"
    with open("/proc/uptime") as f:  # now, in clock ticks since boot, as /proc/PID/stat counts
        since = int(float(f.read().split()[0]) * os.sysconf("SC_CLK_TCK")) - 1
    drop = "import ctypes\nfor c in range(64): ctypes.CDLL(None).prctl(24, c, 0, 0, 0)\n"
    with child._guarded() as adopting:
        assert adopting
        for prefix in (drop, ""):  # the learner's (no capability), the caller's (all of them)
            subprocess.run([sys.executable, "-c", prefix + "import subprocess, sys\n"
                            "subprocess.Popen([sys.executable, '-c', 'while 1: pass  # "
                            f"{mark}'], start_new_session=True)"], check=True)
        assert len(_alive(mark)) == 2 and {_parent(p) for p in _alive(mark)} == {os.getpid()}
        with child.LOCK:
            child._sweep(since)
        assert len(_alive(mark)) == 1  # the caller's own
    for pid in _alive(mark):
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
