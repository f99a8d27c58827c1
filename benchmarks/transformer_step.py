"""One Transformer training step, minigrad vs PyTorch's ``nn.Transformer`` of the same sizes.

    python -m benchmarks.transformer_step            # float32, one thread, 7 rounds
    python -m benchmarks.transformer_step --rounds 3 --calls 3

Workload: vocabulary 32, d_model 64, 4 heads, feed-forward 128, 2 encoder and 2 decoder
layers, pre-norm, sinusoidal positions, no dropout; batch 64, source and target length 20,
the last 3 source positions of half the batch padding; mean cross-entropy over the targets,
Adam (lr 1e-3). One step = forward + backward + update. The PyTorch model (``norm_first=True``,
final encoder and decoder LayerNorms, as ours) gets minigrad's initial weights, and the first
step's losses are checked equal before anything is timed. Rounds alternate the libraries, so
load from other processes hits both; the ratio is the median of the per-round ratios.
"""
from __future__ import annotations

import argparse
import statistics
import time
import warnings

import numpy as np

from minigrad import optim
from minigrad.runtime import blas
from models.seq2seq import ModelConfig, Seq2Seq, decoder_inputs
from attention.positional import sinusoidal_encoding

SIZES = dict(vocab=32, d_model=64, heads=4, ff=128, layers=2, batch=64, length=20)


def batch(rng: np.random.Generator) -> tuple:
    B, L, V = SIZES["batch"], SIZES["length"], SIZES["vocab"]
    src = rng.integers(4, V, size=(B, L))
    tgt = rng.integers(4, V, size=(B, L))
    src[B // 2:, L - 3:] = 0                                            # PAD
    return src, src != 0, tgt


def minigrad_model(dtype="float32"):
    s = SIZES
    config = ModelConfig(s["vocab"], s["vocab"], decoder="transformer", layers=s["layers"],
                         heads=s["heads"], d_model=s["d_model"], ff=s["ff"], dtype=dtype)
    model = Seq2Seq(config, np.random.default_rng(0))
    return model, optim.Adam(model.parameters(), lr=1e-3)


def torch_model(state: dict):
    """nn.Transformer with embeddings, positions and the output layer, holding ``state``."""
    import torch
    from torch import nn
    s = SIZES

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.src_embed = nn.Embedding(s["vocab"], s["d_model"])
            self.tgt_embed = nn.Embedding(s["vocab"], s["d_model"])
            with warnings.catch_warnings():  # "enable_nested_tensor is True, but ... norm_first"
                warnings.simplefilter("ignore", UserWarning)
                self.core = nn.Transformer(s["d_model"], s["heads"], s["layers"], s["layers"],
                                           s["ff"], dropout=0.0, batch_first=True,
                                           norm_first=True)
            self.out = nn.Linear(s["d_model"], s["vocab"])
            self.register_buffer("pe", torch.tensor(
                sinusoidal_encoding(s["length"], s["d_model"]), dtype=torch.float32))

        def forward(self, src, pad, tgt_in):
            T = tgt_in.shape[1]
            causal = nn.Transformer.generate_square_subsequent_mask(T)
            y = self.core(self.src_embed(src) + self.pe, self.tgt_embed(tgt_in) + self.pe[:T],
                          tgt_mask=causal, src_key_padding_mask=pad,
                          memory_key_padding_mask=pad, tgt_is_causal=True)
            return self.out(y)

    model = Model()
    own = dict(model.named_parameters())
    with torch.no_grad():
        for name, value in torch_names(state).items():
            assert own[name].shape == value.shape, name
            own[name].copy_(torch.from_numpy(np.ascontiguousarray(value, dtype=np.float32)))
    return model, torch.optim.Adam(model.parameters(), lr=1e-3)


def torch_names(state: dict) -> dict:
    """PyTorch parameter name -> array from minigrad's ``state_dict``."""
    names = {"src_embed.weight": state["encoder.embedding.weight"],
             "tgt_embed.weight": state["decoder.embedding.weight"],
             "out.weight": state["decoder.out.weight"], "out.bias": state["decoder.out.bias"]}
    for side in ("encoder", "decoder"):
        names[f"core.{side}.norm.weight"] = state[f"{side}.norm.weight"]
        names[f"core.{side}.norm.bias"] = state[f"{side}.norm.bias"]
        attns = (("self_attn", "self_attn"),) + ((("multihead_attn", "cross_attn"),)
                                                 if side == "decoder" else ())
        norms = 3 if side == "decoder" else 2
        for i in range(SIZES["layers"]):
            theirs, mine = f"core.{side}.layers.{i}.", f"{side}.layers.{i}."
            for t, m in attns:
                for kind in ("weight", "bias"):
                    names[f"{theirs}{t}.in_proj_{kind}"] = np.concatenate(
                        [state[f"{mine}{m}.W_{x}.{kind}"] for x in "qkv"])
                    names[f"{theirs}{t}.out_proj.{kind}"] = state[f"{mine}{m}.W_o.{kind}"]
            for kind in ("weight", "bias"):
                names[f"{theirs}linear1.{kind}"] = state[f"{mine}ff.fc1.{kind}"]
                names[f"{theirs}linear2.{kind}"] = state[f"{mine}ff.fc2.{kind}"]
                for n in range(1, norms + 1):
                    names[f"{theirs}norm{n}.{kind}"] = state[f"{mine}norm{n}.{kind}"]
    return names


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--calls", type=int, default=5, help="steps per library per round")
    a = p.parse_args(argv)
    import torch
    torch.set_num_threads(1)
    src, mask, tgt = batch(np.random.default_rng(1))
    tgt_in = decoder_inputs(tgt)
    mg_model, mg_opt = minigrad_model()
    t_model, t_opt = torch_model(mg_model.state_dict())
    t_src, t_pad = torch.from_numpy(src), torch.from_numpy(~mask)
    t_in, t_tgt = torch.from_numpy(tgt_in), torch.from_numpy(tgt)

    def mg_step():
        loss = mg_model.loss(src, tgt, mask)
        mg_opt.zero_grad()
        loss.backward()
        mg_opt.step()
        return loss.item()

    def torch_step():
        logits = t_model(t_src, t_pad, t_in)
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, SIZES["vocab"]),
                                                 t_tgt.reshape(-1))
        t_opt.zero_grad()
        loss.backward()
        t_opt.step()
        return loss.item()

    with blas.threads(1):
        first = mg_step(), torch_step()
        assert abs(first[0] - first[1]) < 1e-4, f"the first losses differ: {first}"
        times = {"minigrad": [], "torch": []}
        for _ in range(a.rounds):
            for name, step in (("minigrad", mg_step), ("torch", torch_step)):
                started = time.perf_counter()
                for _ in range(a.calls):
                    step()
                times[name].append((time.perf_counter() - started) / a.calls)
    ratio = statistics.median(m / t for m, t in zip(times["minigrad"], times["torch"]))
    print(f"Transformer training step, float32, one thread, {SIZES}; first losses "
          f"{first[0]:.6f} (minigrad) vs {first[1]:.6f} (torch {torch.__version__})")
    for name, ts in times.items():
        print(f"  {name:<9} {1000 * statistics.median(ts):7.1f} ms per step (median of {a.rounds} "
              f"rounds of {a.calls})")
    print(f"  ratio minigrad / torch: {ratio:.2f} (median of per-round ratios)")


if __name__ == "__main__":
    main()
