"""A Hessian-vector product by double backward, minigrad against PyTorch, on the same function.

    python -m benchmarks.bench_hvp                 # B=64, D=32, H=64, float64 and float32
    python -m benchmarks.bench_hvp --B 256 --H 128

The function: a two-layer network's loss, L(W1, W2) = cross_entropy(W2 tanh(W1 x), y), for a
fixed batch x (B, D), labels y; W1 (H, D), W2 (C, H), C = 10. One call computes

    g = ∂L/∂(W1, W2)  (recorded: create_graph=True),   Hv = ∂(g·v)/∂(W1, W2)

for a fixed direction v, in minigrad (``minigrad.grad`` twice) and in PyTorch eager
(``torch.autograd.grad`` twice), from the same weights. Before timing, the two Hv agree
(float64 to 1e-10, float32 to 1e-4) and minigrad's matches central differences of the
gradient. Then the two are timed interleaved, one thread each: ``--repeat`` rounds of
``--calls`` calls; times are medians over rounds, the ratio minigrad / torch the median of the
per-round ratios (below 1: minigrad is faster).
"""
from __future__ import annotations

import os
import sys

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"  # before NumPy is imported

import argparse
import statistics
import time

if __package__ in (None, ""):  # run as a script: make the repository root importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np

import minigrad as mg
from minigrad import functional as F
from minigrad.runtime import malloc

C = 10


def problem(B: int, D: int, H: int, dtype: str, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    arrays = {"x": rng.standard_normal((B, D)), "W1": rng.standard_normal((H, D)) / np.sqrt(D),
              "W2": rng.standard_normal((C, H)) / np.sqrt(H), "v1": rng.standard_normal((H, D)),
              "v2": rng.standard_normal((C, H))}
    arrays = {k: a.astype(dtype) for k, a in arrays.items()}
    arrays["y"] = rng.integers(0, C, size=B)
    return arrays


def minigrad_hvp(p: dict):
    x = mg.tensor(p["x"])
    W1, W2 = mg.tensor(p["W1"], requires_grad=True), mg.tensor(p["W2"], requires_grad=True)

    def call():
        loss = F.cross_entropy(F.linear(mg.tanh(F.linear(x, W1)), W2), p["y"])
        g1, g2 = mg.grad(loss, [W1, W2], create_graph=True)
        return mg.grad((g1 * p["v1"]).sum() + (g2 * p["v2"]).sum(), [W1, W2])
    return call


def torch_hvp(p: dict):
    import torch
    t = {k: torch.tensor(v) for k, v in p.items()}
    W1, W2 = t["W1"].clone().requires_grad_(), t["W2"].clone().requires_grad_()

    def call():
        loss = torch.nn.functional.cross_entropy(torch.tanh(t["x"] @ W1.T) @ W2.T, t["y"])
        g1, g2 = torch.autograd.grad(loss, [W1, W2], create_graph=True)
        h = torch.autograd.grad((g1 * t["v1"]).sum() + (g2 * t["v2"]).sum(), [W1, W2])
        return [a.numpy() for a in h]
    return call


def check_differences(p: dict) -> None:
    """minigrad's Hv against central differences of the gradient along v (float64)."""
    eps, ours = 1e-6, minigrad_hvp(p)()

    def grad_at(sign):
        W1 = mg.tensor(p["W1"] + sign * eps * p["v1"], requires_grad=True)
        W2 = mg.tensor(p["W2"] + sign * eps * p["v2"], requires_grad=True)
        loss = F.cross_entropy(F.linear(mg.tanh(F.linear(mg.tensor(p["x"]), W1)), W2), p["y"])
        return mg.grad(loss, [W1, W2])
    numeric = [(a - b) / (2 * eps) for a, b in zip(grad_at(1), grad_at(-1))]
    for a, n in zip(ours, numeric):
        if not np.allclose(a, n, rtol=1e-5, atol=1e-7):
            raise AssertionError(f"Hv differs from central differences by {np.abs(a - n).max():.1e}")


def check(p: dict, dtype: str) -> None:
    """minigrad's and torch's Hv agree; in float64 minigrad's also matches differences."""
    tol = 1e-10 if dtype == "float64" else 1e-4
    for a, b in zip(minigrad_hvp(p)(), torch_hvp(p)()):
        if not np.allclose(a, b, rtol=tol, atol=tol):
            raise AssertionError(f"{dtype}: minigrad's and torch's Hv differ by "
                                 f"{np.abs(a - b).max():.1e}")
    if dtype == "float64":
        check_differences(p)


def measure(cands: dict, repeat: int, calls: int) -> dict:
    for f in cands.values():
        f()
    times, ratios = {k: [] for k in cands}, []
    for _ in range(repeat):
        this = {}
        for k, f in cands.items():
            start = time.perf_counter()
            for _ in range(calls):
                f()
            this[k] = (time.perf_counter() - start) / calls
            times[k].append(this[k])
        ratios.append(this["minigrad"] / this["torch"])
    return {k: statistics.median(v) for k, v in times.items()} | {"ratio": statistics.median(ratios)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_hvp",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--B", type=int, default=64)
    parser.add_argument("--D", type=int, default=32)
    parser.add_argument("--H", type=int, default=64)
    parser.add_argument("--repeat", type=int, default=11)
    parser.add_argument("--calls", type=int, default=5)
    args = parser.parse_args(argv)
    import torch
    torch.set_num_threads(1)
    malloc.keep_freed_memory()
    print(f"Hessian-vector product by double backward: B={args.B} D={args.D} H={args.H} C={C}; "
          f"torch {torch.__version__}, one thread; load average {os.getloadavg()[0]:.2f}")
    print(f"{'dtype':<8} {'minigrad (µs)':>14} {'torch (µs)':>11} {'minigrad/torch':>15}")
    for dtype in ("float64", "float32"):
        p = problem(args.B, args.D, args.H, dtype)
        check(p, dtype)
        r = measure({"minigrad": minigrad_hvp(p), "torch": torch_hvp(p)}, args.repeat, args.calls)
        print(f"{dtype:<8} {1e6 * r['minigrad']:>14.1f} {1e6 * r['torch']:>11.1f} "
              f"{r['ratio']:>15.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
