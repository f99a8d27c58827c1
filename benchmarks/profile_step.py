"""Where a reference training step's time goes: cProfile's own time, grouped by source file.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python -m benchmarks.profile_step float32
    python -m benchmarks.profile_step float64 --keep-freed-memory   # minigrad/runtime/malloc.py first

Prints, per step (one BLAS thread, after 3 warm-up steps, mean of 20): the unprofiled time,
the number of graph nodes, the page faults and system time (``getrusage``), then the profiled
time by group. The profiler inflates the Python share; compare groups, not totals.
"""
from __future__ import annotations

import argparse
import cProfile
import collections
import os
import pstats
import resource
import sys
import time

if __package__ in (None, ""):  # run as a script: make the repository root importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.reference import build
from minigrad.tensor import Tensor
from minigrad.runtime import blas, malloc

GROUPS = [  # (path fragment, group), first match wins
    ("/minigrad/engine.py", "engine (backward loop, node creation)"),
    ("/minigrad/tensor.py", "engine (backward loop, node creation)"),
    ("/minigrad/ops.py", "minigrad primitive ops + VJPs"),
    ("/minigrad/shape_ops.py", "minigrad primitive ops + VJPs"),
    ("/minigrad/functional.py", "functional (linear, cross_entropy) + VJPs"),
    ("/minigrad/optim.py", "Adam, zero_grad"),
    ("/models/fused.py", "fused GRU step + VJP"),
    ("/models/fused_seq.py", "whole-sequence encoder and decoder ops + VJPs"),
    ("/models/kernels.py", "models kernels (one-hot input tables)"),
    ("/models/", "models (cells, encoder, decoder glue)"),
    ("/attention/", "attention (score, read) + VJPs"),
    ("numpy", "numpy's Python wrappers"),
]


def group(filename: str) -> str:
    return next((g for part, g in GROUPS if part in filename), "other (builtins, C calls)")


def count_nodes(step) -> int:
    """Tensors made by ops during one step."""
    made, original = [0], Tensor._from_op

    def counting(*args):
        made[0] += 1
        return original(*args)
    Tensor._from_op = staticmethod(counting)
    try:
        step()
    finally:
        Tensor._from_op = staticmethod(original)
    return made[0]


def main(argv=None) -> None:
    p = argparse.ArgumentParser(prog="python -m benchmarks.profile_step",
                                description=__doc__.split("\n")[0])
    p.add_argument("dtype", nargs="?", default="float32")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--keep-freed-memory", action="store_true", help="minigrad.runtime.malloc first")
    a = p.parse_args(argv)
    if a.keep_freed_memory:
        malloc.keep_freed_memory()
    blas.set_threads(1)
    step = build(a.dtype)
    for _ in range(3):
        step()
    nodes = count_nodes(step)
    before, start = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    for _ in range(a.steps):
        step()
    wall = (time.perf_counter() - start) / a.steps
    after = resource.getrusage(resource.RUSAGE_SELF)
    profile = cProfile.Profile()
    profile.enable()
    for _ in range(a.steps):
        step()
    profile.disable()
    by_group = collections.Counter()
    for (filename, _, _), (_, _, own, _, _) in pstats.Stats(profile).stats.items():
        by_group[group(filename)] += own / a.steps
    total = sum(by_group.values())
    print(f"{a.dtype}: {1e3 * wall:.1f} ms/step unprofiled; {nodes} graph nodes/step; "
          f"{(after.ru_minflt - before.ru_minflt) / a.steps:.0f} page faults/step; system time "
          f"{1e3 * (after.ru_stime - before.ru_stime) / a.steps:.1f} ms/step; "
          f"profiled {1e3 * total:.1f} ms/step")
    for name, seconds in by_group.most_common():
        print(f"  {name:<45} {1e3 * seconds:6.2f} ms  {100 * seconds / total:4.0f}%")


if __name__ == "__main__":
    main()
