"""Two revisions of the engine in one process: is the first-order path slower than before?

    python -m benchmarks.ab bfe3e65 HEAD            # any two git revisions of this repository
    python -m benchmarks.ab HEAD .                  # HEAD against the working tree
    python -m benchmarks.ab /tmp/before . --only step   # a copied tree against the working tree

Each revision's ``minigrad/``, ``attention/`` and ``models/`` are taken from git (``git
archive``), or copied from a folder holding them (``.``: the working tree, uncommitted edits
included), into a temporary folder under package names of their own (the import lines are
rewritten), so both load into **one** process and run interleaved, timed in process CPU time,
round by round, with the order alternating: the machine's load hits both alike, and the
ratio B / A (the median of the per-round ratios) means something even on a busy machine,
where absolute times do not. Workloads, float64 and float32, one BLAS thread:

* ``chain``: forward + backward of a six-op graph on 8 × 8 leaves,
  ((a * b + a).tanh() @ b).sigmoid().sum() -- the engine's cost per node, almost no arithmetic;
* ``mlp``: forward + backward of a two-layer tanh network's cross-entropy, B = 64, 32 → 64 → 10
  -- a small step where the arithmetic matters too;
* ``step``: the reference training step (``benchmarks/reference.py``: the Bahdanau seq2seq,
  batch 64, lengths 20, forward + backward + Adam), 5 steps per call, with the kernels on as
  the application runs it (``models/kernels.py``; a revision without that file had them built in);
* ``core``: the same five steps on the composed core (no kernels), the model a learner builds;
* ``decode``: greedy decoding and beam search (k = 4) of one reference sentence with the kernels
  on, the decoding table's one-sentence rows (``benchmarks/table.py``), where the per-step
  overhead is all there is.
"""
from __future__ import annotations

import argparse
import importlib
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

from minigrad.runtime import blas, malloc

ROUNDS = 15
CALLS = {"chain": 200, "mlp": 200, "step": 1, "core": 1, "decode": 10}  # per round
PACKAGES = ("minigrad", "attention", "models")
IMPORT = re.compile(r"^(\s*(?:from|import) )(minigrad|attention|models)\b", re.M)
# ``import minigrad.kernels`` (no ``as``) binds the name ``minigrad``: bind it to the renamed one
BARE = re.compile(r"^(\s*)import (minigrad|attention|models)((?:\.\w+)*)[ \t]*$", re.M)


def rename(source: str, suffix: str) -> str:
    """``source`` with its imports of the three packages renamed to ``<package>_<suffix>``."""
    source = BARE.sub(lambda m: f"{m.group(1)}import {m.group(2)}_{suffix}{m.group(3)}; "
                                f"{m.group(2)} = {m.group(2)}_{suffix}", source)
    return IMPORT.sub(lambda m: f"{m.group(1)}{m.group(2)}_{suffix}", source)


def extract(revision: str, folder: pathlib.Path) -> None:
    """``revision``'s three packages into ``folder``: a commit's from git (``git archive``), or
    a folder's copied; ValueError, in one line, for a commit git does not know."""
    if pathlib.Path(revision).is_dir():                                   # a tree, not a commit
        for package in PACKAGES:
            shutil.copytree(pathlib.Path(revision) / package, folder / package,
                            ignore=shutil.ignore_patterns("__pycache__"))
        return
    root = pathlib.Path(__file__).resolve().parent.parent
    done = subprocess.run(["git", "-C", str(root), "archive", revision, *PACKAGES],
                          capture_output=True)
    if done.returncode != 0:
        raise ValueError(f"{revision!r} is neither a folder nor a commit git knows: "
                         f"{(done.stderr.decode().strip().splitlines() or ['?'])[-1]}")
    subprocess.run(["tar", "-x", "-C", str(folder)], input=done.stdout, check=True)


def load(revision: str, suffix: str, folder: pathlib.Path) -> dict:
    """The packages as they are at ``revision``, imported as ``minigrad_<suffix>`` etc.;
    returns {"mg": minigrad, "seq2seq": models.seq2seq, "use_kernels": ...} of that revision
    (``use_kernels`` of ``models/kernels.py``, or nothing to switch in a revision before it,
    whose default model was already the fast one)."""
    extract(revision, folder)
    for package in PACKAGES:
        (folder / package).rename(folder / f"{package}_{suffix}")
        for path in (folder / f"{package}_{suffix}").rglob("*.py"):
            path.write_text(rename(path.read_text(), suffix))
    kernels = folder / f"models_{suffix}" / "kernels.py"  # a revision with the kernels room
    return {"mg": importlib.import_module(f"minigrad_{suffix}"),
            "seq2seq": importlib.import_module(f"models_{suffix}.seq2seq"),
            "use_kernels": (importlib.import_module(f"models_{suffix}.kernels").use_kernels
                            if kernels.exists() else lambda model: model)}


def workloads(engine: dict, dtype: str) -> dict:
    """name -> a function running one forward + backward, the same numbers for each engine."""
    mg, rng = engine["mg"], np.random.default_rng(0)
    a, b = (mg.Tensor(rng.standard_normal((8, 8)).astype(dtype), requires_grad=True)
            for _ in range(2))
    x = mg.Tensor(rng.standard_normal((64, 32)).astype(dtype))
    w1, w2 = (mg.Tensor(0.1 * rng.standard_normal(s).astype(dtype), requires_grad=True)
              for s in ((32, 64), (64, 10)))
    onehot = np.eye(10, dtype=dtype)[rng.integers(0, 10, 64)]                 # (64, 10)

    def chain():
        six_ops(a, b)

    def mlp():
        logits = (x @ w1).tanh() @ w2                                          # (64, 10)
        (-(logits - logits.logsumexp(axis=1, keepdims=True)) * onehot).sum().backward()
    return {"chain": chain, "mlp": mlp, "step": reference_step(engine, dtype),
            "core": reference_step(engine, dtype, kernels=False),
            "decode": reference_decode(engine, dtype)}


def six_ops(a, b) -> None:
    """Forward and backward of a six-op graph of two leaves, in any engine with these methods
    (``chain`` here; the small graphs of ``benchmarks/table.py`` against PyTorch)."""
    ((a * b + a).tanh() @ b).sigmoid().sum().backward()


def reference_model(engine: dict, dtype: str, kernels: bool):
    """The reference model (benchmarks/reference.py) of ``engine``'s revision, seed 0."""
    from benchmarks import reference as ref
    s2s = engine["seq2seq"]
    config = s2s.ModelConfig(ref.VOCAB, ref.VOCAB, embed=ref.EMBED, hidden=ref.HIDDEN,
                             dec_hidden=ref.DEC_HIDDEN, attn=ref.ATTN, decoder="bahdanau",
                             score="additive", dtype=dtype)
    model = s2s.Seq2Seq(config, np.random.default_rng([0, 0]))
    return engine["use_kernels"](model) if kernels else model


def reference_step(engine: dict, dtype: str, kernels: bool = True):
    """Five reference training steps (the same model, batch and Adam as benchmarks/reference.py),
    on the kernels or (``kernels=False``) on the composed core."""
    from benchmarks import reference as ref
    model = reference_model(engine, dtype, kernels)
    src, src_mask, tgt, tgt_mask = ref.reference_batch(0)
    opt = engine["mg"].optim.Adam(model.parameters(), lr=ref.LR)

    def step():
        for _ in range(5):
            opt.zero_grad()
            model.loss(src, tgt, src_mask, tgt_mask).backward()
            opt.step()
    return step


def reference_decode(engine: dict, dtype: str):
    """Greedy decoding, then beam search (k = 4), of the reference batch's first sentence, with
    the kernels on (at most TGT_LEN steps each)."""
    from benchmarks import reference as ref
    model = reference_model(engine, dtype, kernels=True)
    src, src_mask = (a[:1] for a in ref.reference_batch(0)[:2])

    def decode():
        model.greedy(src, ref.TGT_LEN, src_mask)
        model.beam(src, ref.BEAM, 0.6, ref.TGT_LEN, src_mask)
    return decode


def per_call(f, calls: int) -> float:
    """Process CPU time per call: another process's load on a shared machine does not count."""
    start = time.process_time()
    for _ in range(calls):
        f()
    return (time.process_time() - start) / calls


def compare(engines: list, dtype: str, names=None, rounds: int | None = None) -> list:
    """Rows (workload, A µs, B µs, median ratio B/A, spread) for two engines."""
    runs = [workloads(mg, dtype) for mg in engines]
    rows = []
    for name in names or runs[0]:
        fs = [r[name] for r in runs]
        for f in fs:
            per_call(f, CALLS[name])                                           # warm-up
        times = [[], []]
        for k in range(rounds or ROUNDS):
            for i in ((0, 1) if k % 2 == 0 else (1, 0)):
                times[i].append(per_call(fs[i], CALLS[name]))
        ratios = sorted(tb / ta for ta, tb in zip(*times))
        rows.append((name, 1e6 * np.median(times[0]), 1e6 * np.median(times[1]),
                     ratios[len(ratios) // 2], ratios[1], ratios[-2]))
    return rows


def main(argv=None) -> None:
    p = argparse.ArgumentParser(prog="python -m benchmarks.ab", description=__doc__.split("\n")[0])
    p.add_argument("a", help="the revision before (a commit, or a folder holding the packages)")
    p.add_argument("b", nargs="?", default="HEAD",
                   help="the revision after (default HEAD; . is the working tree)")
    p.add_argument("--only", help="comma-separated workloads (default: chain,mlp,step,core,decode)")
    p.add_argument("--rounds", type=int, default=ROUNDS, help=f"interleaved rounds ({ROUNDS})")
    args = p.parse_args(argv)
    if args.rounds < 3:
        p.error(f"--rounds: at least 3 (the spread leaves out the fastest and the slowest), "
                f"got {args.rounds}")
    blas.set_threads(1)
    malloc.keep_freed_memory()  # as python -m models and python -m benchmarks do
    with tempfile.TemporaryDirectory() as tmp:
        sys.path.insert(0, tmp)
        engines = [load(args.a, "a", pathlib.Path(tmp)), load(args.b, "b", pathlib.Path(tmp))]
        n = args.rounds
        print(f"A = {args.a}, B = {args.b}; {n} interleaved rounds; "
              f"load average {os.getloadavg()[0]:.2f}")
        print(f"{'workload':8s} {'dtype':8s} {'A µs':>9s} {'B µs':>9s} {'B/A':>6s}  "
              f"middle {n - 2} of {n}")
        for dtype in ("float64", "float32"):
            names = args.only.split(",") if args.only else None
            for name, ta, tb, ratio, lo, hi in compare(engines, dtype, names, n):
                print(f"{name:8s} {dtype:8s} {ta:9.1f} {tb:9.1f} {ratio:6.3f}  {lo:.3f}–{hi:.3f}")
        print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
