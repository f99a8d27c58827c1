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
    return {"library": library, "dtype": dtype, "baseline_mb": round(base, 1),
            "peak_above_mb": round(high_water_mb() - base, 1),
            "step_ms": round(1e3 * statistics.median(times[WARMUP:]), 2)}


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
