"""The recurrent cells and attention against PyTorch, weights copied, float64 to 1e-10: values,
first derivatives (inputs and every parameter) and second derivatives (inputs):
``GRUCell`` / ``LSTMCell`` (torch.nn's equations and r|z|n, i|f|g|o layouts),
``scaled_dot_product_attention`` with boolean, per-query and causal masks, and
``MultiHeadAttention`` with key padding and causal masks.

The same run and torch guard as ``tests/minigrad/test_torch_parity.py``: ``pip install -e
'.[parity]' && python -m pytest -q -m parity``; without torch, a skip naming that command, and
under CI=true a failure.
"""

import numpy as np
import pytest

import minigrad as mg
from attention import MultiHeadAttention, scaled_dot_product_attention
from models.recurrent import GRUCell, LSTMCell

from torch_parity_guard import TOL, require_torch, torch


@pytest.fixture(autouse=True)
def _torch_present():
    require_torch()


def close(mine, theirs, what: str) -> None:
    mine = mine.data if isinstance(mine, mg.Tensor) else np.asarray(mine)
    theirs = theirs.detach().numpy() if torch.is_tensor(theirs) else np.asarray(theirs)
    assert mine.shape == theirs.shape, f"{what}: shapes {mine.shape} vs {theirs.shape}"
    np.testing.assert_allclose(mine, theirs, err_msg=what, **TOL)


def compare(mg_fn, torch_fn, arrays, params, name: str, seed: int = 0) -> None:
    """``fn(*inputs)`` (one tensor, or a tuple of them) in both: values; uᵀJ for every input and
    parameter; vᵀ∂(uᵀJ)/∂x for the inputs. ``params``: [(minigrad Parameters, the torch
    parameter that stacks them along axis 0)]."""
    rng = np.random.default_rng(seed)
    xs = [mg.tensor(a, requires_grad=True) for a in arrays]
    ts = [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in arrays]
    outs, touts = mg_fn(*xs), torch_fn(*ts)
    outs, touts = (outs, touts) if isinstance(outs, tuple) else ((outs,), (touts,))
    for k, (o, to) in enumerate(zip(outs, touts)):
        close(o, to, f"{name}: value of output {k}")
    us = [rng.standard_normal(o.shape) for o in outs]
    mine = xs + [p for ps, _ in params for p in ps]
    theirs = ts + [t for _, t in params]
    gs = mg.grad(list(outs), mine, grad_outputs=us, create_graph=True)
    tgs = torch.autograd.grad(list(touts), theirs, [torch.from_numpy(u) for u in us],
                              create_graph=True)
    for i in range(len(xs)):
        close(gs[i], tgs[i], f"{name}: first derivative, input {i}")
    k = len(xs)
    for j, (ps, t) in enumerate(params):
        got = np.concatenate([np.asarray(g.data) for g in gs[k:k + len(ps)]])
        close(got, tgs[len(ts) + j], f"{name}: first derivative, parameter {j} {tuple(t.shape)}")
        k += len(ps)
    vs = [rng.standard_normal(a.shape) for a in arrays]
    dot = sum((g * v).sum() for g, v in zip(gs[:len(xs)], vs))
    tdot = sum((tg * torch.from_numpy(v)).sum() for tg, v in zip(tgs[:len(ts)], vs))
    hs = mg.grad(dot, xs)
    ths = torch.autograd.grad(tdot, ts, allow_unused=True)
    for i, (h, th) in enumerate(zip(hs, ths)):
        close(h, np.zeros(arrays[i].shape) if th is None else th, f"{name}: second derivative, input {i}")


def copied(mine, theirs, names):
    """Copy minigrad's parameters into torch's of the same names; pairs for ``compare``."""
    own = dict(theirs.named_parameters())
    with torch.no_grad():
        for n in names:
            own[n].copy_(torch.from_numpy(getattr(mine, n).data))
    return [([getattr(mine, n)], own[n]) for n in names]


CELL_WEIGHTS = ("weight_ih", "weight_hh", "bias_ih", "bias_hh")


def test_gru_cell():
    rng = np.random.default_rng(0)
    cell = GRUCell(3, 4, rng=rng)
    ref = torch.nn.GRUCell(3, 4).double()
    params = copied(cell, ref, CELL_WEIGHTS)
    compare(lambda x, h: cell(x, h), lambda x, h: ref(x, h),
            [rng.normal(size=(5, 3)), rng.normal(size=(5, 4))], params, "GRUCell")


def test_gru_cell_rolled_over_steps():
    """Four steps of the same cell: the gradients add up over time as in torch."""
    rng = np.random.default_rng(1)
    cell = GRUCell(3, 4, rng=rng)
    ref = torch.nn.GRUCell(3, 4).double()
    params = copied(cell, ref, CELL_WEIGHTS)

    def roll(step, xs, h):
        for t in range(xs.shape[1]):
            h = step(xs[:, t], h)
        return h
    compare(lambda xs, h: roll(cell, xs, h), lambda xs, h: roll(ref, xs, h),
            [rng.normal(size=(2, 4, 3)), rng.normal(size=(2, 4))], params, "GRUCell x4")


def test_lstm_cell():
    rng = np.random.default_rng(2)
    cell = LSTMCell(3, 4, rng=rng)
    ref = torch.nn.LSTMCell(3, 4).double()
    params = copied(cell, ref, CELL_WEIGHTS)
    compare(lambda x, h, c: cell(x, (h, c)), lambda x, h, c: ref(x, (h, c)),
            [rng.normal(size=(5, 3)), rng.normal(size=(5, 4)), rng.normal(size=(5, 4))],
            params, "LSTMCell")


def padding(rng, B: int, S: int) -> np.ndarray:
    """(B, S) True = real: every example keeps at least its first key (torch gives NaN for a
    query that may read nothing; minigrad zeros)."""
    mask = rng.random((B, S)) < 0.6
    mask[:, 0] = True
    return mask


SDPA_CASES = {
    "no mask": dict(),
    "key padding (B, 1, S)": dict(mask=lambda rng: padding(rng, 2, 5)[:, None, :]),
    "per query (B, T, S)": dict(mask=lambda rng: np.concatenate(
        [np.ones((2, 3, 1), bool), rng.random((2, 3, 4)) < 0.5], axis=-1)),
    "2-D (T, S)": dict(mask=lambda rng: np.concatenate(
        [np.ones((3, 1), bool), rng.random((3, 4)) < 0.5], axis=-1)),
    "causal, T < S": dict(is_causal=True),
    "scale": dict(scale=0.3, mask=lambda rng: padding(rng, 2, 5)[:, None, :]),
}


@pytest.mark.parametrize("heads", [False, True], ids=["(B, T, d)", "(B, h, T, d)"])
@pytest.mark.parametrize("case", list(SDPA_CASES))
def test_scaled_dot_product_attention(case, heads):
    rng = np.random.default_rng(3)
    lead = (2, 2) if heads else (2,)
    q, k, v = rng.normal(size=lead + (3, 4)), rng.normal(size=lead + (5, 4)), rng.normal(size=lead + (5, 6))
    opts = dict(SDPA_CASES[case])
    mask = opts.pop("mask", None)
    mask = None if mask is None else mask(rng)
    if mask is not None and heads and mask.ndim == 3 and case.startswith("key"):
        mask = mask[:, None]                                            # (B, 1, 1, S)
    tmask = None if mask is None else torch.from_numpy(mask)
    compare(lambda q, k, v: scaled_dot_product_attention(q, k, v, mask, **opts),
            lambda q, k, v: torch.nn.functional.scaled_dot_product_attention(q, k, v, tmask, **opts),
            [q, k, v], [], f"sdpa {case}")


@pytest.mark.parametrize("masks", ["none", "key padding", "causal", "key padding + causal"])
def test_multihead_attention(masks):
    rng = np.random.default_rng(4)
    E, h, B, T = 8, 2, 2, 4
    mha = MultiHeadAttention(E, h, rng=rng)
    ref = torch.nn.MultiheadAttention(E, h, batch_first=True).double()
    qkv = [mha.W_q, mha.W_k, mha.W_v]                   # torch stacks them: in_proj (3E, E)
    params = [([m.weight for m in qkv], ref.in_proj_weight), ([m.bias for m in qkv], ref.in_proj_bias),
              ([mha.W_o.weight], ref.out_proj.weight), ([mha.W_o.bias], ref.out_proj.bias)]
    with torch.no_grad():
        for ps, t in params:
            t.copy_(torch.from_numpy(np.concatenate([p.data for p in ps])))
    pad = padding(rng, B, T) if "padding" in masks else None
    causal = "causal" in masks
    future = torch.from_numpy(~np.tril(np.ones((T, T), bool))) if causal else None  # True = hide

    def theirs(q, k, v):
        out, w = ref(q, k, v, key_padding_mask=None if pad is None else torch.from_numpy(~pad),
                     attn_mask=future, need_weights=True, average_attn_weights=False)
        return out, w
    compare(lambda q, k, v: mha(q, k, v, mask=pad, causal=causal), theirs,
            [rng.normal(size=(B, T, E)) for _ in range(3)], params, f"MHA {masks}")


def test_the_comparison_tells_the_cho_form_from_torchs():
    """reset_after=False (Cho et al. 2014: W_hn (r ⊙ h)) is not torch's GRUCell: caught."""
    rng = np.random.default_rng(5)
    cell = GRUCell(3, 4, reset_after=False, rng=rng)
    ref = torch.nn.GRUCell(3, 4).double()
    params = copied(cell, ref, CELL_WEIGHTS)
    with pytest.raises(AssertionError, match="GRUCell: value of output 0"):
        compare(lambda x, h: cell(x, h), lambda x, h: ref(x, h),
                [rng.normal(size=(5, 3)), rng.normal(size=(5, 4))], params, "GRUCell")
