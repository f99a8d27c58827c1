"""The graph viewer on the reference workload: how long drawing the training loss takes, and
what tracing costs. The model is the core one (``reference_model(kernels=False)``), the one
``python -m models graph`` draws.

    python -m benchmarks.bench_viz

Rows (median of ``--repeats`` runs, one BLAS thread, float32):
* ``step, not traced``: forward + backward of the reference loss (no optimizer update);
* ``step, traced``: the same inside ``minigrad.viz.trace(model)`` (scopes, every gradient kept);
* ``draw collapsed`` / ``draw decoder open``: ``draw_graph(loss, trace=tr, collapse=1)`` to SVG,
  without and with ``expand=["decoder"]`` (one box per decoder step).

An untraced step runs no viewer code at all: the scopes come from ``Module.__call__`` and the
decoders' ``step``, which ``trace`` wraps only inside its block (``minigrad/viz/trace.py``).
"""
from __future__ import annotations

import argparse
import os

os.environ.setdefault("OMP_NUM_THREADS", "1")  # before NumPy is imported
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import statistics  # noqa: E402
import time  # noqa: E402

from benchmarks.reference import reference_batch, reference_model  # noqa: E402
from minigrad.viz import draw_graph, trace  # noqa: E402


def _median(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.bench_viz")
    p.add_argument("--repeats", type=int, default=5)
    a = p.parse_args(argv)
    model = reference_model("float32", kernels=False)
    src, src_mask, tgt, tgt_mask = reference_batch()

    def plain():
        model.loss(src, tgt, src_mask, tgt_mask).backward()

    state = {}

    def traced():
        with trace(model) as tr:
            loss = model.loss(src, tgt, src_mask, tgt_mask)
            loss.backward()
        state.update(loss=loss, tr=tr)

    plain(), traced()  # warm-up
    rows = [("step, not traced", _median(plain, a.repeats)),
            ("step, traced", _median(traced, a.repeats))]
    loss, tr = state["loss"], state["tr"]
    rows.append(("draw collapsed", _median(lambda: draw_graph(loss, trace=tr, collapse=1), a.repeats)))
    rows.append(("draw decoder open", _median(
        lambda: draw_graph(loss, trace=tr, collapse=1, expand=["decoder"]), a.repeats)))
    print(f"reference loss (B=64, S=T=20, float32): {len(tr.nodes)} op nodes traced")
    for name, sec in rows:
        print(f"{name:<28} {sec * 1e3:9.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
