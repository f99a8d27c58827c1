"""The reference workload's model in PyTorch eager, for ``benchmarks/reference.py`` only.

The same Bahdanau seq2seq as ``models.Seq2Seq`` with the reference config, written the way a
PyTorch user would: the bidirectional encoder is one ``nn.GRU(bidirectional=True)`` over a
packed sequence (PyTorch's fused recurrent kernel, padding-aware), the decoder a ``GRUCell``
loop with additive attention. ``load_minigrad`` copies a minigrad ``state_dict`` in (the
layouts are the same: GRU gates r|z|n, ``Linear`` weights (out, in)). Shape letters: B batch,
S source length, T target length, K = 2H annotation width, A attention width, V vocabulary.
"""
from __future__ import annotations

import numpy as np
import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

PAD, BOS, EOS = 0, 1, 2


class TorchBahdanau(nn.Module):
    def __init__(self, vocab=32, embed=32, hidden=64, dec_hidden=64, attn=64, dtype=torch.float32):
        super().__init__()
        K = 2 * hidden
        self.src_embed = nn.Embedding(vocab, embed)
        self.encoder = nn.GRU(embed, hidden, batch_first=True, bidirectional=True)
        self.tgt_embed = nn.Embedding(vocab, embed)
        self.W_q = nn.Linear(dec_hidden, attn, bias=False)
        self.W_k = nn.Linear(K, attn, bias=True)            # W_k h + b
        self.v = nn.Parameter(torch.zeros(attn))
        self.cell = nn.GRUCell(embed + K, dec_hidden)
        self.init = nn.Linear(K, dec_hidden)
        self.out = nn.Linear(dec_hidden + K, vocab)
        self.to(dtype)

    def load_minigrad(self, state: dict) -> None:
        """Copy the arrays of ``models.Seq2Seq.state_dict()`` into this model."""
        names = {"src_embed.weight": "encoder.embedding.weight",
                 "tgt_embed.weight": "decoder.embedding.weight",
                 "W_q.weight": "decoder.attention.score.W_q",
                 "W_k.weight": "decoder.attention.score.W_k",
                 "W_k.bias": "decoder.attention.score.b",
                 "v": "decoder.attention.score.v",
                 "init.weight": "decoder.init.weight", "init.bias": "decoder.init.bias",
                 "out.weight": "decoder.out.weight", "out.bias": "decoder.out.bias"}
        for k in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
            names[f"cell.{k}"] = f"decoder.cell.{k}"
            names[f"encoder.{k}_l0"] = f"encoder.forward_cell.{k}"
            names[f"encoder.{k}_l0_reverse"] = f"encoder.backward_cell.{k}"
        own = dict(self.named_parameters())
        assert set(own) == set(names), sorted(set(own) ^ set(names))
        with torch.no_grad():
            for mine, theirs in names.items():
                own[mine].copy_(torch.from_numpy(np.asarray(state[theirs])))

    def encode(self, src, lengths):
        """Annotations (B, S, K), zero at padding, and the (B, S) mask."""
        x = self.src_embed(src)                                         # (B, S, E)
        packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
        h, _ = self.encoder(packed)
        h, _ = pad_packed_sequence(h, batch_first=True, total_length=src.shape[1])  # (B, S, K)
        mask = torch.arange(src.shape[1])[None, :] < lengths[:, None]   # (B, S)
        return h, mask

    def start(self, h, mask):
        mean = h.sum(1) / mask.sum(1, keepdim=True).to(h.dtype)        # (B, K)
        return torch.tanh(self.init(mean)), self.W_k(h)                # s_0 (B, H), (B, S, A)

    def step(self, y_prev, s, h, mask, projected):
        e = torch.tanh(self.W_q(s)[:, None, :] + projected) @ self.v   # (B, S)
        alpha = torch.softmax(e.masked_fill(~mask, float("-inf")), dim=-1)
        c = torch.bmm(alpha[:, None, :], h)[:, 0]                      # (B, K)
        s = self.cell(torch.cat([self.tgt_embed(y_prev), c], dim=-1), s)  # (B, H)
        return s, c, alpha

    def forward(self, src, lengths, tgt):
        """Teacher-forced logits (B, T, V)."""
        h, mask = self.encode(src, lengths)
        s, projected = self.start(h, mask)
        inputs = torch.cat([torch.full_like(tgt[:, :1], BOS), tgt[:, :-1]], dim=1)  # (B, T)
        states, contexts = [], []
        for t in range(tgt.shape[1]):
            s, c, _ = self.step(inputs[:, t], s, h, mask, projected)
            states.append(s)
            contexts.append(c)
        features = torch.cat([torch.stack(states, 1), torch.stack(contexts, 1)], dim=-1)
        return self.out(features)                                      # (B, T, V)

    @torch.no_grad()
    def greedy(self, src, lengths, max_len):
        """Greedy tokens (B, L), as ``Seq2Seq.greedy`` (a beam of one): PAD and BOS never emitted,
        stop when every row has produced EOS."""
        h, mask = self.encode(src, lengths)
        s, projected = self.start(h, mask)
        B = src.shape[0]
        y = torch.full((B,), BOS, dtype=torch.long)
        done = torch.zeros(B, dtype=torch.bool)
        tokens = []
        for _ in range(max_len):
            s, c, _ = self.step(y, s, h, mask, projected)
            logp = torch.log_softmax(self.out(torch.cat([s, c], dim=-1)), dim=-1)
            logp[:, [PAD, BOS]] = float("-inf")
            y = logp.argmax(dim=-1)
            tokens.append(torch.where(done, PAD, y))
            done |= y == EOS
            if bool(done.all()):
                break
        return torch.stack(tokens, 1)

    @torch.no_grad()
    def beam(self, src, lengths, beam_size, length_penalty, max_len):
        """Best hypothesis per example (B, L), as ``models.decoding.beam_search``: K live
        hypotheses per example; a finished one is carried on by PAD at no cost; at the end
        ranked by log p / ((5 + L) / 6)^α, finished before unfinished."""
        B, K = src.shape[0], beam_size
        V = self.out.out_features
        h, mask = self.encode(src, lengths)
        rows = torch.arange(B).repeat_interleave(K)
        h, mask = h[rows], mask[rows]                                  # (B·K, S, ·)
        s, projected = self.start(h, mask)
        first = torch.arange(B)[:, None]                               # (B, 1)
        scores = torch.full((B, K), float("-inf"), dtype=torch.float64)
        scores[:, 0] = 0.0
        finished = torch.zeros((B, K), dtype=torch.bool)
        tokens = torch.zeros((B, K, 0), dtype=torch.long)
        y = torch.full((B * K,), BOS, dtype=torch.long)
        pad_only = torch.full((V,), float("-inf"), dtype=torch.float64)
        pad_only[PAD] = 0.0
        for _ in range(max_len):
            s, c, _ = self.step(y, s, h, mask, projected)
            logp = torch.log_softmax(self.out(torch.cat([s, c], dim=-1)), dim=-1).double()
            logp[:, [PAD, BOS]] = float("-inf")
            logp = torch.where(finished[:, :, None], pad_only, logp.view(B, K, V))
            cand = (scores[:, :, None] + logp).reshape(B, K * V)        # (B, K·V)
            top = torch.sort(-cand, dim=1, stable=True).indices[:, :K]  # (B, K)
            beam, tok = top // V, top % V
            scores = cand.gather(1, top)
            s = s[(first * K + beam).reshape(-1)]
            tokens = torch.cat([tokens[first, beam], tok[:, :, None]], dim=2)
            finished = finished[first, beam] | (tok == EOS)
            y = tok.reshape(-1)
            if bool(finished.all()):
                break
        length = torch.where(finished, (tokens != PAD).sum(2), tokens.shape[2]).double()
        ranked = scores / ((5.0 + length) / 6.0) ** length_penalty
        ranked = ranked + torch.where(finished, 0.0, -1e9)
        return tokens[torch.arange(B), ranked.argmax(dim=1)]            # (B, L)
