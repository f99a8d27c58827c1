"""Peak memory and time of the reference training step, each library alone in a fresh process.

    python -m benchmarks.memory minigrad float32     # prints one JSON line
    python -m benchmarks.memory torch float64

The child imports the library (and the benchmark module that builds the model), reads its
resident-set high-water mark (``VmHWM`` in /proc/self/status; ``ru_maxrss`` where there is no
/proc), builds the model, runs ``WARMUP + STEPS`` training steps on one thread and reports the
new high-water mark minus the first -- whole-process memory above the baseline of the import:
the model, the graph, the gradients, the optimizer's state, the allocator's slack and whatever
a library loads on first use -- and the median time of the last ``STEPS`` steps. The torch
child copies its initial weights from a minigrad model; it builds that model before reading
the baseline, so each side's number holds only its own library's cost.

For minigrad it also reports ``traced_mb``: the peak of what NumPy and Python allocate during
one more step, above what was live before it (``tracemalloc``, which NumPy reports its arrays
to), for the kernels' step and the core's (``traced_peak``). Unlike the high-water mark it does
not depend on malloc's policy or on where the heap happens to lie, so it is the same in every
run: the number to compare between two commits ("memory no higher"). PyTorch's allocator is
not traced, so there is no such number for torch.

Nothing else runs in the child and glibc's malloc keeps its defaults (``python -m benchmarks``
itself calls ``minigrad.runtime.malloc.keep_freed_memory()``), so the times here are the conservative
ones: a plain script, one library, a fresh process.
"""
from __future__ import annotations

import argparse
import importlib
import json
import os
import statistics
import subprocess
import sys
import time
import tracemalloc

WARMUP, STEPS = 3, 15


def high_water_mb() -> float:
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def traced_peak(step) -> float:
    """MB: the peak of NumPy's and Python's allocations during one call of ``step``, above what
    was live before it."""
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        step()
        return (tracemalloc.get_traced_memory()[1] - before) / 2**20
    finally:
        tracemalloc.stop()


def child(library: str, dtype: str) -> dict:
    from benchmarks import reference
    from minigrad.runtime import blas
    weights = None
    if library == "torch":
        import torch
        importlib.import_module("benchmarks.torch_reference")  # before the baseline, as models
        torch.set_num_threads(1)
        weights = reference.reference_model(dtype).state_dict()  # minigrad's part, not torch's
    blas.set_threads(1)
    base = high_water_mb()
    step = (reference.build_torch_all(dtype, weights=weights)["step"] if library == "torch"
            else reference.build(dtype))
    times = []
    for _ in range(WARMUP + STEPS):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    out = {"library": library, "dtype": dtype, "baseline_mb": round(base, 1),
           "peak_above_mb": round(high_water_mb() - base, 1),
           "step_ms": round(1e3 * statistics.median(times[WARMUP:]), 2)}
    if library == "minigrad":                                   # after the high-water mark
        core = reference.build(dtype, model=reference.reference_model(dtype, kernels=False))
        core()
        out["traced_mb"] = {"kernels": round(traced_peak(step), 2),
                            "core": round(traced_peak(core), 2)}
    return out


def measure(library: str, dtype: str) -> dict:
    """Run ``child`` in a fresh interpreter with this one's environment; its JSON result."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = subprocess.run([sys.executable, "-m", "benchmarks.memory", library, dtype], cwd=root,
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> None:
    p = argparse.ArgumentParser(prog="python -m benchmarks.memory",
                                description=__doc__.split("\n")[0])
    p.add_argument("library", choices=("minigrad", "torch"))
    p.add_argument("dtype", choices=("float32", "float64"))
    a = p.parse_args(argv)
    print(json.dumps(child(a.library, a.dtype)))


if __name__ == "__main__":
    main()
