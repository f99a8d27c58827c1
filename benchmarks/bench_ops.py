"""Per-op overhead: forward+backward microseconds per op, minigrad vs bare NumPy vs PyTorch eager.

    python -m benchmarks.bench_ops                         # every op, 8x8 and 256x256, f32 and f64
    python benchmarks/bench_ops.py --sizes 8 --dtypes float32 --ops add,matmul

For a fair NumPy-vs-torch comparison, run it with OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE unset
(this machine sets both for old OpenBLAS builds; they slow a current NumPy's matmul):

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python -m benchmarks.bench_ops

What is timed, per op, input size n (n x n inputs) and dtype:

    numpy fwd     the bare NumPy forward call (``a + b``, ``np.exp(x)``, ...)
    mg fwd        the minigrad op on leaves with requires_grad=True (the graph is recorded)
    torch fwd     the same in PyTorch eager (only when torch is importable)
    numpy f+b     the NumPy forward plus a hand-written NumPy VJP: the arithmetic alone
    mg f+b        forward + ``out.backward(g)`` with a fixed seed g; leaves' .grad reset to None
    torch f+b     the same in PyTorch eager
    overhead      mg f+b - numpy f+b: what the engine adds on top of the arithmetic
    mg/torch      mg f+b / torch f+b (below 1: minigrad is faster), as the median of the ratios
                  of the two batches timed back to back in each repeat

Method: one thread -- OMP/OPENBLAS/MKL_NUM_THREADS=1 are set below before NumPy is imported,
and threadpoolctl (when installed) and ``torch.set_num_threads(1)`` limit the pools as well.
Before timing, minigrad's and torch's gradients are checked against the NumPy VJP. Each
candidate is warmed up and timed in batches of calls lasting at least ``--min-time``; the
candidates of one op are interleaved batch by batch, so drift on a shared machine hits them
alike, and each reports the median per-call time over ``--repeat`` batches
(``time.perf_counter``); the ratio pairs the batches of one repeat, so a burst of load from
another process on a shared machine cancels out. The garbage collector stays on, as in real
use. The load average is printed before and after: on a busy machine, rerun.

Memory allocator: ``minigrad.runtime.malloc.keep_freed_memory()`` first, as ``python -m benchmarks``
does. With glibc's defaults, whether a freed 256 x 256 block goes back to the OS (to be faulted
in again by the next call) depends on what ran before: float64 mul's f+b measured 890 µs
instead of ~50 in a full run.
"""
from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"  # must happen before NumPy (or torch) is imported

import argparse
import math
import platform
import statistics
import sys
import time
from typing import Callable, NamedTuple

if __package__ in (None, ""):  # run as a script: make the repository root importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np

import minigrad as mg
from minigrad import functional as F
from minigrad.runtime.malloc import keep_freed_memory

try:
    import torch
except ImportError:
    torch = None

try:
    import threadpoolctl
except ImportError:
    threadpoolctl = None


# ---- the ops ----------------------------------------------------------------------------------

def _softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _logsumexp(x):
    m = x.max(axis=-1, keepdims=True)
    return (m + np.log(np.exp(x - m).sum(axis=-1, keepdims=True)))[:, 0]


def _np_max_vjp(g, x):
    top = x.max(axis=-1, keepdims=True)
    winners = x == top
    return top[:, 0], winners * (g[:, None] / winners.sum(axis=-1, keepdims=True))


def _np_getitem_vjp(g, x):
    gx = np.zeros_like(x)
    gx[1:, ::2] = g
    return x[1:, ::2], gx


def _np_cross_entropy(x, t):
    p = _softmax(x)
    return -np.log(p[np.arange(len(t)), t]).mean()


def _np_cross_entropy_vjp(g, x, t):
    p = _softmax(x)
    rows = np.arange(len(t))
    loss = -np.log(p[rows, t]).mean()
    p[rows, t] -= 1
    return loss, p * (g / len(t)), None


class Op(NamedTuple):
    name: str
    shapes: Callable        # n -> shapes of the inputs ("int" marks integer targets)
    numpy: Callable         # the bare NumPy forward
    numpy_vjp: Callable     # (g, *arrays) -> forward and hand-written gradients, one per input
    minigrad: Callable      # (*tensors) -> Tensor
    torch: Callable | None = None  # defaults to ``minigrad`` (same operators and methods)


SQ = lambda n: [(n, n)]             # noqa: E731
SQ2 = lambda n: [(n, n), (n, n)]    # noqa: E731

OPS = [
    Op("add", SQ2, lambda a, b: a + b, lambda g, a, b: (a + b, g, g), lambda a, b: a + b),
    Op("add (row bcast)", lambda n: [(n, n), (n,)], lambda a, b: a + b,
       lambda g, a, b: (a + b, g, g.sum(axis=0)), lambda a, b: a + b),
    Op("mul", SQ2, lambda a, b: a * b, lambda g, a, b: (a * b, g * b, g * a), lambda a, b: a * b),
    Op("div", SQ2, lambda a, b: a / b,
       lambda g, a, b: (a / b, g / b, -g * a / (b * b)), lambda a, b: a / b),
    Op("exp", SQ, np.exp, lambda g, x: (lambda y: (y, g * y))(np.exp(x)), lambda x: x.exp()),
    Op("log", SQ, np.log, lambda g, x: (np.log(x), g / x), lambda x: x.log()),
    Op("tanh", SQ, np.tanh, lambda g, x: (lambda y: (y, g * (1 - y * y)))(np.tanh(x)),
       lambda x: x.tanh()),
    Op("sigmoid", SQ, lambda x: 1 / (1 + np.exp(-x)),
       lambda g, x: (lambda y: (y, g * y * (1 - y)))(1 / (1 + np.exp(-x))), lambda x: x.sigmoid()),
    Op("relu", SQ, lambda x: np.maximum(x, 0), lambda g, x: (np.maximum(x, 0), g * (x > 0)),
       lambda x: x.relu()),
    Op("sum", SQ, np.sum, lambda g, x: (x.sum(), np.broadcast_to(g, x.shape)), lambda x: x.sum()),
    Op("mean", SQ, np.mean, lambda g, x: (x.mean(), np.broadcast_to(g / x.size, x.shape)),
       lambda x: x.mean()),
    Op("max (axis -1)", SQ, lambda x: x.max(axis=-1), _np_max_vjp, lambda x: x.max(axis=-1),
       lambda x: torch.amax(x, dim=-1)),  # amax shares the gradient between ties, as minigrad
    Op("matmul", SQ2, lambda a, b: a @ b, lambda g, a, b: (a @ b, g @ b.T, a.T @ g),
       lambda a, b: a @ b),
    Op("transpose", SQ, lambda x: x.T, lambda g, x: (x.T, g.T), lambda x: x.T),
    Op("reshape", SQ, lambda x: x.reshape(-1), lambda g, x: (x.reshape(-1), g.reshape(x.shape)),
       lambda x: x.reshape(-1)),
    Op("getitem [1:, ::2]", SQ, lambda x: x[1:, ::2], _np_getitem_vjp, lambda x: x[1:, ::2]),
    Op("concatenate", SQ2, lambda a, b: np.concatenate([a, b]),
       lambda g, a, b: (np.concatenate([a, b]), *np.split(g, [len(a)])),
       lambda a, b: mg.concatenate([a, b]), lambda a, b: torch.cat([a, b])),
    Op("softmax", SQ, _softmax,
       lambda g, x: (lambda y: (y, y * (g - (g * y).sum(axis=-1, keepdims=True))))(_softmax(x)),
       lambda x: F.softmax(x, axis=-1), lambda x: torch.softmax(x, dim=-1)),
    Op("logsumexp", SQ, _logsumexp, lambda g, x: (_logsumexp(x), g[:, None] * _softmax(x)),
       lambda x: x.logsumexp(axis=-1), lambda x: torch.logsumexp(x, dim=-1)),
    Op("linear (x Wt + b)", lambda n: [(n, n), (n, n), (n,)], lambda x, w, b: x @ w.T + b,
       lambda g, x, w, b: (x @ w.T + b, g @ w, g.T @ x, g.sum(axis=0)),
       lambda x, w, b: F.linear(x, w, b), lambda x, w, b: torch.nn.functional.linear(x, w, b)),
    Op("cross_entropy", lambda n: [(n, n), "int"], _np_cross_entropy, _np_cross_entropy_vjp,
       lambda x, t: F.cross_entropy(x, t), lambda x, t: torch.nn.functional.cross_entropy(x, t)),
]


# ---- timing -----------------------------------------------------------------------------------

def _batch_seconds(fn, number):
    start = time.perf_counter()
    for _ in range(number):
        fn()
    return time.perf_counter() - start


def measure(candidates: dict, repeat: int, min_time: float) -> dict:
    """Seconds per call of each candidate, one sample per repeat, their batches interleaved."""
    numbers = {}
    for name, fn in candidates.items():
        for _ in range(3):  # warm-up: caches, allocator, lazy initialisation
            fn()
        number = 1
        while _batch_seconds(fn, number) < min_time:
            number *= 2
        numbers[name] = number
    samples = {name: [] for name in candidates}
    for _ in range(repeat):
        for name, fn in candidates.items():
            samples[name].append(_batch_seconds(fn, numbers[name]) / numbers[name])
    return samples


def _inputs(op, n, dtype, rng):
    arrays = []
    for shape in op.shapes(n):
        if shape == "int":
            arrays.append(rng.integers(0, n, size=n))
        elif op.name in ("log", "div"):
            arrays.append(rng.uniform(0.5, 1.5, size=shape).astype(dtype))
        else:
            arrays.append(rng.standard_normal(shape).astype(dtype))
    return arrays


def _fwd_bwd(fn, leaves, seed):
    """One forward + backward; the leaves' .grad is reset so every call does the same work."""
    def run():
        fn(*leaves).backward(seed)
        for t in leaves:
            t.grad = None
    return run


def bench_op(op, n, dtype, repeat, min_time, rng):
    """Samples (seconds per call, one per repeat) of every candidate for one op, size, dtype."""
    arrays = _inputs(op, n, dtype, rng)
    floats = [a.dtype.kind == "f" for a in arrays]
    out = np.asarray(op.numpy(*arrays))
    seed = rng.standard_normal(out.shape).astype(dtype)
    want = op.numpy_vjp(seed, *arrays)[1:]

    mg_leaves = [mg.tensor(a, requires_grad=f) for a, f in zip(arrays, floats)]
    op.minigrad(*mg_leaves).backward(seed)
    _check(op, n, dtype, "minigrad", [t.grad for t in mg_leaves], want)
    for t in mg_leaves:
        t.grad = None
    forward = {"numpy fwd": lambda: op.numpy(*arrays), "mg fwd": lambda: op.minigrad(*mg_leaves)}
    both = {"numpy f+b": lambda: op.numpy_vjp(seed, *arrays),
            "mg f+b": _fwd_bwd(op.minigrad, mg_leaves, seed)}
    if torch is not None:
        tfn = op.torch or op.minigrad
        t_leaves = [torch.from_numpy(a.copy()).requires_grad_(f) for a, f in zip(arrays, floats)]
        t_seed = torch.from_numpy(seed)
        tfn(*t_leaves).backward(t_seed)
        _check(op, n, dtype, "torch", [None if t.grad is None else t.grad.numpy()
                                       for t in t_leaves], want)
        for t in t_leaves:
            t.grad = None
        forward["torch fwd"] = lambda: tfn(*t_leaves)
        both["torch f+b"] = _fwd_bwd(tfn, t_leaves, t_seed)  # right after mg f+b: a pair
    return measure({**forward, **both}, repeat, min_time)


def _check(op, n, dtype, who, got, want):
    tol = 1e-4 if dtype == "float32" else 1e-10
    for i, (g, w) in enumerate(zip(got, want)):
        if w is None:
            continue
        if g is None or not np.allclose(g, w, rtol=tol, atol=tol):
            raise AssertionError(f"{who} {op.name} n={n} {dtype}: gradient of input {i} "
                                 f"differs from the NumPy VJP")


# ---- report -----------------------------------------------------------------------------------

def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    lines = [f"cpu: {cpu}, {os.cpu_count()} logical cores",
             f"python {platform.python_version()}, numpy {np.__version__}, "
             f"torch {torch.__version__ if torch else 'not installed'}"]
    if threadpoolctl is not None:
        for pool in threadpoolctl.threadpool_info():
            lines.append(f"{pool['internal_api']} {pool.get('version')} "
                         f"({pool.get('architecture', '?')} kernels): {pool['num_threads']} thread(s)")
    else:
        lines.append("threadpoolctl not installed: threads limited by environment variables only")
    if torch is not None:
        lines.append(f"torch threads: {torch.get_num_threads()}")
    coretype = {v: os.environ.get(v) for v in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")}
    lines.append("OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE: "
                 + ", ".join(f"{k}={v}" for k, v in coretype.items() if v) if any(coretype.values())
                 else "OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE: unset")
    return "\n".join(lines)


COLUMNS = ["numpy fwd", "mg fwd", "torch fwd", "numpy f+b", "mg f+b", "torch f+b"]


def table(rows, have_torch) -> str:
    cols = [c for c in COLUMNS if have_torch or not c.startswith("torch")]
    head = ["op", "n"] + [f"{c} µs" for c in cols] + ["overhead µs"] + (["mg/torch"] if have_torch else [])
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, n, samples in rows:
        t = {c: statistics.median(s) for c, s in samples.items()}
        cells = [name, str(n)] + [f"{t[c] * 1e6:.1f}" for c in cols]
        cells.append(f"{(t['mg f+b'] - t['numpy f+b']) * 1e6:.1f}")
        if have_torch:
            cells.append(f"{ratio(samples):.2f}")
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)


def ratio(samples) -> float:
    """mg f+b / torch f+b: the median over repeats of the two batches timed back to back."""
    return statistics.median(m / t for m, t in zip(samples["mg f+b"], samples["torch f+b"]))


def main(argv=None) -> None:
    p = argparse.ArgumentParser(prog="python -m benchmarks.bench_ops",
                                description=__doc__.split("\n")[0])
    p.add_argument("--sizes", type=int, nargs="+", default=[8, 256], help="n for n x n inputs")
    p.add_argument("--dtypes", nargs="+", default=["float32", "float64"])
    p.add_argument("--ops", default="", help="comma-separated op names (prefixes) to run")
    p.add_argument("--repeat", type=int, default=21, help="timed batches per candidate")
    p.add_argument("--min-time", type=float, default=0.002, help="seconds per timed batch")
    p.add_argument("--no-torch", action="store_true", help="skip PyTorch even if installed")
    args = p.parse_args(argv)
    kept = keep_freed_memory()  # as python -m benchmarks does: no page faults for reused buffers

    global torch
    if args.no_torch:
        torch = None
    if torch is not None:
        torch.set_num_threads(1)
    limits = threadpoolctl.threadpool_limits(1) if threadpoolctl is not None else None
    wanted = [w.strip() for w in args.ops.split(",") if w.strip()]
    ops = [op for op in OPS if not wanted or any(op.name.startswith(w) for w in wanted)]
    rng = np.random.default_rng(0)

    print(machine())
    print(f"median of {args.repeat} batches of >= {args.min_time * 1e3:g} ms, one thread")
    print("glibc malloc: " + ("freed memory kept for reuse (minigrad/runtime/malloc.py)" if kept
                              else "defaults (not glibc)"))
    print("load average before: %.2f %.2f %.2f\n" % os.getloadavg())
    for dtype in args.dtypes:
        rows = []
        for n in args.sizes:
            for op in ops:
                rows.append((op.name, n, bench_op(op, n, dtype, args.repeat, args.min_time, rng)))
        print(f"### {dtype}\n")
        print(table(rows, torch is not None))
        if torch is not None:
            for n in args.sizes:
                ratios = [ratio(samples) for _, m, samples in rows if m == n]
                gmean = math.exp(statistics.fmean(math.log(r) for r in ratios))
                print(f"\n{dtype} n={n}: mg/torch geometric mean {gmean:.2f}, "
                      f"max {max(ratios):.2f}, ops with ratio <= 1.0: "
                      f"{sum(r <= 1.0 for r in ratios)}/{len(ratios)}")
        print()
    print("load average after: %.2f %.2f %.2f" % os.getloadavg())
    if limits is not None:
        limits.restore_original_limits()


if __name__ == "__main__":
    main()
