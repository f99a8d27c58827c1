"""``python -m models explore RUN [--out FILE.html] [--lang zh]``: a trained run as one page:
its first held-out pair's loss (regenerated from the run's task and seed, as ``inspect`` does)
in ``minigrad.viz.explore``, plus the attention panel: α_tj over the source for each decoder
step t (a Transformer's per layer and head) and, for a weight, ∂L/∂e_tj = α_tj g·(h_j − c_t)
(source 004 §7; local-p's below) beside the engine's own; a click shows the read in the graph;
and the training panel: loss and held-out exact match per epoch, and the pair's α at each epoch
training saved (``train.first_alignment``; epoch 0: the seed's initial weights). The page is a
new file in RUN (explore.html, explore-2.html …) unless ``--out`` names one, never a user's."""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np

from minigrad import i18n
from minigrad.draw.common import token
from minigrad.functional import softmax_array
from minigrad.viz import trace
from minigrad.viz.explore import explore, read_numbers, rounded as r6
from models.app.checkpoint import CheckpointError, load_checkpoint
from models.app.data import make_task
from models.app.runs import free_name
from models.app.train import first_alignment
from models.app.train_config import TrainConfig, seeds
from models.seq2seq import Seq2Seq, masked_cross_entropy
from models.vocab import pad_batch

_ = i18n.translator("models")


def _local_p(tr, page):
    """local-p's steps (Luong et al. 2015 §3.2): α_t = softmax(e_t), the node a click shows, and
    c_t = Σ_j α_tj G_tj h_j, G_tj = exp(−(j − p_t)²/2σ²): ∂L/∂e_tj = α_tj (G_tj g·h_j − g·c_t)."""
    users = {p: t for t in tr.nodes for p in tr.parents[t]}          # a reader of each node
    for a in (t for t in tr.nodes if t._op == "softmax" and users.get(t, t)._op == "mul"):
        x, G = users[a], [p for p in tr.parents[users[a]] if p is not a][0]  # α G; G (1, S)
        while x._op != "matmul":                                      # (α G) @ h
            x = users[x]
        yield {"a": r6(a.data[0]), "G": r6(G.data[0]), **read_numbers(
            tr, page.num[a], users[x], tr.parents[a][0], tr.parents[x][1])}   # c_t, e_t, h


def explore_pair(model, src_vocab, tgt_vocab, pair, title: str):
    """The page of ``model``'s loss on one (source, target) pair, with its attention panel."""
    (src, src_mask), (tgt, tgt_mask) = (pad_batch([v.encode(s)]) for v, s in
                                        zip((src_vocab, tgt_vocab), pair))   # (1, S), (1, T)
    with trace(model) as tr:
        logits, alpha = model.forward(src, tgt, src_mask)            # (1, T, V), (1, T, S)
        loss = masked_cross_entropy(logits, tgt, tgt_mask)
    page = explore(loss, tr, {"L": loss}, title)
    loss.backward()                                                   # the engine's gradients
    reads = {tr.scopes[t][1:2]: t for t in tr.nodes if t._op == "read" and   # per step; per
             tr.scopes[t][:1] == ("decoder",)}.values()   # Transformer layer: its last, cross
    steps = [read_numbers(tr, page.num[c], c, *tr.parents[c]) for c in reads]
    steps += _local_p(tr, page)                                       # or local-p's softmaxes
    page.data["attention"] = a = {
        "src": [token(c, 8) for c in src_vocab.tokens(src[0])],
        "tgt": [token(c, 8) for c in tgt_vocab.tokens(tgt[0])],
        "alpha": r6(alpha[0]), "steps": steps if len(steps) == tgt.shape[1] else []}  # (T, S)
    if model.config.decoder == "transformer":  # each layer's cross read; one pair: no padding
        a["heads"] = [r6(softmax_array(tr.parents[c][0].data[0])) for c in reads]  # (l, h, T, S)
        a["cross"] = steps                                            # per layer, not per step
        a["steps"] = []
    return page


def _finite(x, shape=()):
    """``x`` as floats of ``shape`` (3 decimals), or None: a damaged index cannot break the page."""
    try:
        a = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        return None
    return a.round(3).tolist() if a.shape == shape and np.isfinite(a).all() else None


def training_panel(state: dict, untrained: Seq2Seq, data, shape: tuple) -> dict:
    """[epoch, loss, held-out exact match] per saved epoch, and [epoch, α (T, S)] of the first
    held-out pair at epoch 0 (``untrained``) and at each epoch whose record kept it."""
    history = [h for h in state.get("history", []) if isinstance(h, dict)]
    alpha = [[0, first_alignment(untrained, data)]] + [[h.get("epoch"), h.get("alpha")]
                                                        for h in history if "alpha" in h]
    rows = [[_finite(h.get(k)) for k in ("epoch", "loss", "val_exact")] for h in history]
    return {"history": [row for row in rows if row[0] is not None],
            "alpha": [[e, a] for e, a in ((_finite(e), _finite(a, shape)) for e, a in alpha)
                      if e is not None and a is not None]}


def explore_run(run: str):
    fused, src_vocab, tgt_vocab, index = load_checkpoint(run)
    model = Seq2Seq(fused.config, np.random.default_rng(0))  # the core ops, not the kernels:
    model.load_state_dict(fused.state_dict())                # each equation is its own node
    model.eval()  # α as the model reads at evaluation: no attention dropout
    if "train" not in index or model.config.decoder == "plain":
        raise CheckpointError(_("explore: {run} has no attention or was not saved by training")
                              .format(run=run))
    c = TrainConfig.from_dict(index["train"])
    data_rng, init_rng, _train_rng = seeds(c.seed)
    data = make_task(c.task, data_rng, c.n_train, c.n_val, c.min_len, c.max_len)
    pair = data.val[0]
    title = _("{run}: the loss of {source} → {target}").format(run=run, source=pair[0],
                                                               target=pair[1])
    page = explore_pair(model, src_vocab, tgt_vocab, pair, title)
    page.data["training"] = training_panel(index.get("state") or {}, Seq2Seq(
        fused.config, init_rng), data, np.shape(page.data["attention"]["alpha"]))  # (T, S)
    return page


def main(argv) -> int:
    p = argparse.ArgumentParser(prog="python -m models explore",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("run", help=_("a run folder written by training (e.g. runs/dates)"))
    p.add_argument("--out", help=_("the page to write (default: a new explore.html in RUN)"))
    i18n.add_argument(p)
    a = p.parse_args(argv)
    i18n.apply(a)
    try:
        page = explore_run(a.run)
        folder = a.run if os.path.isdir(a.run) else os.path.dirname(a.run)
        path = page.save(a.out or free_name(folder, "explore", "html"))
    except (CheckpointError, ValueError, OSError) as e:
        print(_("error: {e}").format(e=e), file=sys.stderr)
        return 2
    print(_("wrote {path}").format(path=path))
    return 0
