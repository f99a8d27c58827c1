"""``Seq2Seq``: an encoder and a decoder built from a ``ModelConfig``, the loss, and decoding.
Shape letters: B batch, S source length, T target length (L either), V target vocabulary.

Sources ``x_1 .. x_{S−1}, EOS`` and targets ``y_1 .. y_{T−1}, EOS`` are right-padded ids with
boolean masks (True = real; None: ids != PAD); the decoder reads ``BOS, y_1 .. y_{T−1}``. The
loss is the mean cross-entropy over the real target tokens::

    L = −(1 / Σ_b T_b) Σ_b Σ_{t ≤ T_b} log p(y_bt | y_b,<t, x_b)

The entry points (``forward``, ``loss``, ``greedy``, ``beam``) check their input once, with
errors that name the role; what they call takes it as checked.
"""
from __future__ import annotations

import numpy as np

import minigrad as mg
from minigrad import functional as F, init
from minigrad.nn import Module

from models.config import DTYPES, ModelConfig
from models.decoders import BahdanauDecoder, PlainDecoder
from models.decoding import beam_search
from models.luong import LuongDecoder
from models.recurrent import BiGRUEncoder
from models.transformer import TransformerDecoder, TransformerEncoder
from models.vocab import BOS, PAD


def check_ids(ids, vocab: int, role: str, mask=None) -> tuple:
    """Integer ids (B, L), non-empty, in 0 .. vocab − 1, and their mask (None: ids != PAD)."""
    ids = np.asarray(ids)                                                 # (B, L)
    if ids.ndim != 2 or ids.dtype.kind not in "iu" or 0 in ids.shape:
        raise ValueError(f"{role}: expected integer ids of shape (B, L), non-empty, got "
                         f"{ids.dtype} {ids.shape}")
    if ids.min() < 0 or ids.max() >= vocab:
        raise ValueError(f"{role}: token id {ids[(ids < 0) | (ids >= vocab)][0]} is out of range "
                         f"for a vocabulary of {vocab}")
    mask = ids != PAD if mask is None else np.asarray(mask, dtype=bool)   # (B, L)
    if mask.shape != ids.shape:
        raise ValueError(f"{role}: mask of shape {mask.shape} vs ids of shape {ids.shape}")
    return ids, mask


def check_source(src, mask, vocab: int) -> tuple:
    """Ids (B, S) and their mask: right-padded, a real token first in every row."""
    src, mask = check_ids(src, vocab, "source", mask)                     # (B, S) each
    if not mask[:, 0].all() or (mask[:, 1:] & ~mask[:, :-1]).any():
        raise ValueError("source: every sequence needs at least one real token, first, and "
                         "padding only after the real tokens (right-padding)")
    return src, mask


def decoder_inputs(tgt: np.ndarray) -> np.ndarray:
    """BOS, y_1 .. y_{T−1}: the targets shifted right by one, (B, T)."""
    bos = np.full((tgt.shape[0], 1), BOS, dtype=tgt.dtype)                # (B, 1)
    return np.concatenate([bos, tgt[:, :-1]], axis=1)                      # (B, T)


def masked_cross_entropy(logits, tgt, tgt_mask=None) -> mg.Tensor:
    """Mean of −log softmax(logits)[y] (B, T, V) over the real targets (None: tgt != PAD)."""
    tgt_mask = np.asarray(tgt) != PAD if tgt_mask is None else tgt_mask   # (B, T)
    return F.cross_entropy(logits, np.where(tgt_mask, tgt, PAD), ignore_index=PAD)  # ()


class Seq2Seq(Module):
    """Encoder–decoder with attention (or without: ``decoder="plain"``), built from a config."""

    def __init__(self, config: ModelConfig, rng: np.random.Generator | None = None):
        rng = init.generator("Seq2Seq", rng)
        self.config, c, dtype = config, config, DTYPES[config.dtype]
        if c.decoder == "transformer":
            sizes = dict(dim=c.d_model, heads=c.heads, ff=c.ff, layers=c.layers, dropout=c.dropout,
                         activation=c.activation, position=c.positions, max_len=c.max_positions,
                         rng=rng, dtype=dtype)
            self.encoder = TransformerEncoder(c.src_vocab, **sizes)
            self.decoder = TransformerDecoder(c.tgt_vocab, **sizes)
            return
        self.encoder = BiGRUEncoder(c.src_vocab, c.embed, c.hidden, c.reset_after, rng, dtype)
        common = dict(vocab_size=c.tgt_vocab, embed_dim=c.embed, hidden_size=c.dec_hidden,
                      key_dim=2 * c.hidden, reset_after=c.reset_after, rng=rng, dtype=dtype)
        attending = dict(attn_dim=c.attn, score=c.score, attention=c.attention_options())
        self.decoder = {"plain": lambda: PlainDecoder(**common),
                        "bahdanau": lambda: BahdanauDecoder(**common, **attending),
                        "luong": lambda: LuongDecoder(**common, **attending, cell=c.cell,
                                                      input_feeding=c.input_feeding,
                                                      local_window=c.local_window,
                                                      combine=c.combine)}[c.decoder]()

    def forward(self, src, tgt, src_mask=None, teacher_forcing: float = 1.0,
                rng: np.random.Generator | None = None) -> tuple:
        """Logits (B, T, V) for targets ``tgt (B, T)`` and the alignment (B, T, S) or None."""
        return self.run(src, tgt, src_mask, None, teacher_forcing, rng)[:2]

    def loss(self, src, tgt, src_mask=None, tgt_mask=None, teacher_forcing: float = 1.0,
             rng: np.random.Generator | None = None) -> mg.Tensor:
        """L above; ``teacher_forcing`` is the probability of feeding y_{t−1} rather than the
        model's own guess (< 1 needs ``rng``)."""
        logits, _, tgt, tgt_mask = self.run(src, tgt, src_mask, tgt_mask, teacher_forcing, rng)
        return masked_cross_entropy(logits, tgt, tgt_mask)                # ()

    def run(self, src, tgt, src_mask, tgt_mask, teacher_forcing: float, rng) -> tuple:
        """(logits (B, T, V), alignment, tgt, tgt_mask): the input checked, then run."""
        src, src_mask = check_source(src, src_mask, self.config.src_vocab)  # (B, S) each
        tgt, tgt_mask = check_ids(tgt, self.config.tgt_vocab, "targets", tgt_mask)  # (B, T) each
        if len(tgt) != len(src):
            raise ValueError(f"targets: shape {tgt.shape} does not fit sources {src.shape}")
        if not (0 <= teacher_forcing <= 1 and (teacher_forcing == 1 or rng is not None)):  # NaN too
            raise ValueError(f"Seq2Seq: teacher_forcing must be in [0, 1], and < 1 needs rng (it "
                             f"draws which inputs to replace); got {teacher_forcing}, rng={rng}")
        encoded = self.encoder(src, src_mask, rng=rng)  # rng: the Transformer's attention dropout
        return (*self.decoder(encoded, decoder_inputs(tgt), teacher_forcing, rng), tgt, tgt_mask)

    def greedy(self, src, max_len: int = 32, src_mask=None) -> list:
        """A ``Translation`` per example, the most likely token at every step: a beam of 1."""
        return self.beam(src, 1, 0.0, max_len, src_mask)

    def beam(self, src, beam_size: int = 4, length_penalty: float = 0.6, max_len: int = 32,
             src_mask=None, accept=None) -> list:
        """A ``Translation`` per example by beam search (``models/decoding.py``)."""
        src, src_mask = check_source(src, src_mask, self.config.src_vocab)
        return beam_search(self, src, beam_size, length_penalty, max_len, src_mask, accept)
