"""Running a learner's file in a locked-down child process with a wall-clock limit (the parent
side of ``sandbox.py``).

``run(source, name, function, cases, timeout, path, forward)`` copies the file's bytes into a fresh
private folder (mode 0700), starts the child there in a session of its own -- isolated mode,
an environment of a few variables, only ``path`` added to its ``sys.path``, the cases on
stdin -- and reads its frames from a pipe.

* The deadline is wall-clock time: ``STARTUP`` s for Python and NumPy to start, then
  ``timeout`` s to load the file and per case, restarted only by a valid frame. One frame
  is read per step and nothing after the last, so nothing the child writes keeps it alive.
* Each frame is validated before it is used: its size, a JSON header, dtypes from a fixed
  list, shapes against the byte count, the order of the steps. Arrays are copied out of the
  bytes, never unpickled or inflated.
* When the check ends -- done, timed out, broken, or Ctrl-C / SIGTERM in the parent
  (``stop_all``) -- the child's whole session is killed before anything is reported; on
  Linux, as root, this process, as "subreaper", also adopts and kills whatever escaped the
  session (``_sweep``), and nothing else. Then the folder is removed, with the stopping
  signals held back until it is.
* On Linux this process is not dumpable while a check runs, so that a child of the same user
  cannot read its memory or environment (``/proc/PID/mem``, ``/proc/PID/environ``). Used as
  a library, the caller gets its own flags back when the check ends (``_guarded``).

Outcomes: first ``{"loaded": bool}`` or ``{"error": text}`` for the file, then per case
``("result", value, changed)`` or ``("error", text)``. ``changed`` lists the inputs (-1 for g)
whose bytes, as the child sends them back after the call, differ from those sent to it: the
comparison is made here, not in the child.
"""
from __future__ import annotations

import contextlib
import ctypes
import json
import os
import pickle
import select
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

import minigrad as mg
from minigrad.exercises.integrity import printable
from minigrad.i18n import translator

_ = translator("minigrad")

SANDBOX = Path(__file__).with_name("sandbox.py")
STARTUP = 60.0            # seconds for Python and NumPy to start, before the learner's clock
HEADER_BYTES = 1 << 16    # a frame's JSON header
FRAME_BYTES = 1 << 24     # a frame's arrays: the exercises' inputs are tiny
UNREADABLE = (ValueError, TypeError, KeyError, AttributeError, OverflowError, RecursionError)
DTYPES = {np.dtype(c).str: np.dtype(c) for c in "?bBhHiIlLqQefdgFDG"}  # native numbers only
ENV = {k: v for k, v in os.environ.items() if k in ("PATH", "LD_LIBRARY_PATH")}
ENV.update(OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")

LIVE, LOCK, STOPPING = set(), threading.Lock(), threading.Event()  # children running now
STOPS = tuple(getattr(signal, n) for n in ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1",
                                           "SIGUSR2", "SIGALRM") if hasattr(signal, n))


class NotAnArray:
    """A returned gradient the child could not turn into an array of numbers."""

    def __init__(self, type_name: str):
        self.type_name = type_name


def allowed_path(course: Path) -> list:
    """The folders the child may import from: minigrad's and NumPy's, never the course's."""
    folders = [Path(mg.__file__).resolve().parent.parent,
               Path(np.__file__).resolve().parent.parent]
    course = Path(course).resolve()
    return list(dict.fromkeys(str(f) for f in folders if f != course))


def stop_all() -> None:
    """Kill every running child and start no more (Ctrl-C or SIGTERM in the checker)."""
    STOPPING.set()
    with LOCK:
        for proc in LIVE:
            _kill_session(proc)


def _kill_session(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # the child's session: it and whatever it started
    except OSError:
        pass


GUARD = {"checks": 0, "flags": None}  # checks running now; the caller's flags before them


@contextlib.contextmanager
def _guarded():
    """Linux, while checks run: this process is "not dumpable" (a process of the same user,
    the child if it ran as this user, cannot read its memory or environment in /proc) and, as
    root, the "subreaper" of its descendants (what the learner's code started in a session of
    its own comes back to it, for ``_sweep``). The last check to end restores the caller's
    flags. Yields whether this process adopts orphans."""
    if not sys.platform.startswith("linux"):
        yield False
        return
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl.argtypes = [ctypes.c_int, ctypes.c_void_p] + [ctypes.c_ulong] * 3
    adopt, was = os.geteuid() == 0, ctypes.c_int(0)
    with LOCK:
        if GUARD["checks"] == 0:
            libc.prctl(37, ctypes.byref(was), 0, 0, 0)  # PR_GET_CHILD_SUBREAPER
            GUARD["flags"] = (libc.prctl(3, 0, 0, 0, 0), was.value)  # PR_GET_DUMPABLE
            libc.prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE: 0
            adopt = adopt and libc.prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER
        GUARD["checks"] += 1
    try:
        yield adopt
    finally:
        with LOCK:
            GUARD["checks"] -= 1
            if GUARD["checks"] == 0:
                libc.prctl(4, int(GUARD["flags"][0] > 0), 0, 0, 0)  # 1, or 0 as it was
                libc.prctl(36, GUARD["flags"][1], 0, 0, 0)


def _stat(pid) -> list:
    """/proc/PID/stat after the command name: [state, ppid, ..., starttime at 19], or []."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return []


def _bounded(pid) -> bool:
    """Whether the process can never have a capability: its bounding set is empty, as that
    of a root child is from ``sandbox.py``'s first step on (and of all it starts)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            return any(line.split() == ["CapBnd:", "0" * 16] for line in f)
    except OSError:
        return False


def _sweep(since: int) -> None:
    """Kill what the learner's code left running (call holding LOCK): children of this
    process started since ``since`` (clock ticks), no running check's child, without any
    capability -- never the caller's own (if the caller has none either, none is swept).
    Each round's grandchildren become this process's children: repeat until none is left."""
    me, live = os.getpid(), {proc.pid for proc in LIVE}
    for _round in range(100 * (not _bounded("self"))):
        orphans = [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) not in live
                   and (s := _stat(p)) and int(s[1]) == me and int(s[19]) >= since
                   and _bounded(p)]
        if not orphans:
            return
        for pid in orphans:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)


def run(source: bytes, name: str, function: str, cases: list, timeout: float,
        path: list, forward: bool = False) -> tuple:
    """(outcomes, trouble): ``trouble`` says why the child stopped early, if it did.
    ``forward``: the function is a forward exercise's, called without g."""
    if STOPPING.is_set():
        return [], _("was stopped (Ctrl-C or SIGTERM)")
    folder, proc, since = tempfile.mkdtemp(prefix="minigrad-check-"), None, None  # mode 0700
    guard = contextlib.ExitStack()  # _guarded, until after the sweep
    try:
        copy, request = os.path.join(folder, name), os.path.join(folder, "cases.pickle")
        with open(copy, "xb") as f:
            f.write(source)
        with open(request, "xb") as f:
            pickle.dump([(list(i.values()), c, g) for i, c, g in cases], f)
        config = {"path": path, "file": copy, "function": function, "forward": forward,
                  "cpu": int(STARTUP + timeout * (len(cases) + 1)) + 1}
        adopting = guard.enter_context(_guarded())
        with open(request, "rb") as stdin, LOCK:  # a sweep never sees a child not yet in LIVE
            proc = subprocess.Popen([sys.executable, "-I", "-S", "-B", str(SANDBOX),
                                     json.dumps(config)], stdin=stdin, stdout=subprocess.PIPE,
                                    stderr=subprocess.DEVNULL, cwd=folder, env=ENV,
                                    start_new_session=True)
            LIVE.add(proc)
            since = int(_stat(proc.pid)[19]) if adopting and _stat(proc.pid) else None
        if STOPPING.is_set():
            return [], _("was stopped (Ctrl-C or SIGTERM)")
        frames, trouble = _read(proc, cases, timeout)
    finally:  # Ctrl-C or SIGTERM wait until the child is dead and the folder gone
        masked = _mask(signal.SIG_BLOCK)
        if proc is not None:
            with LOCK:
                _kill_session(proc)
                proc.kill()
                LIVE.discard(proc)
                proc.wait()
                if since is not None:
                    _sweep(since)
            proc.stdout.close()
        guard.close()
        shutil.rmtree(folder, ignore_errors=True)
        _mask(signal.SIG_SETMASK, masked)
    if trouble is None and len(frames) < len(cases) + 2:
        code = proc.returncode
        trouble = (_("ended the process (exit status {code}, e.g. os._exit or a crash)").format(
            code=code) if code >= 0 else _("was killed by signal {number} ({name})").format(
                number=-code, name=signal.strsignal(-code)))
    return frames[1:], trouble


def _mask(how, signals=STOPS):
    """``pthread_sigmask(how, signals)`` where there is one (and ``signals`` is not None);
    the previous mask, or None."""
    if not hasattr(signal, "pthread_sigmask") or signals is None:
        return None
    return signal.pthread_sigmask(how, signals)


def _read(proc: subprocess.Popen, cases: list, timeout: float) -> tuple:
    """Frames from the child's pipe until it ends, errs or runs out of time."""
    frames, buf, fd, steps = [], bytearray(), proc.stdout.fileno(), len(cases) + 2
    deadline = time.monotonic() + STARTUP
    while True:
        wait = deadline - time.monotonic()
        if wait <= 0:
            return frames, (too_long(timeout) if frames else
                            _("did not start within {seconds:g} s (is the machine "
                              "overloaded?)").format(seconds=STARTUP))
        if not select.select([fd], [], [], wait)[0]:
            continue
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            break
        buf += chunk
        try:
            while (frame := _pop(buf, len(frames), cases)) is not None:
                frames.append(frame)
                deadline = time.monotonic() + timeout
                if len(frames) == steps:  # all there: nothing after this is read
                    return frames, None
        except UNREADABLE as e:
            why = e if isinstance(e, ValueError) else f"{type(e).__name__} {e}"
            return frames, _("sent output the checker cannot read ({why})").format(why=why)
    while time.monotonic() < deadline:  # the pipe is closed: wait for the exit
        if _exited(proc):
            return frames, None
        time.sleep(0.01)
    return frames, too_long(timeout)


def too_long(timeout: float) -> str:
    """Why a check stopped when the learner's code ran out of time."""
    return _("took longer than {seconds:g} s — an infinite loop?").format(seconds=timeout)


def _exited(proc: subprocess.Popen) -> bool:
    """Whether the child has ended, without reaping it where the system allows (so that its
    process group cannot be a new one when it is killed)."""
    if not hasattr(os, "WNOWAIT"):
        return proc.poll() is not None
    try:
        return os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT | os.WNOHANG) is not None
    except ChildProcessError:
        return True


def _pop(buf: bytearray, step: int, cases: list):
    """The next whole frame, taken off ``buf`` and decoded, or None while it is incomplete."""
    if len(buf) < 4:
        return None
    n = struct.unpack("<I", buf[:4])[0]
    if n > HEADER_BYTES:
        raise ValueError(_("a header of {n} bytes").format(n=n))
    if len(buf) < 4 + n:
        return None
    header = json.loads(bytes(buf[4:4 + n]))
    specs = [(_dtype(d), _shape(s)) for d, s in _list(header["arrays"])]
    sizes = [dt.itemsize * int(np.prod(s, dtype=object)) for dt, s in specs]
    if sum(sizes) > FRAME_BYTES:
        raise ValueError(_("{n} bytes of arrays").format(n=sum(sizes)))
    if len(buf) < 4 + n + sum(sizes):
        return None
    at, arrays = 4 + n, []
    for (dt, shape), size in zip(specs, sizes):
        arrays.append(np.frombuffer(bytes(buf[at:at + size]), dt).reshape(shape))
        at += size
    del buf[:at]
    want = "started" if step == 0 else "loaded" if step == 1 else "case"
    if header["step"] != want:
        raise ValueError(_("step {step!r} where {want!r} belongs").format(step=header["step"],
                                                                         want=want))
    return _decode(header, arrays, cases[step - 2] if step >= 2 else None)


def _decode(header: dict, arrays: list, case):
    if header["step"] == "started":
        return {}
    if "error" in header:
        return ({"error": _text(header["error"])} if header["step"] == "loaded"
                else ("error", _text(header["error"])))
    if header["step"] == "loaded":
        if not isinstance(header["ok"], bool):
            raise ValueError(_("'ok' is not true or false"))
        return {"loaded": header["ok"]}
    sent = [*case[0].values(), case[2]]  # the inputs, then g: they follow the gradients
    if len(arrays) < len(sent):
        raise ValueError(_("the inputs after the call are missing"))
    arrays, after = arrays[:len(arrays) - len(sent)], arrays[len(arrays) - len(sent):]
    changed = [k if k < len(sent) - 1 else -1 for k, (a, b) in enumerate(zip(sent, after))
               if a.dtype != b.dtype or a.shape != b.shape or a.tobytes() != b.tobytes()]
    if header.get("none") is True and not arrays:
        return ("result", None, changed)
    entries = _list(header["items"])
    if (not entries or sum(i == "array" for i in entries) != len(arrays)
            or header["structure"] not in ("tuple", "single")):
        raise ValueError(_("the items do not match the arrays"))
    arrays = iter(arrays)
    items = [next(arrays) if i == "array" else None if i is None else NotAnArray(_text(i["bad"]))
             for i in entries]
    return ("result", tuple(items) if header["structure"] == "tuple" else items[0], changed)


def _list(x) -> list:
    if not isinstance(x, list) or len(x) > 64:
        raise ValueError(_("a list of up to 64 entries was expected"))
    return x


def _dtype(d) -> np.dtype:
    if not isinstance(d, str) or d not in DTYPES:
        raise ValueError(_("dtype {dtype!r} is not a plain number type").format(dtype=d))
    return DTYPES[d]


def _shape(s) -> tuple:
    if not all(type(n) is int and n >= 0 for n in _list(s)) or len(s) > 32:
        raise ValueError(_("shape {shape!r}").format(shape=s))
    return tuple(s)


def _text(s) -> str:
    if not isinstance(s, str):
        raise ValueError(_("a message that is not text"))
    return printable(s)
