"""The child process that runs a learner's file: it computes their VJP's outputs, nothing else.

``child.run`` starts ``python -I -S -B sandbox.py CONFIG`` in a session of its own, in a fresh
private folder that holds a copy of the learner's file and the cases (pickled by the parent,
read on stdin before the learner's code runs). Isolated mode: no user site, no current folder
on the path; CONFIG names the only extra folders on it (NumPy's and minigrad's). Before the
learner's code runs, this process locks itself down:

* resource limits: CPU seconds, 4 GiB of address space, files of 0 bytes, no new processes
  (the last is ignored for root, which the filter below covers);
* on Linux x86-64, a seccomp filter: opening a file for writing, creating, deleting, renaming
  or changing files, starting processes (threads are allowed), sending signals and
  ``ioctl(TIOCSTI)`` fail with EPERM -- for this process and anything it could exec;
* on Linux, death with the checker: if the checker dies, even by SIGKILL, so does this.

Then it loads the file, calls the function once per case and sends one frame per step on a
pipe the learner's ``print`` does not reach (stdout goes to /dev/null). A frame is
``<u32 length><JSON header><raw array bytes>``; the parent validates every field and size and
never unpickles or inflates anything. This process judges nothing: at worst it fails.

Only the standard library and NumPy are imported, so the child starts fast.
"""
from __future__ import annotations

import ctypes
import json
import os
import pickle
import struct
import sys
import traceback
import types
from pathlib import Path

if __name__ == "__main__":  # the folders the parent allows, before NumPy is imported
    CONFIG = json.loads(sys.argv[1])
    sys.path[:0] = CONFIG["path"]

import numpy as np

MEMORY = 4 << 30  # address space the learner's code may use (Linux): a runaway allocation fails
CHANNEL = 1       # the result pipe; moved off fd 1 by ``main``


def where(err: BaseException, path: Path | None) -> str:
    """``Type: message`` plus the line of the learner's file where it happened."""
    if isinstance(err, SyntaxError):
        return (f"SyntaxError: {err.msg}\n  at {Path(err.filename or '?').name} line "
                f"{err.lineno}: {(err.text or '').strip()}")
    try:
        text = "".join(traceback.format_exception_only(type(err), err)).strip()
    except BaseException:  # a learner's exception whose __str__ fails
        text = type(err).__name__
    if isinstance(err, SystemExit):
        text = f"SystemExit: sys.exit({err.code!r}) would end the checker; remove it"
    frames = traceback.extract_tb(err.__traceback__)
    mine = [f for f in frames if path is not None and Path(f.filename).resolve() == path.resolve()]
    if mine:
        f = mine[-1]
        text += f"\n  at {Path(f.filename).name} line {f.lineno}: {f.line}"
    return text


# ---- locking down ----------------------------------------------------------------------------

def _limit(cpu_seconds: int) -> None:
    import resource
    for name, value in [("RLIMIT_CPU", cpu_seconds), ("RLIMIT_AS", MEMORY), ("RLIMIT_FSIZE", 0),
                        ("RLIMIT_CORE", 0), ("RLIMIT_NPROC", 0)]:
        try:
            resource.setrlimit(getattr(resource, name), (value, value))
        except (AttributeError, ValueError, OSError):  # not on this system
            pass


# x86-64 system call numbers: creat truncate ftruncate rename renameat renameat2 mkdir mkdirat
# rmdir link linkat unlink unlinkat symlink symlinkat chmod fchmod fchmodat fchmodat2 chown
# fchown lchown fchownat mknod mknodat utime utimes utimensat futimesat setxattr lsetxattr
# fsetxattr removexattr lremovexattr fremovexattr fork vfork ptrace process_vm_writev kill
# tkill tgkill rt_sigqueueinfo rt_tgsigqueueinfo pidfd_send_signal pidfd_getfd mount umount2
# pivot_root chroot setsid setpgid name_to_handle_at open_by_handle_at unshare setns bpf
DENIED = (85, 76, 77, 82, 264, 316, 83, 258, 84, 86, 265, 87, 263, 88, 266, 90, 91, 268, 452,
          92, 93, 94, 260, 133, 259, 132, 235, 280, 261, 188, 189, 190, 197, 198, 199, 57, 58,
          101, 311, 62, 200, 234, 129, 297, 424, 438, 165, 166, 155, 161, 112, 109, 303, 304,
          272, 308, 321)
NO_SUCH = (435, 437, 425, 426, 427)  # clone3 openat2 io_uring_*: "not here", so libc falls back
WRITING = 0o1 | 0o2 | 0o100 | 0o1000 | 0o2000  # O_WRONLY O_RDWR O_CREAT O_TRUNC O_APPEND


def _filter() -> list:
    """The seccomp program, as (code, jump if true, jump if false, k) BPF instructions."""
    load, eq, ge, test, ret = 0x20, 0x15, 0x35, 0x45, 0x06
    allow, eperm, enosys = 0x7FFF0000, 0x00050001, 0x00050026
    prog = [(load, 0, 0, 4), (eq, 1, 0, 0xC000003E), (ret, 0, 0, 0x80000000),  # arch: x86-64
            (load, 0, 0, 0), (ge, 0, 1, 0x40000000), (ret, 0, 0, eperm)]        # nr; no x32
    # (system call, argument, bits, fail when the bits are set?): open, openat, clone, ioctl
    for nr, arg, bits, when_set in [(2, 1, WRITING, True), (257, 2, WRITING, True),
                                    (56, 0, 0x10000, False), (16, 1, 0xFFFFFFFF, None)]:
        check = ((eq, 0, 1, 0x5412) if when_set is None else         # ioctl(fd, TIOCSTI)
                 (test, 0, 1, bits) if when_set else (test, 1, 0, bits))  # clone: CLONE_THREAD
        prog += [(eq, 0, 4, nr), (load, 0, 0, 16 + 8 * arg), check, (ret, 0, 0, eperm),
                 (ret, 0, 0, allow)]
    for nr in DENIED:
        prog += [(eq, 0, 1, nr), (ret, 0, 0, eperm)]
    for nr in NO_SUCH:
        prog += [(eq, 0, 1, nr), (ret, 0, 0, enosys)]
    return prog + [(ret, 0, 0, allow)]


def _forbid_writes() -> bool:
    """Install the seccomp filter (Linux x86-64 only); False where there is none."""
    if not sys.platform.startswith("linux"):
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl.argtypes = [ctypes.c_int] + [ctypes.c_ulong] * 4
    libc.prctl(1, 9, 0, 0, 0)  # PR_SET_PDEATHSIG: SIGKILL when the checker dies, even killed
    if os.uname().machine != "x86_64":
        return False
    prog = _filter()
    code = ctypes.create_string_buffer(b"".join(struct.pack("HBBI", *i) for i in prog))
    fprog = ctypes.create_string_buffer(struct.pack("HxxxxxxP", len(prog), ctypes.addressof(code)))
    return (libc.prctl(38, 1, 0, 0, 0) == 0                               # PR_SET_NO_NEW_PRIVS
            and libc.prctl(22, 2, ctypes.addressof(fprog), 0, 0) == 0)    # SECCOMP_MODE_FILTER


# ---- the result channel ----------------------------------------------------------------------

def send(header: dict, arrays: tuple = ()) -> None:
    """One frame: the header says each array's dtype and shape; their bytes follow."""
    header["arrays"] = [[a.dtype.str, list(a.shape)] for a in arrays]
    text = json.dumps(header).encode()
    data = memoryview(struct.pack("<I", len(text)) + text + b"".join(a.tobytes() for a in arrays))
    while data:
        data = data[os.write(CHANNEL, data):]


def _encode(result) -> tuple:
    """The VJP's result as a header and arrays: its structure, then each gradient or why not."""
    many = isinstance(result, (tuple, list))
    items, arrays = [], []
    for a in (list(result) if many else [result])[:64]:
        try:
            array = None if a is None else np.ascontiguousarray(a)
            ok = array is not None and array.dtype.kind in "biufc"
            array = array.astype(array.dtype.newbyteorder("=")) if ok else None
        except BaseException:
            ok = False
        if ok:
            arrays.append(array)
        items.append("array" if ok else None if a is None else {"bad": type(a).__name__})
    return {"structure": "tuple" if many else "single", "items": items}, tuple(arrays)


def _changed(before: list, after: list) -> list:
    return [k for k, (a, b) in enumerate(zip(before, after))
            if isinstance(a, np.ndarray) and not np.array_equal(a, b, equal_nan=True)]


def main(path: str, function: str, cpu_seconds: int) -> None:
    global CHANNEL
    CHANNEL = os.dup(1)
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)  # the learner's prints go nowhere
    cases = pickle.load(sys.stdin.buffer)  # from the parent, read before the learner runs
    file = Path(path)
    source = file.read_bytes()
    _limit(cpu_seconds)
    _forbid_writes()
    send({"step": "started"})  # the parent's clock for loading the file starts now
    module = types.ModuleType(f"_learner_{function}")
    module.__file__ = path
    try:
        exec(compile(source, path, "exec"), module.__dict__)
        vjp = getattr(module, function, None)
        send({"step": "loaded", "ok": callable(vjp)})
    except BaseException as err:
        send({"step": "loaded", "error": where(err, file)})
        return
    for args, constants, g in cases:
        mine = [a.copy() for a in args]
        mine_g = g.copy()
        arrays = ()
        try:
            result = vjp(mine_g, *mine, **{k: v.copy() if isinstance(v, np.ndarray) else v
                                           for k, v in constants.items()})
            header, arrays = ({"none": True}, ()) if result is None else _encode(result)
            header["changed"] = _changed(args, mine) + [-1] * (not np.array_equal(mine_g, g))
        except BaseException as err:
            header = {"error": f"{function} raised {where(err, file)}"}
        header["step"] = "case"
        send(header, arrays)


if __name__ == "__main__":
    main(CONFIG["file"], CONFIG["function"], CONFIG["cpu"])
    os._exit(0)  # no atexit handler or flush the learner registered may run after the frames
