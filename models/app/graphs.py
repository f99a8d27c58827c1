"""Computation graphs of the model (``python -m models graph``), drawn by ``minigrad.viz``.

* ``gru_step``: one ``GRUCell`` step, composed from minigrad ops as the core cell is (the
  fused kernel of ``models/kernels.py`` would be a single box), every node with its value and
  gradient, for L = Σ h'.
* ``loss_graph``: a seq2seq training loss, traced through forward and backward, collapsed:
  one box per Module call (``encoder``, ``decoder``) and, inside the opened ``decoder``, one
  per time step, each with its node count, inputs and outputs. The model is the core one
  (built without ``models.app.build``'s kernels), so the boxes are the equations' ops.
"""
from __future__ import annotations

import os

import numpy as np

from minigrad.i18n import translator
from minigrad.tensor import Tensor
from minigrad.viz import draw_graph, trace
from models.app.runs import free_name
from models.recurrent import GRUCell
from models.seq2seq import ModelConfig, Seq2Seq
from models.vocab import PAD

_ = translator("models")

EXTENSIONS = {"svg": "svg", "dot": "dot", "mermaid": "mmd", "text": "txt"}


def gru_step(fmt: str = "svg", path=None, input_size: int = 2, hidden: int = 3,
             seed: int = 0) -> str:
    """One GRU step h' = GRU(x, h) for a batch of one, expanded into its ops."""
    rng = np.random.default_rng(seed)
    cell = GRUCell(input_size, hidden, rng=rng)
    x = Tensor(rng.standard_normal((1, input_size)), requires_grad=True)   # (B, I)
    h = Tensor(rng.standard_normal((1, hidden)), requires_grad=True)       # (B, H)
    with trace(cell) as tr:
        h_next = cell(x, h)                                                # (B, H)
        loss = h_next.sum()
        loss.backward()
    title = _("One GRU step: r|z = σ(gi + gh), n = tanh(gi_n + r ⊙ gh_n), h' = n + z ⊙ (h − n)")
    return draw_graph(loss, fmt, path, trace=tr, names={"x": x, "h": h, "h'": h_next, "L": loss},
                      title=title)


def loss_graph(model, src, tgt, src_mask=None, tgt_mask=None, fmt: str = "svg", path=None,
               expand=("decoder",), title=None) -> str:
    """Trace ``model.loss`` forward and backward, then draw it collapsed (``expand`` opens
    groups: by default the decoder, so each of its time steps is one box)."""
    with trace(model) as tr:
        loss = model.loss(src, tgt, src_mask, tgt_mask)
        loss.backward()
    return draw_graph(loss, fmt, path, trace=tr, collapse=1, expand=expand, title=title)


def demo_batch(rng, batch: int, length: int, vocab: int) -> tuple:
    """Random ids (B, L) in 1..vocab-1, the last 3 positions of half the batch padding."""
    src = rng.integers(1, vocab, size=(batch, length))                     # (B, S)
    src[batch // 2:, length - 3:] = PAD
    tgt = rng.integers(1, vocab, size=(batch, length))                     # (B, T)
    return src, src != PAD, tgt, np.ones_like(tgt, dtype=bool)


def cmd_graph(a) -> None:
    """Write gru_step.<ext> and seq2seq_loss.<ext> into ``a.out`` (new names, ``-2`` …, when
    those exist: an earlier drawing, or a user's file, is never replaced)."""
    os.makedirs(a.out, exist_ok=True)
    ext = EXTENSIONS[a.fmt]
    path = free_name(a.out, "gru_step", ext)
    gru_step(a.fmt, path)
    print(_("wrote {path}").format(path=path))
    rng = np.random.default_rng(a.seed)
    model = Seq2Seq(ModelConfig(a.vocab, a.vocab, dtype="float32"), rng)  # default sizes, core
    src, src_mask, tgt, tgt_mask = demo_batch(rng, a.batch, a.length, a.vocab)
    title = _("Seq2seq training loss (B={batch}, S=T={length}, vocab {vocab}), collapsed: one "
              "box per module call and decoder step").format(batch=a.batch, length=a.length,
                                                             vocab=a.vocab)
    path = free_name(a.out, "seq2seq_loss", ext)
    text = loss_graph(model, src, tgt, src_mask, tgt_mask, a.fmt, path, title=title)
    print(_("wrote {path}").format(path=path))
    if a.fmt != "text":  # the terminal shows the graph the file holds, collapsed alike
        text = loss_graph(model, src, tgt, src_mask, tgt_mask, "text", title=title)
    print(text)
