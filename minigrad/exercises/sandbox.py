"""The child process that runs a learner's file: it computes their VJP's outputs, nothing else.

``checker.check_file`` starts ``python sandbox.py FILE FUNCTION OUTDIR`` in a process of its
own, with the inputs and g of every case pickled on stdin (read before the learner's file is
loaded). This process loads the file, calls the function once per case, and writes one
``frame-N.npz`` per step into OUTDIR: ``frame-0`` says whether the file loaded, then one per
case holds the returned gradients (or the error). It judges nothing: the parent compares the
gradients with its own central differences, and it reads the frames with ``minigrad.load``
(never unpickling), so nothing the learner's code does here -- patching a checker, exiting,
closing streams, looping -- can change a verdict; at worst it fails, or times out and is killed.

Only the standard library and NumPy are imported, so the child starts fast.
"""
from __future__ import annotations

import io
import os
import pickle
import sys
import traceback
import types
from pathlib import Path

import numpy as np


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


def _write(outdir: str, n: int, arrays: dict) -> None:
    """Frame ``n``, written under a temporary name and renamed: a killed child leaves none."""
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    tmp = os.path.join(outdir, f".frame-{n}.tmp")
    with open(tmp, "wb") as f:
        f.write(buf.getvalue())
    os.replace(tmp, os.path.join(outdir, f"frame-{n}.npz"))


def _encode(result) -> dict:
    """The VJP's result as arrays: its structure, then each gradient (or why it is none)."""
    many = isinstance(result, (tuple, list))
    items = list(result) if many else [result]
    out = {"structure": np.array("tuple" if many else "single"),
           "type": np.array(type(result).__name__)}
    for i, a in enumerate(items[:64]):
        if a is None:
            out[f"none.{i}"] = np.array(True)
            continue
        try:
            array = np.asarray(a)
            ok = not array.dtype.hasobject and array.dtype.kind in "biufc"
        except BaseException:
            ok = False
        if ok:
            out[f"grad.{i}"] = array
        else:
            out[f"bad.{i}"] = np.array(type(a).__name__)
    out["count"] = np.array(len(items))
    return out


def _changed(before: list, after: list) -> list:
    return [k for k, (a, b) in enumerate(zip(before, after))
            if isinstance(a, np.ndarray) and not np.array_equal(a, b, equal_nan=True)]


MEMORY = 4 << 30  # address space the learner's code may use (Linux): a runaway allocation fails


def _limit_memory() -> None:
    try:
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))
    except (ImportError, ValueError, OSError):
        pass


def main(path: str, function: str, outdir: str) -> None:
    _limit_memory()
    cases = pickle.load(sys.stdin.buffer)  # from the parent, read before the learner runs
    open(os.path.join(outdir, "started"), "wb").close()  # the parent's clock starts now
    file = Path(path)
    module = types.ModuleType(f"_learner_{function}")
    module.__file__ = path
    try:
        exec(compile(file.read_text(encoding="utf-8"), path, "exec"), module.__dict__)
        vjp = getattr(module, function, None)
        _write(outdir, 0, {"loaded": np.array(callable(vjp))})
    except BaseException as err:
        _write(outdir, 0, {"error": np.array(where(err, file))})
        return
    for n, (args, constants, g) in enumerate(cases, start=1):
        mine = [a.copy() for a in args]
        mine_g = g.copy()
        try:
            result = vjp(mine_g, *mine, **{k: v.copy() if isinstance(v, np.ndarray) else v
                                           for k, v in constants.items()})
            frame = {"none": np.array(True)} if result is None else _encode(result)
            frame["changed"] = np.array(_changed(args, mine) + [-1] * (not np.array_equal(mine_g, g)),
                                        dtype=np.int64)
        except BaseException as err:
            frame = {"error": np.array(f"{function} raised {where(err, file)}")}
        _write(outdir, n, frame)


if __name__ == "__main__":
    if sys.path and os.path.abspath(sys.path[0]) == os.path.dirname(os.path.abspath(__file__)):
        del sys.path[0]  # the learner's `import report` must not find the checker's modules
    main(*sys.argv[1:4])
    os._exit(0)  # no atexit handler or flush the learner registered may run after the frames
