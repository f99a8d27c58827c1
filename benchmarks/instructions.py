"""Instructions per reference training step, counted by valgrind's callgrind: the same count on
a busy machine as on a quiet one, so a change of 1 % shows, which a timing on two shared cores
cannot show (``benchmarks/ab.py`` times; this counts).

    python -m benchmarks.instructions                        # the working tree, the kernels' step
    python -m benchmarks.instructions 3c4da1d .              # two revisions side by side
    python -m benchmarks.instructions . --path core --dtypes float64 --steps 2

Each (revision, dtype) runs twice, each time in a fresh ``python`` under ``valgrind
--tool=callgrind``: once to the end of the warm-up steps, once with ``--steps`` steps more; the
difference divided by ``--steps`` is one step (imports, building and warm-up cancel out). In the
child the hash seed is fixed and ``minigrad.kernels`` takes the first form of each
transcendental rather than timing the forms (``kernels.pick`` times them at first use; under
valgrind the timings, so the choice, vary, and the kernels' count with it by ±4 %). A revision is
a git commit (its ``minigrad/``, ``attention/`` and ``models/`` taken with ``git archive``) or a
folder holding those three (``.``: the working tree, uncommitted edits included); the harness,
``benchmarks/``, is always this tree's. Valgrind emulates a CPU without AVX-512, so NumPy runs
its AVX2 loops and OpenBLAS its Haswell kernel; one BLAS thread. About a minute a count,
one count per core at a time.
"""
from __future__ import annotations

import argparse
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

from benchmarks.ab import extract

ROOT = pathlib.Path(__file__).resolve().parent.parent
PATHS = ("kernels", "core", "floor")  # the model with its kernels, the composed core, the floor

CHILD = """
import sys
sys.path[:0] = {paths!r}
import numpy as np
from minigrad import kernels
for name, forms in getattr(kernels, "FORMS", {{}}).items():  # the first form, not the timed pick
    for dtype in (np.dtype(np.float32), np.dtype(np.float64)):
        kernels.PICKED[name, dtype] = [f for f in forms if kernels.ONLY.get(f, dtype) == dtype][0]
from benchmarks import floor, reference
from minigrad.runtime import blas
blas.set_threads(1)
dtype, path = {dtype!r}, {path!r}
step = floor.build(dtype) if path == "floor" else reference.build(
    dtype, model=reference.reference_model(dtype, kernels=path == "kernels"))
for _ in range({runs}):
    step()
"""


def packages(revision: str, folder: pathlib.Path) -> pathlib.Path:
    """``folder`` holding ``revision``'s three packages (``benchmarks.ab.extract``)."""
    folder.mkdir()
    try:
        extract(revision, folder)
    except ValueError as e:
        raise SystemExit(f"instructions: {e}") from None
    return folder


def collected(folder: pathlib.Path, path: str, dtype: str, runs: int) -> int:
    """The instructions callgrind counts in a child that runs ``runs`` steps."""
    code = CHILD.format(paths=[str(folder), str(ROOT)], dtype=dtype, path=path, runs=runs)
    env = {**os.environ, "PYTHONHASHSEED": "0", "OPENBLAS_NUM_THREADS": "1"}
    done = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                           sys.executable, "-c", code], env=env, capture_output=True, text=True)
    found = re.search(r"Collected : ([\d,]+)", done.stderr)
    if done.returncode != 0 or not found:
        last = (done.stderr.strip().splitlines() or ["(nothing on stderr)"])[-1]
        raise SystemExit(f"instructions: the {path} step in {dtype} failed under valgrind: {last}")
    return int(found.group(1).replace(",", ""))


def per_step(folders: list, path: str, dtype: str, steps: int, warmup: int) -> list:
    """Instructions of one step in each folder: (warm-up + steps) minus warm-up alone, over
    ``steps``; the children run side by side, one per core (a count does not mind the load)."""
    with ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        runs = [[pool.submit(collected, f, path, dtype, n) for n in (warmup + steps, warmup)]
                for f in folders]
        return [(more.result() - fewer.result()) / steps for more, fewer in runs]


def main(argv=None) -> None:
    p = argparse.ArgumentParser(prog="python -m benchmarks.instructions",
                                description=__doc__.split("\n")[0])
    p.add_argument("revisions", nargs="*", default=["."],
                   help="commits or folders (default: . the working tree)")
    p.add_argument("--path", choices=PATHS, default="kernels", help="the step (kernels)")
    p.add_argument("--dtypes", default="float32,float64", help="comma-separated (both)")
    p.add_argument("--steps", type=int, default=4, help="steps counted (4)")
    p.add_argument("--warmup", type=int, default=2, help="steps before, not counted (2)")
    a = p.parse_args(argv)
    dtypes = a.dtypes.split(",")
    if a.steps < 1 or a.warmup < 1 or not set(dtypes) <= {"float32", "float64"}:
        p.error(f"--steps and --warmup must be at least 1 and --dtypes float32 and/or float64; "
                f"got {a.steps}, {a.warmup}, {a.dtypes!r}")
    with tempfile.TemporaryDirectory() as tmp:
        folders = [packages(r, pathlib.Path(tmp) / str(i)) for i, r in enumerate(a.revisions)]
        if shutil.which("valgrind") is None:
            raise SystemExit("instructions: valgrind is not installed (Debian: apt-get install "
                             "valgrind); python -m benchmarks.ab times the same steps instead")
        print(f"callgrind instructions per step, the {a.path} step, {a.steps} step(s) after "
              f"{a.warmup} warm-up; millions")
        row = lambda cells: print("| " + " | ".join(cells) + " |")  # noqa: E731
        row(["dtype", *a.revisions, *(f"{r} ÷ {a.revisions[0]}" for r in a.revisions[1:])])
        row(["---"] * (2 * len(a.revisions)))
        for dtype in dtypes:
            counts = per_step(folders, a.path, dtype, a.steps, a.warmup)
            row([dtype, *(f"{c / 1e6:.1f}" for c in counts),
                 *(f"{c / counts[0]:.4f}" for c in counts[1:])])


if __name__ == "__main__":
    main()
