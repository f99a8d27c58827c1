"""Greedy and beam-search decoding, batched, with each example's alignment matrix.

Shape letters: B batch, K beam size, S source length, V target vocabulary, L decoded length
(t while decoding; a translation's T_out).

Both run the decoder one step at a time under ``no_grad`` and in eval mode (no dropout, so no
generator needed; the model's mode is restored after) (``Decoder.start`` / ``step`` /
``logits``) and stop when every sequence has produced EOS or after ``max_len`` tokens.

Beam search keeps, per example, the K best partial hypotheses by total log-probability. A
hypothesis that has produced EOS stays in the beam unchanged (it is extended by PAD at zero
cost). At the end the hypotheses are ranked by the GNMT length-normalised score

    log p(y | x) / lp(|y|),     lp(L) = ((5 + L) / 6)^α      (α = ``length_penalty``; 0 = none)

and a finished hypothesis is preferred to an unfinished one. With K = 1 it is greedy search.
Neither ever emits PAD or BOS: their log-probabilities are set to −inf.
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

import minigrad as mg

from models.vocab import BOS, EOS, PAD
from models.checks import check_source
from models.encoder import Encoded


@dataclass
class Translation:
    """One decoded example: ``tokens`` up to and including EOS (if produced), the alignment
    ``weights (T_out, S)`` over its real source positions (None without attention), and
    ``score``, the sum of the tokens' log-probabilities."""
    tokens: list
    weights: np.ndarray | None
    score: float


def _check_max_len(max_len: int) -> None:
    if not isinstance(max_len, (int, np.integer)) or max_len < 1:
        raise ValueError(f"decoding: max_len must be a positive int, got {max_len!r}")


def _results(tokens, alphas, logps, mask) -> list:
    """Cut each row at its first EOS. tokens, logps (B, L); alphas (B, L, S) or None."""
    L = tokens.shape[1]
    is_eos = tokens == EOS                                              # (B, L)
    ends = np.where(is_eos.any(axis=1), is_eos.argmax(axis=1) + 1, L)   # (B,): tokens kept
    scores = np.where(np.arange(L) < ends[:, None], logps, 0.0).sum(axis=1)  # (B,)
    rows, S, ends = tokens.tolist(), mask.sum(axis=1).tolist(), ends.tolist()
    return [Translation(rows[b][:n], None if alphas is None else alphas[b, :n, :S[b]].copy(),
                        float(scores[b])) for b, n in enumerate(ends)]


def _log_probs(model, features) -> np.ndarray:
    """log p(y | y_<t, x) (B, V) in float64; PAD and BOS are never emitted (log p = −inf)."""
    logp = model.decoder.log_probs(features).data.astype(np.float64)    # (B, V)
    logp[:, [PAD, BOS]] = -np.inf
    return logp


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


def greedy(model, src, max_len: int = 32, src_mask=None) -> list:
    """y_t = argmax_y p(y | y_<t, x) until EOS; a ``Translation`` per example."""
    _check_max_len(max_len)
    src, src_mask = check_source(src, src_mask, model.config.src_vocab)
    B = src.shape[0]
    with _evaluating(model):
        encoded = model.encoder(src, src_mask)
        state, ctx = model.decoder.start(encoded)
        y = np.full(B, BOS, dtype=np.int64)                             # (B,)
        done = np.zeros(B, dtype=bool)                                  # (B,)
        tokens, logps, alphas = [], [], []
        for t in range(max_len):
            state, features, alpha = model.decoder.step(y, state, ctx, t)
            logp = _log_probs(model, features)                          # (B, V)
            y = logp.argmax(axis=-1)                                    # (B,)
            tokens.append(np.where(done, PAD, y))                       # (B,)
            logps.append(np.where(done, 0.0, logp[np.arange(B), y]))    # (B,)
            alphas.append(None if alpha is None else alpha.data)        # (B, S)
            done |= y == EOS
            if done.all():
                break
    weights = None if alphas[0] is None else np.stack(alphas, axis=1)  # (B, L, S)
    return _results(np.stack(tokens, axis=1), weights, np.stack(logps, axis=1), src_mask)


def _repeat(encoded: Encoded, K: int) -> Encoded:
    """Each example's encoding K times in a row: (B, ...) -> (B·K, ...)."""
    rows = np.repeat(np.arange(encoded.mask.shape[0]), K)  # (B·K,): 0, 0, .., 1, 1, ..
    return Encoded(encoded.annotations[rows], encoded.mask[rows], encoded.final[rows])


def length_penalty_gnmt(length, alpha: float):
    """lp(L) = ((5 + L) / 6)^α (Wu et al. 2016)."""
    return ((5.0 + np.asarray(length, dtype=np.float64)) / 6.0) ** alpha


def beam_search(model, src, beam_size: int = 4, length_penalty: float = 0.6, max_len: int = 32,
                src_mask=None, accept=None) -> list:
    """Batched beam search; a ``Translation`` (the best hypothesis) per example.

    ``accept(ids) -> bool``, if given, judges each final hypothesis (its token ids up to and
    including EOS): the best accepted one wins, and only when none is accepted the best of all.
    """
    _check_max_len(max_len)
    src, src_mask = check_source(src, src_mask, model.config.src_vocab)
    _check_beam(beam_size, length_penalty)
    V = model.decoder.out.weight.shape[0]
    B, K = src.shape[0], int(beam_size)
    first = np.arange(B)[:, None]                                      # (B, 1)
    with _evaluating(model):
        state, ctx = model.decoder.start(_repeat(model.encoder(src, src_mask), K))
        scores = np.full((B, K), -np.inf)                              # (B, K) total log p
        scores[:, 0] = 0.0                                             # one live hypothesis at first
        finished = np.zeros((B, K), dtype=bool)                        # (B, K)
        tokens = np.zeros((B, K, 0), dtype=np.int64)                  # (B, K, t)
        logps = np.zeros((B, K, 0))                                   # (B, K, t)
        alphas = None
        y = np.full(B * K, BOS, dtype=np.int64)                        # (B·K,)
        for t in range(max_len):
            state, features, alpha = model.decoder.step(y, state, ctx, t)
            logp = _log_probs(model, features).reshape(B, K, V)        # (B, K, V)
            logp[finished] = -np.inf                                   # a finished hypothesis
            logp[finished, PAD] = 0.0                                  # only carries on, at no cost
            cand = (scores[:, :, None] + logp).reshape(B, K * V)      # (B, K·V)
            top = np.argsort(-cand, axis=1, kind="stable")[:, :K]     # (B, K)
            beam, tok = top // V, top % V                              # (B, K) each
            scores = np.take_along_axis(cand, top, axis=1)             # (B, K)
            rows = (first * K + beam).reshape(-1)                      # (B·K,) parent rows
            state = tuple(s[rows] for s in state)                      # each (B·K, ·)
            step_logp = logp[first, beam, tok]                         # (B, K)
            tokens = np.concatenate([tokens[first, beam], tok[:, :, None]], axis=2)       # (B, K, t+1)
            logps = np.concatenate([logps[first, beam], step_logp[:, :, None]], axis=2)   # (B, K, t+1)
            if alpha is not None:
                a = alpha.data.reshape(B, K, 1, -1)                    # (B, K, 1, S)
                alphas = a[first, beam] if alphas is None else np.concatenate(
                    [alphas[first, beam], a[first, beam]], axis=2)      # (B, K, t+1, S)
            finished = finished[first, beam] | (tok == EOS)            # (B, K)
            y = tok.reshape(-1)                                        # (B·K,)
            if finished.all():
                break
    best = _best(scores, finished, tokens, logps, src_mask, length_penalty, accept)  # (B,)
    pick = (np.arange(B), best)                                        # index of (B, K) -> (B,)
    weights = None if alphas is None else alphas[pick]                 # (B, L, S)
    return _results(tokens[pick], weights, logps[pick], src_mask)


def _best(scores, finished, tokens, logps, src_mask, length_penalty: float, accept) -> np.ndarray:
    """The winning hypothesis (B,) of each example's K: the highest log p / lp(|y|), a finished
    one before an unfinished one, and (with ``accept``) an accepted one before a rejected one.
    scores, finished (B, K); tokens, logps (B, K, L)."""
    K = scores.shape[1]
    lengths = np.where(finished, (tokens != PAD).sum(axis=2), tokens.shape[2])  # (B, K)
    ranked = scores / length_penalty_gnmt(lengths, length_penalty) + np.where(finished, 0, -1e9)  # (B, K)
    if accept is not None:  # a rejected hypothesis ranks below every accepted one
        ok = [[bool(accept(h.tokens)) for h in _results(tokens[:, k], None, logps[:, k], src_mask)]
              for k in range(K)]                                       # (K, B)
        ranked = ranked + np.where(np.array(ok).T, 0, -1e12)           # (B, K)
    return ranked.argmax(axis=1)                                       # (B,)


def _check_beam(beam_size, length_penalty) -> None:
    if not isinstance(beam_size, (int, np.integer)) or beam_size < 1:
        raise ValueError(f"beam_search: beam_size must be a positive int, got {beam_size!r}")
    if not (np.isfinite(length_penalty) and length_penalty >= 0):  # NaN would rank at random
        raise ValueError("beam_search: length_penalty must be a finite number >= 0, "
                         f"got {length_penalty}")
