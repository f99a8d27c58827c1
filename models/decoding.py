"""Beam-search decoding (greedy is a beam of 1), batched, with each example's alignment matrix.
Shape letters: B batch, K beam size, S source length, V target vocabulary, L decoded length.

The decoder runs one step at a time under ``no_grad`` in eval mode, keeping each example's K
best partial hypotheses by total log-probability (a finished one carries on with PAD at zero
cost; PAD and BOS are never emitted) until all have produced EOS, or ``max_len`` tokens. Then a
finished hypothesis ranks first, and by the GNMT score::

    log p(y | x) / lp(|y|),     lp(L) = ((5 + L) / 6)^α      (α = ``length_penalty``; 0 = none)
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

import minigrad as mg

from models.recurrent import Encoded
from models.vocab import BOS, EOS, PAD


@dataclass
class Translation:
    """One decoded example: ``tokens`` up to and including EOS (if produced), the alignment
    ``weights (L, S)`` over the real source (None without attention), ``score`` = Σ log p."""
    tokens: list
    weights: np.ndarray | None
    score: float


def length_penalty_gnmt(length, alpha: float):
    """lp(L) = ((5 + L) / 6)^α (Wu et al. 2016)."""
    return ((5.0 + np.asarray(length, dtype=np.float64)) / 6.0) ** alpha


def beam_search(model, src, beam_size: int = 4, length_penalty: float = 0.6, max_len: int = 32,
                src_mask=None, accept=None) -> list:
    """A ``Translation`` per example of ``src (B, S)`` and ``src_mask``, checked. ``accept(ids)
    -> bool``, if given, judges each final hypothesis (ids up to EOS): the best accepted wins."""
    if not (all(isinstance(n, (int, np.integer)) and n >= 1 for n in (max_len, beam_size))
            and np.isfinite(length_penalty) and length_penalty >= 0):  # NaN would rank at random
        raise ValueError(f"decoding: max_len={max_len!r} and beam_size={beam_size!r} must be "
                         f"ints >= 1, length_penalty={length_penalty!r} a finite number >= 0")
    V, B, K = model.decoder.out.weight.shape[0], src.shape[0], int(beam_size)
    first = np.arange(B)[:, None]                                      # (B, 1)
    with _evaluating(model):
        rows = np.repeat(np.arange(B), K)                              # (B·K,): 0, 0, .., 1, ..
        encoded = Encoded(*(part[rows] for part in model.encoder(src, src_mask)))  # K times each
        state, ctx = model.decoder.start(encoded)
        scores = np.full((B, K), -np.inf)                              # (B, K) total log p
        scores[:, 0] = 0.0                                            # one live hypothesis at first
        finished = np.zeros((B, K), dtype=bool)                        # (B, K)
        tokens, logps = np.zeros((B, K, 0), np.int64), np.zeros((B, K, 0))  # (B, K, t) each
        alphas = np.zeros((B, K, 0, src.shape[1]), model.decoder.out.weight.dtype)  # (B, K, t, S)
        y = np.full(B * K, BOS, dtype=np.int64)                        # (B·K,)
        for t in range(max_len):
            state, features, alpha = model.decoder.step(y, state, ctx, t)
            logp = model.decoder.log_probs(features).data.astype(np.float64).reshape(B, K, V)
            logp[:, :, [PAD, BOS]] = -np.inf                           # never emitted
            logp[finished] = -np.inf                                   # a finished hypothesis
            logp[finished, PAD] = 0.0                                  # only carries on, at no cost
            cand = (scores[:, :, None] + logp).reshape(B, K * V)  # (B, K·V); ties: the lower first
            top = np.argsort(-cand, 1, kind="stable")[:, :K] if K > 1 else cand.argmax(1)[:, None]
            beam, tok, scores = top // V, top % V, cand[first, top]    # (B, K) each
            if K > 1:  # each survivor's past (greedy's one hypothesis keeps its own)
                state = tuple(s[(first * K + beam).reshape(-1)] for s in state)  # each (B·K, ·)
                tokens, logps, alphas, finished = (a[first, beam] for a in
                                                   (tokens, logps, alphas, finished))
            tokens = np.concatenate([tokens, tok[:, :, None]], axis=2)  # (B, K, t+1)
            logps = np.concatenate([logps, logp[first, beam, tok][:, :, None]], axis=2)
            if alpha is not None:                                      # α (B, K, t+1, S)
                alphas = np.concatenate([alphas, alpha.data.reshape(B, K, 1, -1)[first, beam]], 2)
            finished = finished | (tok == EOS)                         # (B, K)
            y = tok.reshape(-1)                                        # (B·K,)
            if finished.all():
                break
    pick = (np.arange(B), _best(scores, finished, tokens, logps, src_mask, length_penalty, accept))
    weights = None if alpha is None else alphas[pick]                  # (B, L, S)
    return _results(tokens[pick], weights, logps[pick], src_mask)


@contextmanager
def _evaluating(model):
    """``no_grad`` and eval mode for the block, then the model's mode as it was."""
    training = model.training
    model.eval()
    try:
        with mg.no_grad():
            yield
    finally:
        model.train(training)


def _best(scores, finished, tokens, logps, src_mask, length_penalty: float, accept) -> np.ndarray:
    """The winner (B,) of each example's K: finished first, then (with ``accept``) accepted
    first, then the highest log p / lp(|y|). scores, finished (B, K); tokens, logps (B, K, L)."""
    lengths = np.where(finished, (tokens != PAD).sum(axis=2), tokens.shape[2])  # (B, K)
    ranked = scores / length_penalty_gnmt(lengths, length_penalty) + np.where(finished, 0, -1e9)
    if accept is not None:  # a rejected hypothesis ranks below every accepted one
        ok = [[bool(accept(h.tokens)) for h in _results(tokens[:, k], None, logps[:, k], src_mask)]
              for k in range(scores.shape[1])]                         # (K, B)
        ranked = ranked + np.where(np.array(ok).T, 0, -1e12)           # (B, K)
    return ranked.argmax(axis=1)                                       # (B,)


def _results(tokens, alphas, logps, mask) -> list:
    """Each row cut at its first EOS. tokens, logps (B, L); alphas (B, L, S) or None."""
    L = tokens.shape[1]
    is_eos = tokens == EOS                                              # (B, L)
    ends = np.where(is_eos.any(axis=1), is_eos.argmax(axis=1) + 1, L)   # (B,): tokens kept
    scores = np.where(np.arange(L) < ends[:, None], logps, 0.0).sum(axis=1)  # (B,)
    rows, S, ends = tokens.tolist(), mask.sum(axis=1).tolist(), ends.tolist()
    return [Translation(rows[b][:n], None if alphas is None else alphas[b, :n, :S[b]].copy(),
                        float(scores[b])) for b, n in enumerate(ends)]
