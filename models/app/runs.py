"""Where runs are written, and the rule that nothing a user saved is overwritten by accident.

* ``fresh_folder("runs/dates")`` claims the first of ``runs/dates``, ``runs/dates-2`` … that
  it can *create* (``os.mkdir`` is atomic, so two runs started at the same moment never share
  one, and a folder this run did not create is never reused): the demo, and ``train``
  without ``--out``, use it.
* A folder named with ``train --out`` that holds a checkpoint is refused by the CLI unless
  ``--resume`` (continue that run) or ``--overwrite`` (replace it) says what to do with it;
  one that holds files a run does not write (``foreign_files``) is refused outright.
* ``run_lock(folder)``: a run holds an exclusive lock (``flock`` on ``folder/.lock``, which
  the kernel releases when the process dies, even by ``kill -9``) while it writes; a second
  writer gets a one-line refusal naming the holder. Taking the lock removes the temporary
  files (``.tmp-*``) a killed run left behind.
* ``free_name`` picks a new file name (``exact_vs_length-2.svg``) instead of replacing one.
* ``stop_on_ctrl_c``: the first Ctrl-C during training checkpoints after the current batch
  and stops; a second one aborts, and every later one is ignored while the process exits;
  the checkpoint written last stays intact (checkpoints are written atomically, see
  ``models/app/checkpoint.py``).
"""
from __future__ import annotations

import contextlib
import fnmatch
import os
import signal
import sys
import tempfile
import time

from minigrad.files import TMP_PREFIX
from models.app.checkpoint import INDEX

try:
    import fcntl
except ImportError:  # Windows: no advisory locks; runs are still claimed by mkdir
    fcntl = None

LOCK = ".lock"
RUN_FILES = (INDEX, "weights-*.npz", "optimizer-*.npz", "best-weights*.npz", "training.svg", "alignment-*.svg",
             LOCK, TMP_PREFIX + "*")  # what a run writes into its folder


class FolderInUse(ValueError):
    """Another process holds the run folder's lock."""


def holds_checkpoint(folder) -> bool:
    """True when ``folder`` holds a checkpoint (its ``checkpoint.json``)."""
    return os.path.exists(os.path.join(os.fspath(folder), INDEX))


def writable_folder(folder) -> str:
    """Create ``folder`` and check that files can be written in it -- before training for
    minutes only to fail at the first checkpoint. Raises ValueError saying why not."""
    folder = os.fspath(folder)
    if os.path.exists(folder) and not os.path.isdir(folder):
        raise ValueError(f"{folder} is a file, not a folder: choose another folder")
    try:
        os.makedirs(folder, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as e:
        raise ValueError(f"cannot write into {folder} ({e.strerror or e})") from None
    return folder


def foreign_files(folder) -> list:
    """The files in ``folder`` that no run writes (the user's own), sorted."""
    return sorted(n for n in os.listdir(folder)
                  if not any(fnmatch.fnmatch(n, pattern) for pattern in RUN_FILES))


def fresh_folder(base) -> str:
    """The first of ``base``, ``base-2``, ``base-3`` … that this call creates (``os.mkdir``
    is atomic: two runs never get the same folder, and none is reused)."""
    base = os.path.normpath(os.fspath(base))
    os.makedirs(os.path.dirname(base) or ".", exist_ok=True)
    for n in range(1, 10_000):
        path = base if n == 1 else f"{base}-{n}"
        try:
            os.mkdir(path)
            return path
        except FileExistsError:
            continue
        except OSError as e:
            raise ValueError(f"cannot create the folder {path} ({e.strerror or e})") from None
    raise ValueError(f"no free folder next to {base} (tried {base}-2 … {base}-9999)")


def _holder(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read(300).strip() or "another process"
    except OSError:
        return "another process"


@contextlib.contextmanager
def run_lock(folder):
    """Hold ``folder``'s lock while inside; raise ``FolderInUse`` naming the holder if another
    process holds it. Stale temporary files of killed runs are removed once it is held."""
    folder = os.fspath(folder)
    path = os.path.join(folder, LOCK)
    if fcntl is None:
        yield
        return
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise FolderInUse(f"{folder} is in use by another run ({_holder(path)}); wait for "
                              "it to finish, or choose another folder") from None
        try:  # the file may have been removed by the holder that just let go: lock the new one
            if os.stat(path).st_ino == os.fstat(fd).st_ino:
                break
        except FileNotFoundError:
            pass
        os.close(fd)
    try:
        os.ftruncate(fd, 0)
        os.write(fd, f"pid {os.getpid()}, started {time.strftime('%Y-%m-%d %H:%M:%S')}: "
                     f"{' '.join(sys.argv)[:200]}".encode())
        for name in os.listdir(folder):
            if name.startswith(TMP_PREFIX):  # left by a killed run: we hold the lock now
                with contextlib.suppress(OSError):
                    os.remove(os.path.join(folder, name))
        yield
    finally:
        with contextlib.suppress(OSError):
            os.remove(path)
        os.close(fd)


def free_name(folder, stem: str, ext: str) -> str:
    """``folder/stem.ext`` if no such file exists, else ``folder/stem-2.ext``, ``-3`` …"""
    n = 1
    while True:
        path = os.path.join(folder, f"{stem}.{ext}" if n == 1 else f"{stem}-{n}.{ext}")
        if not os.path.exists(path):
            return path
        n += 1


@contextlib.contextmanager
def stop_on_ctrl_c():
    """Inside: the first Ctrl-C lets the current batch finish, then training checkpoints and
    stops (the yielded list becomes non-empty); a second Ctrl-C aborts (KeyboardInterrupt)."""
    flag = []

    def handler(signum, frame):
        if flag:
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # any further Ctrl-C: we are exiting
            flag.append("abort")
            raise KeyboardInterrupt
        flag.append(True)
        print("\ninterrupted: checkpointing after this batch (Ctrl-C again to abort)", flush=True)
    try:
        previous = signal.signal(signal.SIGINT, handler)
    except ValueError:  # not the main thread: no handler, Ctrl-C works as usual
        yield flag
        return
    try:
        yield flag
    finally:
        if "abort" not in flag:  # after an abort Ctrl-C stays ignored until the process exits
            signal.signal(signal.SIGINT, previous)
