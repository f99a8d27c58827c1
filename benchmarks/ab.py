"""Two revisions of the engine in one process: is the first-order path slower than before?

    python -m benchmarks.ab bfe3e65 HEAD            # any two git revisions of this repository

Each revision's ``minigrad/`` is taken from git (``git archive``) into a temporary folder
under a package name of its own, so both load into **one** process and run interleaved,
round by round, with the order alternating: the machine's load hits both alike, and the
ratio B / A (the median of the per-round ratios) means something even on a busy machine,
where absolute times do not. Workloads, float64 and float32, one BLAS thread:

* ``chain``: forward + backward of a six-op graph on 8 × 8 leaves,
  ((a * b + a).tanh() @ b).sigmoid().sum() -- the engine's cost per node, almost no arithmetic;
* ``mlp``: forward + backward of a two-layer tanh network's cross-entropy, B = 64, 32 → 64 → 10
  -- a small step where the arithmetic matters too.
"""
from __future__ import annotations

import argparse
import importlib
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import time

import numpy as np

from minigrad.runtime import blas

ROUNDS, CALLS = 15, 200


def load(revision: str, name: str, folder: pathlib.Path):
    """``minigrad/`` as it is at ``revision``, imported as the package ``name``."""
    root = pathlib.Path(__file__).resolve().parent.parent
    archive = subprocess.run(["git", "-C", str(root), "archive", revision, "minigrad"],
                             capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    (folder / "minigrad").rename(folder / name)
    for path in (folder / name).rglob("*.py"):
        path.write_text(re.sub(r"\bminigrad\b", name, path.read_text()))
    return importlib.import_module(name)


def workloads(mg, dtype: str) -> dict:
    """name -> a function running one forward + backward with ``mg``, the same numbers each."""
    rng = np.random.default_rng(0)
    a, b = (mg.Tensor(rng.standard_normal((8, 8)).astype(dtype), requires_grad=True)
            for _ in range(2))
    x = mg.Tensor(rng.standard_normal((64, 32)).astype(dtype))
    w1, w2 = (mg.Tensor(0.1 * rng.standard_normal(s).astype(dtype), requires_grad=True)
              for s in ((32, 64), (64, 10)))
    onehot = np.eye(10, dtype=dtype)[rng.integers(0, 10, 64)]                 # (64, 10)

    def chain():
        ((a * b + a).tanh() @ b).sigmoid().sum().backward()

    def mlp():
        logits = (x @ w1).tanh() @ w2                                          # (64, 10)
        (-(logits - logits.logsumexp(axis=1, keepdims=True)) * onehot).sum().backward()
    return {"chain": chain, "mlp": mlp}


def per_call(f) -> float:
    start = time.perf_counter()
    for _ in range(CALLS):
        f()
    return (time.perf_counter() - start) / CALLS


def compare(engines: list, dtype: str) -> list:
    """Rows (workload, A µs, B µs, median ratio B/A, spread) for two engines."""
    runs = [workloads(mg, dtype) for mg in engines]
    rows = []
    for name in runs[0]:
        fs = [r[name] for r in runs]
        for f in fs:
            per_call(f)                                                        # warm-up
        times = [[], []]
        for k in range(ROUNDS):
            for i in ((0, 1) if k % 2 == 0 else (1, 0)):
                times[i].append(per_call(fs[i]))
        ratios = sorted(tb / ta for ta, tb in zip(*times))
        rows.append((name, 1e6 * np.median(times[0]), 1e6 * np.median(times[1]),
                     ratios[len(ratios) // 2], ratios[1], ratios[-2]))
    return rows


def main(argv=None) -> None:
    p = argparse.ArgumentParser(prog="python -m benchmarks.ab", description=__doc__.split("\n")[0])
    p.add_argument("a", help="the revision before (e.g. a commit)")
    p.add_argument("b", nargs="?", default="HEAD", help="the revision after (default HEAD)")
    args = p.parse_args(argv)
    blas.set_threads(1)
    with tempfile.TemporaryDirectory() as tmp:
        sys.path.insert(0, tmp)
        engines = [load(args.a, "mg_a", pathlib.Path(tmp)), load(args.b, "mg_b", pathlib.Path(tmp))]
        print(f"A = {args.a}, B = {args.b}; {ROUNDS} interleaved rounds of {CALLS} calls; "
              f"load average {os.getloadavg()[0]:.2f}")
        print(f"{'workload':8s} {'dtype':8s} {'A µs':>8s} {'B µs':>8s} {'B/A':>6s}  middle 13 of 15")
        for dtype in ("float64", "float32"):
            for name, ta, tb, ratio, low, high in compare(engines, dtype):
                print(f"{name:8s} {dtype:8s} {ta:8.1f} {tb:8.1f} {ratio:6.3f}  {low:.3f}–{high:.3f}")
        print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
