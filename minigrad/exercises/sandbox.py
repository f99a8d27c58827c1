"""The child process that runs a learner's file: it computes their VJP's outputs, nothing else.

``child.run`` starts ``python -I -S -B sandbox.py CONFIG`` in a session of its own, in a fresh
private folder that holds a copy of the learner's file and the cases (pickled by the parent,
read on stdin before the learner's code runs). Isolated mode: no user site, no current folder
on the path; CONFIG names the only extra folders on it (NumPy's and minigrad's). Before the
learner's code runs, this process locks itself down:

* resource limits: CPU seconds, 1 GiB of address space, files of 0 bytes, no new processes
  (the last is ignored for root, which the filter below covers);
* run as root (as in CI), it gives up root: new network and IPC namespaces where it can,
  every capability (none can come back), and it becomes ``nobody`` when the Python install
  is readable by every user (else it stays uid 0 without any capability);
* on Linux, death with the checker: if the checker dies, even by SIGKILL, so does this;
* on Linux x86-64, a seccomp *allow-list*: reading files, memory, time, threads, its own signal
  handlers; ``openat`` only for reading, ``clone`` only for threads, ``prlimit64`` only on
  itself, ``fcntl`` without F_SETOWN/F_SETSIG/O_ASYNC, a few harmless ``ioctl``. Every other
  system call fails with EPERM (exec, sockets, writing or changing files, mounts, System V
  IPC, ptrace, signals to others, and whatever Linux adds later), for this process and its
  threads.

Then it loads the file, calls the function once per case (a VJP with g first, a forward
exercise's function without it) and sends one frame per step on a
pipe the learner's ``print`` does not reach (stdout goes to /dev/null). A frame is
``<u32 length><JSON header><raw array bytes>``; a case's frame holds the VJP's gradients,
then the inputs and g as they are after the call (the parent tells whether they changed). The
parent validates every field and size and never unpickles or inflates anything. This process
judges nothing: at worst it fails.

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

MEMORY = 1 << 30  # address space the learner's code may use (Linux): a runaway allocation fails
CHANNEL = 1       # the result pipe; moved off fd 1 by ``main``


def where(err: BaseException, path: Path | None) -> str:
    """``Type: message`` plus the line of the learner's file where it happened."""
    if isinstance(err, SyntaxError):  # no line: e.g. a byte that is no UTF-8
        return f"SyntaxError: {err.msg}" + (f"\n  at {Path(err.filename or '?').name} line "
                                            f"{err.lineno}: {(err.text or '').strip()}"
                                            if err.lineno else "")
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


# The allow-list (x86-64 system call numbers), found with `strace -f` over every reference
# solution: read write close stat fstat lstat poll lseek mmap mprotect munmap brk rt_sigaction
# rt_sigprocmask rt_sigreturn pread64 readv writev access select sched_yield mremap msync
# mincore madvise dup dup2 nanosleep getitimer alarm setitimer getpid exit uname getdents
# getcwd chdir fchdir readlink umask gettimeofday getrlimit getrusage sysinfo times getuid
# getgid geteuid getegid getppid getpgrp getgroups getresuid getresgid getpgid getsid
# rt_sigpending rt_sigtimedwait rt_sigsuspend sigaltstack statfs fstatfs getpriority
# sched_getparam sched_getscheduler sched_get_priority_max/min arch_prctl gettid time futex
# sched_getaffinity getdents64 set_tid_address restart_syscall fadvise64 clock_gettime
# clock_getres clock_nanosleep exit_group mbind set_mempolicy get_mempolicy newfstatat
# readlinkat faccessat pselect6 ppoll set_robust_list get_robust_list dup3 preadv getcpu
# getrandom membarrier preadv2 statx rseq close_range faccessat2 -- and, with their arguments
# checked in ``_filter``, open openat clone ioctl prlimit64 prctl fcntl. Anything else fails
# with EPERM: exec, sockets, writing to files, mounts, System V IPC, ptrace, keys, bpf, ...
# and every system call added to Linux later.
ALLOWED = (0, 1, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 17, 19, 20, 21, 23, 24, 25, 26,
           27, 28, 32, 33, 35, 36, 37, 38, 39, 60, 63, 78, 79, 80, 81, 89, 95, 96, 97, 98, 99,
           100, 102, 104, 107, 108, 110, 111, 115, 118, 120, 121, 124, 127, 128, 130, 131, 137,
           138, 140, 143, 145, 146, 147, 158, 186, 201, 202, 204, 217, 218, 219, 221, 228, 229,
           230, 231, 237, 238, 239, 262, 267, 269, 270, 271, 273, 274, 292, 295, 309, 318, 324,
           327, 332, 334, 436, 439)
NO_SUCH = (435, 437, 425, 426, 427)  # clone3 openat2 io_uring_*: "not here", so libc falls back
WRITING = 0o1 | 0o2 | 0o100 | 0o1000 | 0o2000  # O_WRONLY O_RDWR O_CREAT O_TRUNC O_APPEND
O_ASYNC, F_SETFL = 0o20000, 4
IOCTLS = (0x5401, 0x5450, 0x5451, 0x541B)      # TCGETS FIONCLEX FIOCLEX FIONREAD
FCNTLS = (0, 1, 2, 3, 1030)                    # F_DUPFD F_GETFD F_SETFD F_GETFL F_DUPFD_CLOEXEC
NOBODY = 65534                                 # the user and group root's child becomes


def _filter(pid: int) -> list:
    """The seccomp program, as (code, jump if true, jump if false, k) BPF instructions."""
    load, eq, test, ret = 0x20, 0x15, 0x45, 0x06
    allow, eperm, enosys, enotty = 0x7FFF0000, 0x00050001, 0x00050026, 0x00050019

    def arg(n):
        return (load, 0, 0, 16 + 8 * n)  # the low 32 bits: all the kernel reads of these

    def one_of(values, otherwise):
        return [i for v in values for i in [(eq, 0, 1, v), (ret, 0, 0, allow)]] + [
            (ret, 0, 0, otherwise)]

    def bits(mask, allowed_when_set):
        return [(test, 0, 1, mask) if allowed_when_set else (test, 1, 0, mask),
                (ret, 0, 0, allow), (ret, 0, 0, eperm)]

    blocks = {2: [arg(1)] + bits(WRITING, False),              # open: reading only
              257: [arg(2)] + bits(WRITING, False),            # openat: reading only
              56: [arg(0)] + bits(0x10000, True),              # clone: CLONE_THREAD only
              16: [arg(1)] + one_of(IOCTLS, enotty),           # ioctl: no TIOCSTI, FIOSETOWN..
              302: [arg(0)] + one_of((0, pid), eperm),         # prlimit64: its own limits only
              157: [arg(0)] + one_of((15, 16), eperm),         # prctl: PR_SET_NAME/GET_NAME
              72: [arg(1)] + one_of(FCNTLS, eperm)[:-1] + [    # fcntl: no F_SETOWN, F_SETSIG..
                  (eq, 0, 3, F_SETFL), arg(2)] + bits(O_ASYNC, False)}  # F_SETFL: no O_ASYNC
    prog = [(load, 0, 0, 4), (eq, 1, 0, 0xC000003E), (ret, 0, 0, 0x80000000),  # arch: x86-64
            (load, 0, 0, 0), (0x35, 0, 1, 0x40000000), (ret, 0, 0, eperm)]     # nr; no x32
    for nr, block in blocks.items():
        prog += [(eq, 0, len(block), nr)] + block
    for nr in NO_SUCH:
        prog += [(eq, 0, 1, nr), (ret, 0, 0, enosys)]
    for nr in ALLOWED:
        prog += [(eq, 0, 1, nr), (ret, 0, 0, allow)]
    return prog + [(ret, 0, 0, eperm)]


def _readable_by_all(folders) -> bool:
    """Whether every user can read these folders (and reach them): then root's child can
    become ``NOBODY`` and still import what it may import."""
    try:
        return all(os.stat(folder).st_mode & 0o005 == 0o005
                   and all(os.stat(p).st_mode & 0o001 for p in Path(folder).parents)
                   for folder in folders)
    except OSError:
        return False


def _lock_down(file: Path, folders: list) -> list:
    """Drop root's powers, then install the filter (Linux x86-64 only); ``folders`` are those
    the learner's code may import from. The layers in force."""
    if not sys.platform.startswith("linux"):
        return []
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl.argtypes = [ctypes.c_int] + [ctypes.c_ulong] * 4
    layers, parent = [], os.getppid()
    if os.geteuid() == 0:
        if libc.unshare(0x40000000 | 0x08000000) == 0:  # CLONE_NEWNET | CLONE_NEWIPC
            layers.append("namespaces")
        for cap in range(64):
            libc.prctl(24, cap, 0, 0, 0)  # PR_CAPBSET_DROP: none can come back
        if _readable_by_all([Path(os.__file__).parent, *folders]):  # else: uid 0, no capability
            try:  # where() and tracebacks read the file again
                os.chown(file.parent, NOBODY, NOBODY)
                os.chown(file, NOBODY, NOBODY)
            except OSError:  # then without the line of the learner's file
                pass
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            layers.append("nobody")
        header = struct.pack("Ii", 0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this process
        if libc.syscall(126, header, bytes(24)) == 0:  # capset: no capabilities at all
            layers.append("no capabilities")
    libc.prctl(1, 9, 0, 0, 0)  # PR_SET_PDEATHSIG: SIGKILL when the checker dies (after setuid,
    if os.getppid() != parent:  # which clears it); the checker may have died already
        os._exit(1)
    if os.uname().machine != "x86_64":
        return layers
    prog = _filter(os.getpid())
    code = ctypes.create_string_buffer(b"".join(struct.pack("HBBI", *i) for i in prog))
    fprog = ctypes.create_string_buffer(struct.pack("HxxxxxxP", len(prog), ctypes.addressof(code)))
    if (libc.prctl(38, 1, 0, 0, 0) == 0                      # PR_SET_NO_NEW_PRIVS
            and libc.syscall(317, 1, 1, ctypes.c_void_p(ctypes.addressof(fprog))) == 0):
        layers.append("seccomp")  # seccomp(SET_MODE_FILTER, TSYNC): for every thread, not one
    return layers


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
            array = None if a is None else np.asarray(a)
            ok = array is not None and array.dtype.kind in "biufc"
            array = array.astype(array.dtype.newbyteorder("=")) if ok else None
        except BaseException:
            ok = False
        if ok:
            arrays.append(array)
        items.append("array" if ok else None if a is None else {"bad": type(a).__name__})
    return {"structure": "tuple" if many else "single", "items": items}, tuple(arrays)


def main(path: str, function: str, cpu_seconds: int, folders: list, forward: bool) -> None:
    """Run ``function`` of the file at ``path`` on each case: ``function(g, *inputs,
    **constants)``, a VJP, or, for a forward exercise, ``function(*inputs, **constants)``."""
    global CHANNEL
    CHANNEL = os.dup(1)
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)  # the learner's prints go nowhere
    cases = pickle.load(sys.stdin.buffer)  # from the parent, read before the learner runs
    file = Path(path)
    source = file.read_bytes()
    _limit(cpu_seconds)
    _lock_down(file.resolve(), folders)
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
        try:
            kept = {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in constants.items()}
            result = vjp(*mine, **kept) if forward else vjp(mine_g, *mine, **kept)
            header, arrays = ({"none": True}, ()) if result is None else _encode(result)
            # then the inputs and g as they are now: the parent compares them with what it sent
            arrays += tuple(np.asarray(a) for a in mine + [mine_g])
        except BaseException as err:
            header, arrays = {"error": f"{function} raised {where(err, file)}"}, ()
        header["step"] = "case"
        send(header, arrays)


if __name__ == "__main__":
    main(CONFIG["file"], CONFIG["function"], CONFIG["cpu"], CONFIG["path"],
         CONFIG["forward"] is True)
    os._exit(0)  # no atexit handler or flush the learner registered may run after the frames
