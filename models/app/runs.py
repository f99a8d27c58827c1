"""Where runs are written, and the rule that nothing a user saved is overwritten by accident.

* ``fresh_folder("runs/dates")`` claims the first of ``runs/dates``, ``runs/dates-2`` … that
  it can *create* (``os.mkdir`` is atomic, so two runs started at the same moment never share
  one, and a folder this run did not create is never reused): the demo, and ``train``
  without ``--out``, use it.
* A folder is a run folder when it holds a checkpoint index this program wrote
  (``checkpoint.json``); a run writes only into an empty folder or a run folder
  (``check_owned``): any other folder is refused, whatever the names inside. A run folder
  named with ``train --out`` is refused by
  the CLI unless ``--resume`` (continue that run) or ``--overwrite`` (replace it) says what
  to do with it; one that also holds files a run does not write (``foreign_files``) is
  refused outright.
* ``run_lock(folder)``: a run holds an exclusive lock (``flock`` on ``folder/.lock``, which
  the kernel releases when the process dies, even by ``kill -9``) while it writes; a second
  writer gets a one-line refusal naming the holder. Taking the lock of a run folder removes
  what a killed run left behind: its temporary files (``TMP_PREFIX``, this project's own
  prefix) and the array files of an interrupted save (named in the index's journal, see
  ``models/app/checkpoint.py``). Nothing else is ever removed.
* ``free_name`` picks a new file name (``exact_vs_length-2.svg``) instead of replacing one.
* ``stop_on_signals``: the first Ctrl-C, SIGTERM or SIGHUP during training checkpoints after
  the current batch and stops, and so does a closed stdout (``train | head -1``: the reader
  went away); a second signal aborts, and every later one is ignored while the process exits;
  the checkpoint written last stays intact (checkpoints are written atomically).
"""
from __future__ import annotations

import contextlib
import fnmatch
import os
import signal
import stat
import sys
import tempfile
import time

from minigrad.draw.console import closed_pipe
from minigrad.files import TMP_PREFIX
from minigrad.i18n import translator
from models.app.checkpoint import INDEX, is_index, remove_strays

try:
    import fcntl
except ImportError:  # Windows: no advisory locks; runs are still claimed by mkdir
    fcntl = None

_ = translator("models")

LOCK = ".lock"
RUN_FILES = (INDEX, "weights-*.npz", "optimizer-*.npz", "best-weights*.npz", "training.svg",
             "alignment-*.svg", "inspect-*.svg", "explore*.html", LOCK,
             TMP_PREFIX + "*")  # what a run writes into its folder
# What stops a training run, and how it is reported (the words shown translated: _(...)).
SIGNALS = {"SIGINT": "interrupted (Ctrl-C)", "SIGTERM": "terminated (SIGTERM)",
           "SIGHUP": "hung up (SIGHUP)"}


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
        raise ValueError(_("{folder} is a file, not a folder: choose another folder").format(
            folder=folder))
    try:
        os.makedirs(folder, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as e:
        raise ValueError(_("cannot write into {folder} ({reason})").format(
            folder=folder or "''", reason=e.strerror or e)) from None  # '': an empty name
    return folder


def foreign_files(folder) -> list:
    """The files in ``folder`` that no run writes (the user's own), sorted."""
    return sorted(n for n in os.listdir(folder)
                  if not any(fnmatch.fnmatch(n, pattern) for pattern in RUN_FILES))


class NotARunFolder(ValueError):
    """A folder that is neither empty nor a run folder: a run never writes into it."""


def check_owned(folder) -> None:
    """Refuse ``folder`` unless it is empty or a run folder: one whose ``checkpoint.json`` is
    an index this program wrote (a foreign or unreadable one does not make a run folder)."""
    folder = os.fspath(folder)
    names = sorted(os.listdir(folder))
    if names and not is_index(os.path.join(folder, INDEX)):
        shown = ", ".join(names[:3]) + (" …" if len(names) > 3 else "")
        message = (_("{folder} is not empty and holds no checkpoint index that this program "
                     "wrote, so it is not a run folder ({shown}); a run never writes into it: "
                     "choose a new or empty folder") if INDEX in names else
                   _("{folder} is not empty and holds no {index} this program wrote, so it is "
                     "not a run folder ({shown}); a run never writes into it: choose a new or "
                     "empty folder"))
        raise NotARunFolder(message.format(folder=folder, shown=shown, index=INDEX))


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
            raise ValueError(_("cannot create the folder {path} ({reason})").format(
                path=path, reason=e.strerror or e)) from None
    raise ValueError(_("no free folder next to {base} (tried {base}-2 … {base}-9999)").format(
        base=base))


def _holder(path: str) -> str:
    try:
        with open_lock(path, os.O_RDONLY) as fd:
            return os.read(fd, 300).decode(errors="replace").strip() or _("another process")
    except (OSError, ValueError):
        return _("another process")


def _in_use(folder: str, path: str) -> str:
    """The refusal of ``folder``, whose lock at ``path`` another run holds, naming that run."""
    return _("{folder} is in use by another run ({holder}); wait for it to finish, or choose "
             "another folder").format(folder=folder, holder=_holder(path))


@contextlib.contextmanager
def open_lock(path: str, flags: int):
    """The descriptor of the lock file ``path``, which must be a regular file (not a symlink,
    FIFO or device: a user's file is never truncated through it); closed after the block."""
    fd = os.open(path, flags | os.O_NOFOLLOW | os.O_NONBLOCK, 0o644)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotARunFolder(_("{path} is not a regular file, so it is not a run's lock: "
                                  "choose another folder").format(path=path))
        yield fd
    finally:
        os.close(fd)


def _refuse_if_held(folder: str, path: str) -> None:
    """``FolderInUse`` naming the holder if another process holds the lock at ``path``."""
    if not os.path.lexists(path):
        return
    try:
        with open_lock(path, os.O_RDONLY) as fd:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)  # released when fd is closed
    except BlockingIOError:
        raise FolderInUse(_in_use(folder, path)) from None
    except OSError as e:  # a symlink named .lock (ELOOP) or an unreadable one
        raise NotARunFolder(_("cannot use {path} as a run's lock ({reason}): choose another "
                              "folder").format(path=path, reason=e.strerror or e)) from None


@contextlib.contextmanager
def run_lock(folder):
    """Hold ``folder``'s lock while inside; raise ``FolderInUse`` naming the holder if another
    process holds it, ``NotARunFolder`` if the folder is neither empty nor a run folder. What
    a killed run left (its temporary files, an interrupted save's arrays) is removed once the
    lock is held."""
    folder = os.fspath(folder)
    path = os.path.join(folder, LOCK)
    if fcntl is None:
        check_owned(folder)
        yield
        return
    _refuse_if_held(folder, path)
    try:
        check_owned(folder)  # before .lock is created: nothing is written into a user's folder
    except NotARunFolder:
        _refuse_if_held(folder, path)  # a run that took the folder meanwhile: name that run
        raise
    with contextlib.ExitStack() as stack:
        while True:
            fd = stack.enter_context(open_lock(path, os.O_RDWR | os.O_CREAT))
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                raise FolderInUse(_in_use(folder, path)) from None
            try:  # the file may have been removed by the holder that just let go: lock the new one
                if os.stat(path).st_ino == os.fstat(fd).st_ino:
                    break
            except FileNotFoundError:
                pass
            stack.close()
        try:
            os.ftruncate(fd, 0)
            os.write(fd, f"pid {os.getpid()}, started {time.strftime('%Y-%m-%d %H:%M:%S')}: "
                         f"{' '.join(sys.argv)[:200]}".encode())
            if holds_checkpoint(folder):  # ours: what a killed run of this folder left
                for name in os.listdir(folder):
                    if name.startswith(TMP_PREFIX):
                        with contextlib.suppress(OSError):
                            os.remove(os.path.join(folder, name))
                remove_strays(folder)
            yield
        finally:
            with contextlib.suppress(OSError):
                os.remove(path)


def free_name(folder, stem: str, ext: str) -> str:
    """``folder/stem.ext`` if no such file exists, else ``folder/stem-2.ext``, ``-3`` …"""
    n = 1
    while True:
        path = os.path.join(folder, f"{stem}.{ext}" if n == 1 else f"{stem}-{n}.{ext}")
        if not os.path.exists(path):
            return path
        n += 1


class Interrupted(KeyboardInterrupt):
    """Training stopped by the signal ``signum`` (its checkpoint written, or aborted)."""

    def __init__(self, signum: int):
        super().__init__(_(SIGNALS[signal.Signals(signum).name]))
        self.signum = signum


class Stop:
    """Why a training run stops after its current batch: ``reason`` is the name of the first
    signal (SIGINT, SIGTERM, SIGHUP) or "closed stdout"; None while it goes on."""

    def __init__(self):
        self.reason, self.signum = None, None

    def __bool__(self) -> bool:
        return self.reason is not None

    def log(self, line: str) -> None:
        """Print ``line``; a closed stdout (``| head``, a hung-up terminal) stops the run
        after this batch, with its checkpoint, instead of raising in the middle of it."""
        try:
            print(line, flush=True)
        except OSError:  # BrokenPipeError, or EIO on a terminal that is gone
            closed_pipe()  # the rest goes to devnull
            self.reason = self.reason or "closed stdout"

    def exit(self) -> BaseException:
        """The exception that ends the program after a stop: ``Interrupted`` for a signal,
        ``BrokenPipeError`` for a closed stdout (which ends it quietly)."""
        return Interrupted(self.signum) if self.signum else BrokenPipeError()


def _say(line: str) -> None:
    """Write ``line`` to stderr from a signal handler: ``os.write``, since the handler may run
    in the middle of a ``print`` (which would raise on a reentrant call)."""
    with contextlib.suppress(OSError):  # stderr may be gone too (SIGHUP)
        os.write(2, (line + "\n").encode(errors="replace"))


@contextlib.contextmanager
def stop_on_signals():
    """Inside: the first Ctrl-C, SIGTERM or SIGHUP lets the current batch finish, then training
    checkpoints and stops (the yielded ``Stop`` becomes true); a second one aborts
    (``Interrupted``, a KeyboardInterrupt), and any after it are ignored while the process exits."""
    stop, names = Stop(), [n for n in SIGNALS if hasattr(signal, n)]
    aborted = []

    def handler(signum, frame):
        if stop.signum is not None:
            for n in names:  # any further signal: we are exiting
                signal.signal(getattr(signal, n), signal.SIG_IGN)
            aborted.append(signum)
            raise Interrupted(signum)
        stop.reason, stop.signum = signal.Signals(signum).name, signum
        again = "Ctrl-C" if signum == signal.SIGINT else stop.reason
        _say("\n" + _("{signal}: checkpointing after this batch ({again} again to abort)").format(
            signal=_(SIGNALS[stop.reason]), again=again))
    try:
        previous = {n: signal.signal(getattr(signal, n), handler) for n in names}
    except ValueError:  # not the main thread: no handlers, signals work as usual
        yield stop
        return
    try:
        yield stop
    finally:
        if not aborted:  # after an abort the signals stay ignored until the process exits
            for n, old in previous.items():
                signal.signal(getattr(signal, n), old)
