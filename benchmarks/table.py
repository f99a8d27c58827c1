"""The reference step against every other way of computing it, as one table (issue 24).

    python -m benchmarks.table                     # print the table (about 5 minutes)
    python -m benchmarks.table --write             # and put it into benchmarks/README.md
    python -m benchmarks.table --runs 1 --rounds 3 --skip "torch.compile,MyGrad"  # a quick look
    python -m benchmarks.table --avx2 --write      # every library at AVX2: the second table

Rows: minigrad's core model (``reference_model(kernels=False)``), its kernels path (what the
CLI runs, ``models/kernels.py``) and, for before/after, that path one node per step as it was
before issue 24 (``per_step``), the floor (``benchmarks/floor.py``: the step by hand in plain
NumPy), PyTorch eager (``benchmarks/torch_reference.py``), ``torch.compile`` of the same
module, JAX jit, HIPS autograd and MyGrad (``floor.loss_fn`` differentiated by each, with the
floor's Adam); a library that is not installed, or a compile that fails, gets a row saying so.
Compiling takes minutes, so ``torch.compile`` is measured in the first one-thread run only. Then
greedy and beam decoding (k = 4) of the reference model, kernels against PyTorch eager: a
batch of 64 and one sentence. Then small graphs, the core engine against PyTorch eager: the
six-op graph of ``benchmarks.ab`` and a 1,000-op chain, forward + backward on 8 × 8 leaves, in
µs per op (``small_graphs``). All start from the same weights; before timing, every training
row's first loss is checked against the core's (1e-4 in float32, 1e-9 in float64).

Method. Each (threads, run) is a fresh subprocess with ``OPENBLAS/OMP/MKL_NUM_THREADS`` set
before NumPy is imported (and ``threadpoolctl`` and ``torch.set_num_threads`` if present), glibc
told to keep freed memory (``minigrad/runtime/malloc.py``, as ``python -m models`` does). In it
the candidates run interleaved, one call each per round; one thread is timed in process CPU
time (``time.process_time``: another process's load does not count), all threads in wall-clock
time. A ratio is the median over rounds of the per-round ratio, so a burst of load hits both
sides; the table gives its range over the runs. The limits are recomputed in every run: the
step's matrix products, forward and backward, read off the core step's graph (``step_products``:
every product, whatever its shape), the rate NumPy reaches on each of their shapes, and the time
those products alone would take (``÷ matmul limit``: a row's time over that). The header names
the SIMD level of NumPy's loops, OpenBLAS's kernel and PyTorch's kernels. ``--avx2`` runs the
children as on a CPU without AVX-512: each library told so before it loads (``AVX2``: NumPy's
loops, OpenBLAS's kernel, PyTorch's ATen kernels, MKL and oneDNN), not NumPy alone.
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import platform
import statistics
import subprocess
import sys
import time
from collections import Counter

HERE = pathlib.Path(__file__).resolve().parent
START, END = "<!-- benchmarks.table: start -->", "<!-- benchmarks.table: end -->"
MARKERS = {False: (START, END), True: ("<!-- benchmarks.table avx2: start -->",
                                       "<!-- benchmarks.table avx2: end -->")}  # by --avx2
AVX2 = {"NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR", "OPENBLAS_CORETYPE": "Haswell",
        "ATEN_CPU_CAPABILITY": "avx2", "MKL_ENABLE_INSTRUCTIONS": "AVX2",
        "ONEDNN_MAX_CPU_ISA": "AVX2"}
TRAIN = ("core", "kernels, per step", "kernels", "floor", "torch eager", "torch.compile", "JAX jit",
         "HIPS autograd", "MyGrad")
SLOW = ("HIPS autograd", "MyGrad")   # seconds per step: measured in the first 3 rounds only
SKIPPABLE = ("kernels, per step", "torch.compile", "JAX jit", "HIPS autograd",
             "MyGrad")  # the rest: ratios
CHAIN = 1000        # ops in the small-graph chain
SMALL = {"six ops": 0.62, f"{CHAIN:,}-op chain": 0.95}  # ÷ torch eager, at least as good as at
#   issue 34's filing: six ops 0.54–0.62; the chain ~6–7 µs an op, torch 1.05–1.35 × that
LIMITS = {"kernels ÷ floor": 0.95, "kernels ÷ torch eager": 0.85, "core ÷ floor": 1.5,
          "decoding ÷ torch eager": 0.8}


# ---- in the subprocess ----------------------------------------------------------------------

def machine() -> dict:
    """CPU model, cores, Python, NumPy and the BLAS that NumPy runs (threadpoolctl's view)."""
    import numpy as np
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                if line.startswith("model name")), platform.processor()) \
        if os.path.exists("/proc/cpuinfo") else platform.processor()
    info = {"cpu": cpu, "cores": os.cpu_count(), "python": platform.python_version(),
            "numpy": np.__version__, "simd": simd(), "blas": "threadpoolctl not installed",
            "kernel": "unknown", "torch": "not installed"}
    try:
        import torch
        info["torch"] = torch.backends.cpu.get_cpu_capability()
    except ImportError:
        pass
    try:
        from threadpoolctl import threadpool_info
        blas = [i for i in threadpool_info() if i.get("user_api") == "blas"]
        info["blas"] = "; ".join(f"{i.get('internal_api')} {i.get('version')} "
                                 f"({i.get('architecture')} kernels, {i.get('num_threads')} threads)"
                                 for i in blas) or "none found"
        info["kernel"] = " + ".join(str(i.get("architecture")) for i in blas) or "unknown"
    except ImportError:
        pass
    return info


PRODUCTS = ("linear", "matmul", "read")  # the core's ops that are one matrix product each


def simd() -> str:
    """The SIMD level NumPy's loops run at (what ``np.show_runtime()`` prints): the dispatch
    targets this CPU has (less any ``NPY_DISABLE_CPU_FEATURES``), over the build's baseline."""
    try:
        from numpy._core import _multiarray_umath as u
    except ImportError:
        return "unknown"
    found = [f for f in u.__cpu_dispatch__ if u.__cpu_features__.get(f)]
    return f"{' '.join(found) or 'none'} over baseline {' '.join(u.__cpu_baseline__)}"


def step_products(sizes: dict | None = None) -> Counter:
    """Every matrix product of one core training step, forward and backward: (batch, m, k, n)
    -> calls, read off the core model's graph (the reference sizes, or ``sizes`` with keys
    B S T V E H A), so none is missed and none overwrites another of the same shape.

    An op of ``PRODUCTS`` runs (m, k) @ (k, n) ``batch`` times; its VJP one product per parent
    that needs a gradient: ∂L/∂a = g bᵀ, (m, n) @ (n, k), and ∂L/∂b = aᵀ g, (k, m) @ (m, n).
    ``linear`` is x (…, k) with W (n, k), so its ∂L/∂W = gᵀ x is (n, m) @ (m, k); a
    matrix-vector ``matmul`` folds a's leading axes into m; ``read`` is α (B, [T,] S) @ h
    (B, S, K)."""
    import numpy as np
    from benchmarks import reference as r
    from models.seq2seq import ModelConfig, Seq2Seq
    z = dict(B=r.BATCH, S=r.SRC_LEN, T=r.TGT_LEN, V=r.VOCAB, E=r.EMBED, H=r.HIDDEN, A=r.ATTN)
    z.update(sizes or {})
    config = ModelConfig(z["V"], z["V"], embed=z["E"], hidden=z["H"], dec_hidden=z["H"],
                         attn=z["A"], decoder="bahdanau", score="additive")
    rng = np.random.default_rng(0)
    src, tgt = (rng.integers(1, z["V"], size=(z["B"], z[n])) for n in "ST")  # (B, S), (B, T)
    stack, seen, count = [Seq2Seq(config, rng).loss(src, tgt)], set(), Counter()
    while stack:
        t = stack.pop()
        if id(t) in seen:
            continue
        seen.add(id(t))
        stack.extend(t._parents)
        if t._op not in PRODUCTS:
            continue
        a, b = t._parents[:2]
        if t._op == "linear":
            shape = (1, int(np.prod(a.shape[:-1])), b.shape[1], b.shape[0])
        elif t._op == "matmul" and b.ndim == 1:
            shape = (1, int(np.prod(a.shape[:-1])), b.shape[0], 1)
        else:
            am = a.shape if a.ndim == b.ndim else a.shape[:-1] + (1,) + a.shape[-1:]
            shape = (int(np.prod(np.broadcast_shapes(am[:-2], b.shape[:-2]))),) + am[-2:] \
                + b.shape[-1:]
        batch, m, k, n = shape
        count[shape] += 1
        count[batch, m, n, k] += a.requires_grad                 # ∂L/∂a = g bᵀ
        count[(batch, n, m, k) if t._op == "linear" else (batch, k, m, n)] += b.requires_grad
    return +count


def flops(products: Counter) -> int:
    """2 m k n per product, batch times, for each call."""
    return sum(2 * batch * m * k * n * calls for (batch, m, k, n), calls in products.items())


def matmul_rate(dtype: str, products: Counter) -> tuple:
    """(GFLOP/s over the step's products, ms they take for a step, their FLOPs), each shape
    timed here with NumPy as the step runs it: ``a @ b``, and an outer product (k = 1) as the
    broadcast ``a * b`` (NumPy's matmul loop for k = 1 is some 50× slower)."""
    import numpy as np
    rng, total_s = np.random.default_rng(0), 0.0
    for (batch, m, k, n), calls in products.items():
        lead = () if batch == 1 else (batch,)
        a = rng.standard_normal(lead + (m, k)).astype(dtype)
        b = rng.standard_normal(lead + (k, n)).astype(dtype)
        reps = max(3, int(2e7 / (2 * batch * m * k * n)))
        product = np.multiply if k == 1 else np.matmul
        best = min(timed(lambda: [product(a, b) for _ in range(reps)]) for _ in range(5)) / reps
        total_s += best * calls
    total = flops(products)
    return total / total_s / 1e9, 1e3 * total_s, total


def timed(fn, clock=time.perf_counter) -> float:
    t = clock()
    fn()
    return clock() - t


def interleaved(pair, rounds: int, clock, scale: float) -> list:
    """[median time of pair[0], of pair[1], both × ``scale``; the median per-round ratio]: one
    call of each first, then the two alternating, one call each per round."""
    for f in pair:
        f()
    ts = [[], []]
    for _ in range(rounds):
        for j, f in enumerate(pair):
            ts[j].append(timed(f, clock))
    return [scale * statistics.median(ts[0]), scale * statistics.median(ts[1]),
            statistics.median(a / b for a, b in zip(*ts))]


def parse_skip(text: str) -> set:
    """The rows named in ``--skip``, comma-separated; a row's own comma ("kernels, per step")
    is read as part of its name. An unknown name is an error that lists the skippable rows."""
    skip, words = set(), [w.strip() for w in text.split(",") if w.strip()]
    while words:
        for n in range(len(words), 0, -1):                    # the longest name that fits
            name = ", ".join(words[:n])
            if name in SKIPPABLE:
                skip.add(name)
                words = words[n:]
                break
        else:
            raise SystemExit(f"--skip: {words[0]!r} is not a row that can be skipped "
                             f"(rows: {', '.join(SKIPPABLE)}; comma-separated)")
    return skip


def candidates(dtype: str, skip: set) -> tuple:
    """({name: step function or a str saying why not}, {name: decode function or str})."""
    from benchmarks import floor, reference as r
    steps = {"core": r.build(dtype, model=r.reference_model(dtype, kernels=False)),
             "kernels, per step": "skipped" if "kernels, per step" in skip else
             r.build(dtype, model=per_step(r.reference_model(dtype))),
             "kernels": r.build(dtype), "floor": floor.build(dtype)}
    try:
        import torch
        steps["torch eager"] = r.build_torch_all(dtype)["step"]
        try:
            steps["torch.compile"] = "skipped" if "torch.compile" in skip else compiled_step(dtype)
        except Exception as e:  # noqa: BLE001 -- the row says why
            steps["torch.compile"] = f"failed: {type(e).__name__}: {str(e).splitlines()[0][:80]}"
    except ImportError:
        steps["torch eager"] = steps["torch.compile"] = "not installed"
    steps["JAX jit"] = "skipped" if "JAX jit" in skip else jax_step(dtype)
    for name, module in (("HIPS autograd", "autograd"), ("MyGrad", "mygrad")):
        steps[name] = "skipped" if name in skip else library_step(module, dtype)
    decode = {}
    mg, batch = r.reference_model(dtype), r.reference_batch(0)
    one = (batch[0][:1], batch[1][:1])
    decode["greedy, batch 64"] = (lambda: mg.greedy(batch[0], r.TGT_LEN, batch[1]))
    decode["greedy, 1 sentence"] = (lambda: mg.greedy(one[0], r.TGT_LEN, one[1]))
    decode["beam 4, batch 64"] = (lambda: mg.beam(batch[0], r.BEAM, 0.6, r.TGT_LEN, batch[1]))
    decode["beam 4, 1 sentence"] = (lambda: mg.beam(one[0], r.BEAM, 0.6, r.TGT_LEN, one[1]))
    if "torch eager" in steps and not isinstance(steps["torch eager"], str):
        t = torch_decoders(dtype)
        decode = {k: (f, t[k]) for k, f in decode.items()}
    return steps, decode


def per_step(model):
    """The kernels path before issue 24: encoder and decoder one node per step (the fused GRU
    step, the fused score, the one-hot tables), as ``models/kernels.py`` still runs them for what
    the whole-sequence ops do not compute."""
    from models.decoders import Decoder
    from models.kernels import FastBahdanauDecoder, FastBiGRUEncoder

    class PerStepEncoder(FastBiGRUEncoder):
        def forward(self, src, mask=None, rng=None):
            return self.per_step(*check_source(src, mask, self.embedding.weight.shape[0]))

    class PerStepDecoder(FastBahdanauDecoder):
        forward = Decoder.forward                                         # the loop over step()

    from models.seq2seq import check_source
    model.encoder.__class__, model.decoder.__class__ = PerStepEncoder, PerStepDecoder
    return model


def compiled_step(dtype: str):
    """PyTorch's step with the module under ``torch.compile`` (compiled here, on first call)."""
    import torch
    from benchmarks import reference as r
    from benchmarks.torch_reference import TorchBahdanau
    tdtype = {"float32": torch.float32, "float64": torch.float64}[dtype]
    model = TorchBahdanau(r.VOCAB, r.EMBED, r.HIDDEN, r.DEC_HIDDEN, r.ATTN, dtype=tdtype)
    model.load_minigrad(r.reference_model(dtype).state_dict())
    src, src_mask, tgt, _ = (torch.from_numpy(a) for a in r.reference_batch(0))
    lengths, opt = src_mask.sum(1), torch.optim.Adam(model.parameters(), lr=r.LR)
    fn, loss_fn = torch.compile(model), torch.nn.CrossEntropyLoss()

    def loss() -> "torch.Tensor":
        return loss_fn(fn(src, lengths, tgt).reshape(-1, r.VOCAB), tgt.reshape(-1))

    def step() -> float:
        opt.zero_grad()
        value = loss()
        value.backward()
        opt.step()
        return value.item()
    loss().backward()  # compile forward and backward now (no update: step 1 stays step 1)
    opt.zero_grad()
    return step


def library_step(module: str, dtype: str):
    """``floor.loss_fn`` differentiated by HIPS autograd or MyGrad, then the floor's Adam."""
    try:
        lib = __import__(module)
    except ImportError:
        return "not installed"
    from benchmarks import floor, reference as r
    params, batch = floor.params_of(r.reference_model(dtype)), r.reference_batch(0)
    opt = floor.Adam(params)
    if module == "autograd":
        import autograd.numpy as anp
        value_and_grad = lib.value_and_grad(lambda p: floor.loss_fn(p, batch, anp))

        def step() -> float:
            loss, grads = value_and_grad(params)
            opt.step(grads)
            return float(loss)
        return step

    def step() -> float:
        tensors = {k: lib.tensor(v) for k, v in params.items()}
        loss = floor.loss_fn(tensors, batch, lib)
        loss.backward()
        opt.step({k: t.grad for k, t in tensors.items()})
        return float(loss.item())
    return step


def jax_step(dtype: str):
    """``floor.loss_fn`` through ``jax.jit(jax.value_and_grad(·))`` (compiled on first call),
    then the floor's Adam on the NumPy parameters. XLA's own threads are not limited; in the
    one-thread run their CPU time counts (process time sums a process's threads)."""
    import numpy as np
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return "not installed"
    from benchmarks import floor, reference as r
    jax.config.update("jax_enable_x64", dtype == "float64")
    params, batch = floor.params_of(r.reference_model(dtype)), r.reference_batch(0)
    opt, value_and_grad = floor.Adam(params), jax.jit(
        jax.value_and_grad(lambda p: floor.loss_fn(p, batch, jnp)))

    def step() -> float:
        loss, grads = value_and_grad(params)
        opt.step({k: np.asarray(g) for k, g in grads.items()})
        return float(loss)
    return step


def torch_decoders(dtype: str) -> dict:
    import torch
    from benchmarks import reference as r
    from benchmarks.torch_reference import TorchBahdanau
    tdtype = {"float32": torch.float32, "float64": torch.float64}[dtype]
    model = TorchBahdanau(r.VOCAB, r.EMBED, r.HIDDEN, r.DEC_HIDDEN, r.ATTN, dtype=tdtype)
    model.load_minigrad(r.reference_model(dtype).state_dict())
    src, src_mask, _, _ = (torch.from_numpy(a) for a in r.reference_batch(0))
    n, n1 = src_mask.sum(1), src_mask[:1].sum(1)
    return {"greedy, batch 64": lambda: model.greedy(src, n, r.TGT_LEN),
            "greedy, 1 sentence": lambda: model.greedy(src[:1], n1, r.TGT_LEN),
            "beam 4, batch 64": lambda: model.beam(src, n, r.BEAM, 0.6, r.TGT_LEN),
            "beam 4, 1 sentence": lambda: model.beam(src[:1], n1, r.BEAM, 0.6, r.TGT_LEN)}


def small_graphs(dtype: str) -> tuple:
    """(leaves, {name: (graph, ops)}): forward + backward of the six-op graph of
    ``benchmarks.ab`` and of a 1,000-op chain on two 8 × 8 leaves, ``graph(*leaves[0])`` in
    minigrad's core engine (no kernel applies), ``graph(*leaves[1])`` in PyTorch eager. Each
    leaf's gradient accumulates over calls, in both."""
    import numpy as np
    import torch
    import minigrad as mg
    from benchmarks.ab import six_ops
    arrays = [np.random.default_rng(i).standard_normal((8, 8)).astype(dtype) for i in range(2)]
    leaves = ([mg.Tensor(x, requires_grad=True) for x in arrays],
              [torch.tensor(x, requires_grad=True) for x in arrays])

    def chain(a, b):
        y = a
        for _ in range(CHAIN // 2):
            y = (y * b).tanh()                                            # 2 ops
        y.sum().backward()                                                # CHAIN + 1 ops
    return leaves, {"six ops": (six_ops, 6), f"{CHAIN:,}-op chain": (chain, CHAIN + 1)}


def child(threads: int, rounds: int, skip: set, dtypes=("float32", "float64")) -> dict:
    """One run: every candidate of both dtypes interleaved; returns what the parent tabulates."""
    import numpy as np
    from minigrad.runtime import malloc
    malloc.keep_freed_memory()
    try:
        import torch
        torch.set_num_threads(threads)
    except ImportError:
        pass
    clock = time.process_time if threads == 1 else time.perf_counter
    out = {"machine": machine(), "load": os.getloadavg()[0], "threads": threads, "dtypes": dtypes}
    for dtype in dtypes:
        steps, decode = candidates(dtype, skip)
        tol = 1e-4 if dtype == "float32" else 1e-9
        live = {k: f for k, f in steps.items() if not isinstance(f, str)}
        first = {k: f() for k, f in live.items()}
        for k, loss in first.items():
            if abs(loss - first["core"]) > tol * max(1.0, abs(first["core"])):
                raise AssertionError(f"{dtype}: {k}'s first loss {loss!r} != core's {first['core']!r}")
        times = {k: [] for k in live}
        for i in range(rounds):
            for k, f in live.items():
                if k in SLOW and i >= 3:
                    continue
                times[k].append(timed(f, clock))
        dec = {}
        for k, pair in decode.items():
            if callable(pair):
                continue
            dec[k] = interleaved(pair, rounds, clock, 1e3)                 # ms
        small = {}
        if "torch eager" in live:                                          # torch is there
            leaves, graphs = small_graphs(dtype)
            for k, (graph, ops) in graphs.items():
                calls = max(1, int(1e4 / ops))                             # ~10^4 ops a timing
                pair = [lambda x=x: [graph(*x) for _ in range(calls)] for x in leaves]
                small[k] = interleaved(pair, rounds, clock, 1e6 / (calls * ops))  # µs an op
        rate, matmul_ms, n_flops = matmul_rate(dtype, step_products())
        ms = {k: 1e3 * statistics.median(v) for k, v in times.items()}
        ratio = {}
        for k in live:
            for base in ("floor", "torch eager", "torch.compile"):
                if base in times and k != base:
                    n = min(len(times[k]), len(times[base]))
                    ratio[f"{k} ÷ {base}"] = statistics.median(
                        a / b for a, b in zip(times[k][:n], times[base][:n]))
        out[dtype] = {"ms": ms, "ratio": ratio, "why": {k: f for k, f in steps.items()
                                                         if isinstance(f, str)},
                      "decode": dec, "small": small, "gflops": rate, "matmul_ms": matmul_ms,
                      "flops": n_flops}
    out["load_after"] = os.getloadavg()[0]
    return out


# ---- the parent: runs, then the table -------------------------------------------------------

def child_env(threads: int, avx2: bool = False) -> dict:
    """The environment of a child: the thread count, and with ``avx2`` the ``AVX2`` settings."""
    n = str(threads)
    return {**os.environ, "OPENBLAS_NUM_THREADS": n, "OMP_NUM_THREADS": n,
            "MKL_NUM_THREADS": n, **(AVX2 if avx2 else {})}


def run_child(threads: int, rounds: int, skip: str, dtypes: str, avx2: bool = False) -> dict:
    n, env = str(threads), child_env(threads, avx2)
    cmd = [sys.executable, "-m", "benchmarks.table", "--child", "--threads", n,
           "--rounds", str(rounds), "--skip", skip, "--dtypes", dtypes]
    done = subprocess.run(cmd, cwd=HERE.parent, env=env, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def span(values: list, fmt: str = "{:.2f}") -> str:
    if not values:
        return "-"
    lo, hi = min(values), max(values)
    return fmt.format(lo) if fmt.format(lo) == fmt.format(hi) else f"{fmt.format(lo)}–{fmt.format(hi)}"


def table(runs: dict) -> str:
    """Markdown: the training rows, the limits, decoding, the machine."""
    all_runs = [r for rs in runs.values() for r in rs]
    m, dts = all_runs[0]["machine"], all_runs[0]["dtypes"]
    lines = [f"Machine: {m['cpu']}, {m['cores']} cores; SIMD (NumPy's loops): "
             f"{m.get('simd', '?')}; BLAS kernel: {m.get('kernel', '?')}; PyTorch's kernels: "
             f"{m.get('torch', '?')}. Python {m['python']}, "
             f"NumPy {m['numpy']}; BLAS: {m['blas']} (one-thread run). Load average "
             f"{span([r['load'] for r in all_runs], '{:.1f}')} before, "
             f"{span([r['load_after'] for r in all_runs], '{:.1f}')} after. "
             f"{len(runs.get(1, []))} run(s) per thread setting; ranges are over the runs.", ""]
    bases = ("floor", "torch eager", "torch.compile")
    for threads, rs in sorted(runs.items()):
        label = "one thread, CPU time" if threads == 1 else f"{threads} threads, wall clock"
        lines += [f"**Training step, {label}** (ms: median of the first run; ratios: range over "
                  f"the runs' medians of per-round ratios)", "",
                  "| system | " + " | ".join(f"{dt} ms | ÷ floor | ÷ torch eager | ÷ torch.compile"
                                            " | ÷ matmul limit" for dt in dts) + " |",
                  "|---|" + "---|" * (5 * len(dts))]
        for name in TRAIN:
            cells = [name]
            for dt in dts:
                d = rs[0][dt]
                if name not in d["ms"]:
                    cells += [d["why"].get(name, "-"), "", "", "", ""]
                    continue
                cells.append(f"{d['ms'][name]:.1f}")
                cells += [span([r[dt]["ratio"][f"{name} ÷ {b}"] for r in rs
                                if f"{name} ÷ {b}" in r[dt]["ratio"]]) for b in bases]
                cells.append(span([r[dt]["ms"][name] / r[dt]["matmul_ms"] for r in rs
                                   if name in r[dt]["ms"]]))
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    one = runs.get(1, [])
    if not one:
        return "\n".join(lines) + "\n"
    lines += ["**The limits, recomputed** (one thread)", "",
              "| | " + " | ".join(dts) + " |", "|---|" + "---|" * len(dts)]
    for what, key, scale in (("matmul GFLOP (forward + backward) per step", "flops", 1e-9),
                             ("NumPy's matmul rate on the step's shapes, GFLOP/s", "gflops", 1),
                             ("those matmuls alone, ms per step", "matmul_ms", 1)):
        lines.append(f"| {what} | " + " | ".join(
            span([scale * r[dt][key] for r in one]) for dt in dts) + " |")
    for what, limit in LIMITS.items():
        decoding = what.startswith("decoding")
        cells = []
        for dt in dts:
            v = ([d[2] for r in one for d in r[dt]["decode"].values()] if decoding else
                 [r[dt]["ratio"][what] for r in one if what in r[dt]["ratio"]])
            cells.append(f"{max(v):.2f} " + ("met" if max(v) <= limit else "**not met**") if v else "-")
        lines.append(f"| {what} ≤ {limit} (worst run{', worst workload' if decoding else ''}) | "
                     + " | ".join(cells) + " |")
    for what, limit in SMALL.items():
        worst = [[r[dt]["small"][what][2] for r in one if what in r[dt]["small"]] for dt in dts]
        if any(worst):
            lines.append(f"| {what} ÷ torch eager ≤ {limit} (worst run) | " + " | ".join(
                f"{max(w):.2f} " + ("met" if max(w) <= limit else "**not met**") if w else "-"
                for w in worst) + " |")
    lines += versus(one, dts, "decode", "**Decoding, kernels path vs PyTorch eager** (one thread; "
                    "ms: median of the first run; ratio minigrad ÷ torch: range over runs)",
                    "workload", "{:.1f}")
    if one[0][dts[0]]["small"]:
        lines += versus(one, dts, "small", "**Small graphs, the core engine vs PyTorch eager** (one "
                        "thread, forward + backward on 8 × 8 leaves; µs per op: median of the first "
                        "run; ratio: range over runs)", "graph", "{:.2f}")
    return "\n".join(lines) + "\n"


def versus(one: list, dts, key: str, title: str, column: str, fmt: str) -> list:
    """Markdown lines: minigrad against torch, a row per ``one[0][dt][key]`` entry [mine, torch,
    ratio]: both times of the first run, the ratio's range over the runs."""
    lines = ["", title, "", f"| {column} | " + " | ".join(f"{dt} minigrad | torch | ratio"
                                                       for dt in dts) + " |",
             "|---|" + "---|" * (3 * len(dts))]
    for k in one[0][dts[0]][key]:
        cells = [k]
        for dt in dts:
            d = one[0][dt][key][k]
            cells += [fmt.format(d[0]), fmt.format(d[1]), span([r[dt][key][k][2] for r in one])]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def write(text: str, path: pathlib.Path = HERE / "README.md", avx2: bool = False) -> None:
    """Replace what lies between the markers in benchmarks/README.md (nothing else): the first
    table's, or with ``avx2`` the second's."""
    start, end = MARKERS[avx2]
    doc = path.read_text(encoding="utf-8")
    if start not in doc or end not in doc:
        raise SystemExit(f"{path}: markers {start} / {end} not found; nothing written")
    head, rest = doc.split(start, 1)
    path.write_text(head + start + "\n" + text + end + rest.split(end, 1)[1], encoding="utf-8")


def main(argv=None) -> None:
    p = argparse.ArgumentParser(prog="python -m benchmarks.table", description=__doc__.split("\n")[0])
    p.add_argument("--write", action="store_true", help="write the table into benchmarks/README.md")
    p.add_argument("--runs", type=int, default=3, help="fresh processes per thread setting (3)")
    p.add_argument("--rounds", type=int, default=9, help="interleaved rounds per run (9)")
    p.add_argument("--threads", type=int, nargs="*", default=None,
                   help="thread settings (default: 1 and all cores)")
    p.add_argument("--dtypes", default="float32,float64", help="comma-separated (both)")
    p.add_argument("--skip", default="", help="comma-separated rows not to run: "
                   + ", ".join(SKIPPABLE))
    p.add_argument("--avx2", action="store_true", help="every library at AVX2, as on a CPU "
                   "without AVX-512 (NumPy, OpenBLAS, PyTorch, MKL, oneDNN); --write writes the "
                   "second table")
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.child:
        print(json.dumps(child(a.threads[0], a.rounds, parse_skip(a.skip),
                               tuple(a.dtypes.split(",")))))
        return
    parse_skip(a.skip)                                        # a typo fails now, not in a child
    settings = a.threads or sorted({1, os.cpu_count() or 1})
    runs = {n: [] for n in settings}
    for i in range(a.runs):
        for n in settings:
            print(f"run {i + 1}/{a.runs}, {n} thread(s) ...", file=sys.stderr, flush=True)
            skip = a.skip if i == 0 and n == 1 else a.skip + ",torch.compile"  # compiling: minutes
            runs[n].append(run_child(n, a.rounds, skip, a.dtypes, a.avx2))
    text = table(runs)
    print(text)
    if a.write:
        write(text, avx2=a.avx2)


if __name__ == "__main__":
    main()
