"""Running a learner's file in a child process with a hard wall-clock limit (the parent side
of ``sandbox.py``).

``run(path, function, cases)`` starts the child in a session of its own, sends it the cases,
and watches its output folder: once the child has started, loading the file and each case
get ``timeout`` seconds; a child that
takes longer is killed (with anything it started), not asked to stop. The frames it wrote are
read back with ``minigrad.load`` -- arrays only, never unpickled, size-capped -- and turned into
outcomes: ``{"loaded": bool}`` or ``{"error": text}`` for the file, then per case
``("result", value, changed)`` or ``("error", text)``.
"""
from __future__ import annotations

import os
import pickle
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import minigrad as mg

SANDBOX = Path(__file__).with_name("sandbox.py")
ROOT = str(Path(mg.__file__).resolve().parent.parent)  # the folder that holds minigrad/
MAX_BYTES = 1 << 26     # per returned array: the exercises' inputs are tiny
STARTUP = 60.0          # seconds for Python and NumPy to start, before the learner's clock


class NotAnArray:
    """A returned gradient the child could not turn into an array of numbers."""

    def __init__(self, type_name: str):
        self.type_name = type_name


def _kill(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # the child's session: it and whatever it started
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()


def _frames(outdir: str) -> int:
    return sum(1 for name in os.listdir(outdir) if name.startswith("frame-"))


def run(path: Path, function: str, cases: list, timeout: float) -> tuple:
    """(frames read back, trouble): ``trouble`` says why the child stopped early, if it did."""
    request = pickle.dumps([(list(i.values()), c, g) for i, c, g in cases])
    env = dict(os.environ)  # the learner may import minigrad: this one, wherever it lives
    env["PYTHONPATH"] = os.pathsep.join([ROOT] + [p for p in [env.get("PYTHONPATH")] if p])
    with tempfile.TemporaryDirectory(prefix="minigrad-check-") as outdir:
        with open(os.path.join(outdir, "output.txt"), "wb") as printed:
            proc = subprocess.Popen(
                [sys.executable, "-B", str(SANDBOX), str(path), function, outdir],
                stdin=subprocess.PIPE, stdout=printed, stderr=printed, start_new_session=True, env=env)
        trouble = None
        try:
            proc.stdin.write(request)
            proc.stdin.close()
        except OSError:  # the child is gone already
            pass
        seen, since, started = -1, time.monotonic(), os.path.join(outdir, "started")
        while proc.poll() is None:
            n = _frames(outdir) if os.path.exists(started) else -1
            if n != seen:
                seen, since = n, time.monotonic()
            elif time.monotonic() - since > (timeout if n >= 0 else STARTUP):
                _kill(proc)
                trouble = (f"took longer than {timeout:g} s — an infinite loop?" if n >= 0 else
                           f"did not start within {STARTUP:g} s (is the machine overloaded?)")
                break
            time.sleep(0.01)
        frames = []
        for n in range(len(cases) + 1):
            try:
                frames.append(mg.load(os.path.join(outdir, f"frame-{n}.npz"), max_bytes=MAX_BYTES))
            except (ValueError, OSError) as e:
                if trouble is None and os.path.exists(os.path.join(outdir, f"frame-{n}.npz")):
                    trouble = f"sent output the checker cannot read ({e})"
                break
        if trouble is None and len(frames) < len(cases) + 1:
            code = proc.returncode
            trouble = (f"ended the process (exit status {code}, e.g. os._exit or a crash)"
                       if code is not None and code >= 0 else f"was killed by signal {-code}")
    return [{k: _plain(v) for k, v in f.items()} if i == 0 else f for i, f in enumerate(frames)], trouble


def _plain(a: np.ndarray):
    return a.item() if a.shape == () else a


def decode(frame: dict) -> tuple:
    """A case's frame as ``("result", value, changed)`` or ``("error", text)``."""
    try:
        if "error" in frame:
            return ("error", str(frame["error"].item()))
        changed = [int(k) for k in frame["changed"]]
        if "none" in frame:
            return ("result", None, changed)
        count = int(frame["count"])
        items = [None if f"none.{i}" in frame else
                 NotAnArray(str(frame[f"bad.{i}"].item())) if f"bad.{i}" in frame else
                 frame[f"grad.{i}"] for i in range(count)]
        value = tuple(items) if str(frame["structure"].item()) == "tuple" else items[0]
        return ("result", value, changed)
    except (KeyError, ValueError, TypeError, IndexError) as e:
        return ("error", f"sent output the checker cannot read ({type(e).__name__}: {e})")
