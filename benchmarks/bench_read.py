"""The attention read as one op (``read``) against the composed read (``attend``).

    python -m benchmarks.bench_read                      # B=64, S=50, D=128, float64 and float32
    python benchmarks/bench_read.py --B 64 --S 50 --D 128 --T 1 --repeat 41
    python -m benchmarks.bench_read --threads default    # NumPy's own thread count

What is timed (``attention.read`` vs ``attention.attend``, same inputs, same mask; both are
the core, both differentiate twice):

    read        read(e, h, mask): the softmax node and one "read" node whose VJP is the formula
                ∂L/∂e_j = α_j g·(h_j − c) (score_grad) and ∂L/∂h_j = α_j g
    composed    attend(e, h, mask): masked softmax, a new query axis, matmul, the axis taken
                away again, each a node whose VJP autograd chains

Each call is ``c, _ = fn(e, h, mask); c.backward(g)`` on leaves e (B, S) and h (B, S, D) (or
e (B, T, S) with ``--T``), a quarter of the source positions of half the batch masked, g a fixed
random seed; the leaves' .grad is reset between calls. Before timing, the two gradients are
checked to agree to 1e-12 (float64). The candidates are interleaved batch by batch (so drift on
a shared machine hits them alike); each reports the median time per call over ``--repeat``
batches of at least ``--min-time`` seconds. Ratio = composed / read (above 1: read is faster).
"""
from __future__ import annotations

import os
import sys

_THREADS = "1"
if "--threads" in sys.argv[:-1]:
    _THREADS = sys.argv[sys.argv.index("--threads") + 1]
if _THREADS != "default":
    for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[_var] = _THREADS  # must happen before NumPy is imported

import argparse
import platform
import statistics
import time

if __package__ in (None, ""):  # run as a script: make the repository root importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np

import minigrad as mg
from attention import attend, read
from minigrad.runtime.malloc import keep_freed_memory


def make_inputs(B: int, T: int, S: int, D: int, dtype, seed: int = 0):
    """Scores (B, [T,] S), values (B, S, D), mask (B, S), seed gradient g (B, [T,] D)."""
    rng = np.random.default_rng(seed)
    lead = (B,) if T == 1 else (B, T)
    scores = rng.normal(size=lead + (S,)).astype(dtype)
    values = rng.normal(size=(B, S, D)).astype(dtype)
    mask = np.ones((B, S), dtype=bool)
    mask[B // 2:, S - S // 4:] = False                 # padding at the end of half the batch
    g = rng.normal(size=lead + (D,)).astype(dtype)
    return scores, values, mask, g


def step(fn, e, h, mask, g):
    """One forward + backward of the read; the leaves' gradients are reset first."""
    e.grad = h.grad = None
    c, _ = fn(e, h, mask)
    c.backward(g)


def time_batches(candidates: dict, min_time: float, repeat: int) -> dict:
    """Median seconds per call of each candidate, batches interleaved."""
    calls = {}
    for name, call in candidates.items():  # warm up, then size a batch to last min_time
        call()
        n, start = 1, time.perf_counter()
        while True:
            for _ in range(n):
                call()
            if time.perf_counter() - start >= min_time:
                break
            n *= 2
            start = time.perf_counter()
        calls[name] = n
    samples = {name: [] for name in candidates}
    for _ in range(repeat):
        for name, call in candidates.items():
            n = calls[name]
            start = time.perf_counter()
            for _ in range(n):
                call()
            samples[name].append((time.perf_counter() - start) / n)
    return {name: statistics.median(s) for name, s in samples.items()}


def bench(B: int, T: int, S: int, D: int, dtype, min_time: float, repeat: int) -> dict:
    scores, values, mask, g = make_inputs(B, T, S, D, dtype)
    e, h = mg.tensor(scores, requires_grad=True), mg.tensor(values, requires_grad=True)
    grads = {}
    for name, fn in (("read", read), ("composed", attend)):
        step(fn, e, h, mask, g)
        grads[name] = (e.grad.copy(), h.grad.copy())
    tol = 1e-12 if dtype == np.float64 else 1e-4
    for a, b in zip(grads["read"], grads["composed"]):
        np.testing.assert_allclose(a, b, rtol=0, atol=tol)
    return time_batches({"read": lambda: step(read, e, h, mask, g),
                         "composed": lambda: step(attend, e, h, mask, g)}, min_time, repeat)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_read",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--B", type=int, default=64)
    parser.add_argument("--T", type=int, default=1, help="queries per example (1: scores (B, S))")
    parser.add_argument("--S", type=int, default=50)
    parser.add_argument("--D", type=int, default=128)
    parser.add_argument("--dtypes", default="float64,float32")
    parser.add_argument("--repeat", type=int, default=21)
    parser.add_argument("--min-time", type=float, default=0.05)
    parser.add_argument("--threads", default="1", help="BLAS threads: a number or 'default'")
    args = parser.parse_args(argv)
    keep_freed_memory()  # as python -m benchmarks does: no page faults for reused buffers
    print(f"read vs composed attend, forward + backward: B={args.B} T={args.T} "
          f"S={args.S} D={args.D}")
    print(f"python {platform.python_version()}, numpy {np.__version__}, threads {_THREADS}, "
          f"median of {args.repeat} interleaved batches")
    print(f"{'dtype':<8} {'read (µs)':>11} {'composed (µs)':>14} {'composed/read':>15}")
    for dtype in args.dtypes.split(","):
        t = bench(args.B, args.T, args.S, args.D, np.dtype(dtype).type, args.min_time, args.repeat)
        print(f"{dtype:<8} {t['read'] * 1e6:>11.1f} {t['composed'] * 1e6:>14.1f} "
              f"{t['composed'] / t['read']:>15.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
