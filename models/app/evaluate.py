"""Held-out evaluation: exact match and token accuracy of greedy decoding, the numbers a
training run stops on and reports (shape letters: B batch, S source length).
"""
from __future__ import annotations

from models.app.data import TaskData
from models.seq2seq import Seq2Seq
from models.vocab import pad_batch


def evaluate(model: Seq2Seq, data: TaskData, pairs, max_len: int, batch_size: int = 500) -> dict:
    """Exact match and token accuracy of greedy decoding on ``pairs`` (sorted by length),
    in eval mode (no dropout), whatever mode the model was in (and is left in)."""
    training = model.training
    model.eval()
    try:
        return _evaluate(model, data, pairs, max_len, batch_size)
    finally:
        model.train(training)


def _evaluate(model: Seq2Seq, data: TaskData, pairs, max_len: int, batch_size: int) -> dict:
    pairs = sorted(pairs, key=lambda p: len(p[0]))
    exact = right = total = 0
    for start in range(0, len(pairs), batch_size):
        chunk = pairs[start:start + batch_size]
        src, src_mask = pad_batch([data.src_vocab.encode(s) for s, _ in chunk])  # (B, S) each
        for (_, want), out in zip(chunk, model.greedy(src, max_len, src_mask)):
            got = data.tgt_vocab.decode(out.tokens)
            exact += got == want
            right += sum(a == b for a, b in zip(got, want))
            total += max(len(got), len(want))
    return {"exact": exact / max(len(pairs), 1), "token_acc": right / max(total, 1)}
