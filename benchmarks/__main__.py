"""``python -m benchmarks``: the benchmark suite, printed as one table.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python -m benchmarks --compare torch
    python -m benchmarks --quick                   # fewer rounds and sizes: about a minute
    python -m benchmarks --dtypes float32          # one dtype

Rows, for float32 and float64: the reference training step (forward + backward + Adam) on one
BLAS thread and on the default number (with the kernels of ``models/kernels.py``, as the
application runs it), the same step of the core model (no kernels, one thread), its forward alone, greedy decoding and beam search
(k = 4) of the reference batch (``benchmarks/reference.py``); a summary of the per-op overhead
(``benchmarks/bench_ops.py``: forward + backward of each of its ops at n = 8 and 256); the
attention's forward + backward over T = 20 decoder steps for S = 20 … 400 source positions
and the exponent p of t ∝ S^p (``benchmarks/attention_scaling.py``); and, each library alone in
a fresh process (``benchmarks/memory.py``), the training step's time and peak memory.

Memory allocator. This process first calls ``minigrad.runtime.malloc.keep_freed_memory()``, as
``python -m models`` does: glibc then keeps the memory a step frees for the next step instead
of returning it to the OS and faulting it in again (see minigrad/runtime/malloc.py; it speeds up
minigrad's step by 20-30% and leaves torch's unchanged). The fresh-process rows keep glibc's
defaults: the conservative numbers, a plain script with one library.

``--compare torch`` builds the same model in PyTorch eager from the same weights, checks that
the two give the same losses over three training steps and the same greedy and beam tokens
(and the attention benchmark the same gradients), and only then times the two interleaved:
rounds of ``--calls`` calls, one library after the other; times are medians over the rounds
and the ratio minigrad / torch is the median of the per-round ratios, so a burst of load from
another process hits both (the machines are shared). Ratios below 1: minigrad is faster.

The two OpenBLAS variables some machines set for old OpenBLAS builds make NumPy use slower
kernels; unset them for this command as shown (benchmarks/README.md). The header prints them.
"""
from __future__ import annotations

import argparse
import math
import os
import platform
import statistics
import sys

if __package__ in (None, ""):  # run as a script: make the repository root importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np

from benchmarks import attention_scaling, memory, reference
from minigrad.runtime import blas, malloc

TARGETS = {"train": 0.9, "decode": 1.0, "memory": 1.0, "exponent": 1.1}


class Row:
    """One line of the table: a workload, its minigrad and torch values, ratio and target."""

    def __init__(self, what, dtype, threads, mg, torch=None, ratio=None, unit="ms",
                 target=None, note="", judged=None):
        self.what, self.dtype, self.threads, self.unit = what, dtype, threads, unit
        self.mg, self.torch, self.ratio, self.target, self.note = mg, torch, ratio, target, note
        self.judged = ratio if judged is None else judged  # what the target is compared with

    def cells(self) -> list:
        fmt = (lambda v: "-" if v is None else f"{v:.2f}") if self.unit == "" else \
              (lambda v: "-" if v is None else f"{v:.1f}")
        met = "" if self.target is None or self.judged is None else (
            f"≤ {self.target:.2f} " + ("met" if self.judged <= self.target else "NOT met"))
        return [self.what, self.dtype, self.threads, f"{fmt(self.mg)} {self.unit}".strip(),
                f"{fmt(self.torch)} {self.unit}".strip() if self.torch is not None else "-",
                "-" if self.ratio is None else f"{self.ratio:.2f}", met, self.note]


def print_table(rows) -> None:
    head = ["workload", "dtype", "threads", "minigrad", "torch", "ratio", "target", "note"]
    cells = [head] + [r.cells() for r in rows]
    widths = [max(len(c[i]) for c in cells) for i in range(len(head))]
    for i, c in enumerate(cells):
        print("  ".join(x.ljust(w) if j in (0, 1, 2, 6, 7) else x.rjust(w)
                        for j, (x, w) in enumerate(zip(c, widths))).rstrip())
        if i == 0:
            print("  ".join("-" * w for w in widths))


def header(torch) -> None:
    cpu = platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    print(f"machine: {cpu}, {os.cpu_count()} cores; python {platform.python_version()}, "
          f"numpy {np.__version__}" + (f", torch {torch.__version__}" if torch else ""))
    env = {v: os.environ.get(v) for v in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")}
    print("OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE: " + (
        ", ".join(f"{k}={v}" for k, v in env.items() if v) + "  (set: NumPy runs older kernels; "
        "see the command in benchmarks/README.md)" if any(env.values()) else "unset"))
    print(f"reference workload: B={reference.BATCH} S=T={reference.TGT_LEN} V={reference.VOCAB} "
          f"E={reference.EMBED} H={reference.HIDDEN}x2 dec={reference.DEC_HIDDEN} "
          f"A={reference.ATTN}; load average {os.getloadavg()[0]:.2f}")


# ---- the parts ---------------------------------------------------------------------------

def set_threads(n, torch, defaults) -> str:
    """n threads for BLAS and torch (None: their defaults); the label for the table."""
    blas.set_threads(n or defaults[0])
    if torch is not None:
        torch.set_num_threads(n or defaults[1])
    if n:
        return str(n)
    return f"default ({defaults[0]}" + (f"/{defaults[1]})" if torch is not None else ")")


def model_rows(dtype, torch, defaults, repeat, calls) -> list:
    """The reference workload: training step, forward, greedy and beam decoding."""
    def core_step(dtype):  # the core model, composed from primitives: what the kernels buy
        return reference.build(dtype, model=reference.reference_model(dtype, kernels=False))

    plan = [("train step", "step", reference.build, (1, None), "train"),
            ("train step, core model (no kernels)", "step", core_step, (1,), None),
            ("forward (loss, graph recorded)", "forward", reference.build_forward, (1,), None),
            ("greedy decode", "decode", reference.build_decode, (1, None), "decode"),
            (f"beam decode (k={reference.BEAM})", "beam", reference.build_beam, (1,), None)]
    rows = []
    for what, key, build, thread_counts, target in plan:
        for n in thread_counts:
            label = set_threads(n, torch, defaults)
            cands = {"minigrad": build(dtype)}
            if torch is not None:
                cands["torch"] = reference.build_torch_all(dtype)[key]
            r = reference.measure(cands, repeat, calls)
            rows.append(Row(what, dtype, label, 1e3 * r["minigrad"],
                            1e3 * r["torch"] if "torch" in r else None, r.get("ratio"),
                            target=TARGETS.get(target)))
    set_threads(None, torch, defaults)
    return rows


def per_op_rows(dtype, torch, defaults, sizes, repeat) -> list:
    """bench_ops' forward + backward of every op, summarised: geometric means and the worst."""
    saved = dict(os.environ)
    from benchmarks import bench_ops  # it sets OMP/OPENBLAS_NUM_THREADS=1 for itself: undo
    os.environ.clear()
    os.environ.update(saved)
    if torch is None:
        bench_ops.torch = None
    set_threads(1, torch, defaults)
    rng, rows = np.random.default_rng(0), []
    for n in sizes:
        results = [(op.name, bench_ops.bench_op(op, n, dtype, repeat, 0.001, rng))
                   for op in bench_ops.OPS]
        gmean = lambda xs: math.exp(statistics.fmean(math.log(x) for x in xs))
        mg = gmean([statistics.median(s["mg f+b"]) for _, s in results])
        over = statistics.median(statistics.median(s["mg f+b"]) - statistics.median(s["numpy f+b"])
                                 for _, s in results)
        note = f"median engine overhead {1e6 * over:.1f} µs/op"
        t = ratio = None
        if torch is not None:
            t = 1e6 * gmean([statistics.median(s["torch f+b"]) for _, s in results])
            ratios = {name: bench_ops.ratio(s) for name, s in results}
            ratio = gmean(ratios.values())
            worst = max(ratios, key=ratios.get)
            note += (f"; {sum(r <= 1 for r in ratios.values())}/{len(ratios)} ops ≤ 1, "
                     f"worst {worst} {ratios[worst]:.2f}")
        rows.append(Row(f"per-op f+b, n={n} ({len(results)} ops, geo. mean)", dtype, "1",
                        1e6 * mg, t, ratio, unit="µs", note=note))
    set_threads(None, torch, defaults)
    return rows


def attention_rows(dtype, torch, defaults, sizes, repeat, calls) -> list:
    """Forward + backward of T decoder steps of attention, for each S; then the exponent."""
    set_threads(1, torch, defaults)
    rows, times = [], {"minigrad": [], "torch": []}
    for S in sizes:
        cands = {"minigrad": attention_scaling.build(S, dtype)}
        if torch is not None:
            cands["torch"] = attention_scaling.build_torch(S, dtype)
            tol = 1e-3 if dtype == "float32" else 1e-10
            if not np.allclose(cands["minigrad"](), cands["torch"](), rtol=tol, atol=tol):
                raise AssertionError(f"attention S={S} {dtype}: the keys' gradients differ")
        r = reference.measure(cands, repeat, calls)
        for k in times:
            if k in r:
                times[k].append(r[k])
        rows.append(Row(f"attention f+b, T={attention_scaling.T}, S={S}", dtype, "1",
                        1e3 * r["minigrad"], 1e3 * r["torch"] if "torch" in r else None,
                        r.get("ratio"), note=f"{1e6 * r['minigrad'] / S:.0f} µs per source position"))
    p = {k: attention_scaling.exponent(sizes, v) for k, v in times.items() if v}
    last = {k: math.log(v[-1] / v[-2]) / math.log(sizes[-1] / sizes[-2]) for k, v in times.items() if v}
    rows.append(Row(f"attention: p in t ∝ S^p, S={sizes[0]}…{sizes[-1]}", dtype, "1", p["minigrad"],
                    p.get("torch"), unit="", target=TARGETS["exponent"], judged=p["minigrad"],
                    note=f"p from S={sizes[-2]} to {sizes[-1]}: minigrad {last['minigrad']:.2f}"
                         + (f", torch {last['torch']:.2f}" if "torch" in last else "")))
    set_threads(None, torch, defaults)
    return rows


def fresh_rows(dtype, torch, pairs) -> list:
    """Each library alone in a fresh process with glibc's malloc defaults: the training step's
    time (the conservative number) and its peak memory; ``pairs`` alternating runs of each."""
    runs = {"minigrad": [], "torch": []}
    for _ in range(pairs):
        runs["minigrad"].append(memory.measure("minigrad", dtype))
        if torch is not None:
            runs["torch"].append(memory.measure("torch", dtype))
    med = lambda lib, key: statistics.median(r[key] for r in runs[lib]) if runs[lib] else None
    ratio = lambda key: (statistics.median(m[key] / t[key] for m, t in zip(*runs.values()))
                         if runs["torch"] else None)
    base = f"above baselines of {med('minigrad', 'baseline_mb'):.0f} MB" + (
        f" / {med('torch', 'baseline_mb'):.0f} MB after import" if runs["torch"] else " after import")
    return [Row("train step, fresh process each, malloc defaults", dtype, "1",
                med("minigrad", "step_ms"), med("torch", "step_ms"), ratio("step_ms"),
                target=TARGETS["train"], note=f"median of {pairs} run(s) of {memory.STEPS} steps"),
            Row("peak memory of a training step", dtype, "1", med("minigrad", "peak_above_mb"),
                med("torch", "peak_above_mb"), ratio("peak_above_mb"), unit="MB",
                target=TARGETS["memory"], note=base)]


# ---- main --------------------------------------------------------------------------------

def main(argv=None) -> None:
    p = argparse.ArgumentParser(prog="python -m benchmarks",
                                description=__doc__.split("\n")[0])
    p.add_argument("--compare", choices=["torch"], help="run the PyTorch twin and print ratios")
    p.add_argument("--quick", action="store_true", help="fewer rounds and sizes (about a minute)")
    p.add_argument("--dtypes", default="float32,float64")
    p.add_argument("--repeat", type=int, help="interleaved rounds per workload (default 11, quick 5)")
    p.add_argument("--calls", type=int, help="calls per round (default 3, quick 2)")
    a = p.parse_args(argv)
    repeat = a.repeat or (5 if a.quick else 11)
    calls = a.calls or (2 if a.quick else 3)
    sizes = (20, 100, 400) if a.quick else attention_scaling.SIZES
    op_sizes = (8,) if a.quick else (8, 256)
    torch = None
    if a.compare == "torch":
        import torch  # noqa: F811  (imported before bench_ops, which limits threads at import)
    defaults = (blas.get_threads() or 1, torch.get_num_threads() if torch else None)
    kept = malloc.keep_freed_memory()  # as python -m models does; see minigrad/runtime/malloc.py
    header(torch)
    print("glibc malloc: " + ("freed memory kept for reuse (minigrad/runtime/malloc.py), except in the "
                              "'fresh process' rows" if kept else "defaults (not glibc)"))
    dtypes = a.dtypes.split(",")
    if torch is not None:
        for dtype in dtypes:
            print("check", reference.check_same(dtype))
    rows = []
    for dtype in dtypes:
        rows += model_rows(dtype, torch, defaults, repeat, calls)
        rows += per_op_rows(dtype, torch, defaults, op_sizes, 5 if a.quick else 9)
        rows += attention_rows(dtype, torch, defaults, sizes, max(3, repeat - 4), 2)
        rows += fresh_rows(dtype, torch, 1 if a.quick else 2)
    print()
    print_table(rows)
    print(f"\nratio = minigrad / torch (median of per-round ratios; {repeat} rounds of {calls} calls "
          f"for the model rows); load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
