"""The models' kernels (models/kernels.py) held to the core classes they replace: each one alone
and all together give the same loss and the same gradient of every parameter to 1e-12 in
float64; the fused GRU step also against finite differences and the plain-NumPy reference of
its backward (tests/models/reference_gru.py); the one switch applies minigrad's, attention's and
the models' tables, both ways, in place."""
import numpy as np
import pytest

import minigrad as mg
from attention.kernels import KERNELS as ATTENTION_KERNELS
from attention.kernels import FusedAdditiveScore
from attention.scores import AdditiveScore
from minigrad.gradcheck import gradcheck
from minigrad.kernels import KERNELS as MINIGRAD_KERNELS, swap
from minigrad.nn import LayerNorm
from models.decoders import BahdanauDecoder, PlainDecoder
from models.recurrent import BiGRUEncoder
from models.fused import gru_step
from models.transformer_layers import FeedForward
from models.kernels import (ALL_KERNELS, KERNELS, FastBahdanauDecoder, FastBiGRUEncoder,
                            FastLuongDecoder, FastPlainDecoder, FusedFeedForward, FusedGRUCell,
                            use_core, use_kernels)
from models import fused_seq
from models.luong import LuongDecoder
from models.recurrent import GRUCell

from model_helpers import random_batch, tiny_model
from reference_gru import reference_backward

TOL = dict(rtol=1e-12, atol=1e-12)
OURS = {GRUCell: FusedGRUCell, BiGRUEncoder: FastBiGRUEncoder, PlainDecoder: FastPlainDecoder,
        BahdanauDecoder: FastBahdanauDecoder, LuongDecoder: FastLuongDecoder,
        FeedForward: FusedFeedForward}


def forward_and_grads(fn, arrays, seed_grad):
    """Output and the gradient of every input for ``fn(*leaves).backward(seed_grad)``."""
    leaves = [mg.tensor(a, requires_grad=True) for a in arrays]
    out = fn(*leaves)
    out.backward(seed_grad)
    return [out.data] + [t.grad for t in leaves]


def assert_all_close(got, want):
    for i, (a, b) in enumerate(zip(got, want)):
        np.testing.assert_allclose(a, b, **TOL, err_msg=f"output/gradient {i}")


# ---- the fused GRU step -------------------------------------------------------------------

def gru_inputs(rng, B, H, dtype=np.float64):
    return [rng.standard_normal((B, 3 * H)).astype(dtype), rng.standard_normal((B, H)).astype(dtype),
            (0.5 * rng.standard_normal((3 * H, H))).astype(dtype),
            (0.5 * rng.standard_normal(3 * H)).astype(dtype)]


@pytest.mark.parametrize("reset_after", [True, False])
@pytest.mark.parametrize("B, H", [(1, 1), (3, 4), (5, 7)])
def test_gru_step_equals_the_core_cells_step(reset_after, B, H):
    rng = np.random.default_rng(B * 10 + H)
    cell = GRUCell(2, H, reset_after, rng=rng)

    def core(gi, h, W, b):
        cell.weight_hh, cell.bias_hh = W, b
        return cell.step(gi, h)

    arrays = gru_inputs(rng, B, H)
    g = rng.standard_normal((B, H))
    fused = forward_and_grads(lambda *t: gru_step(*t, reset_after=reset_after), arrays, g)
    assert_all_close(fused, forward_and_grads(core, arrays, g))


@pytest.mark.parametrize("reset_after", [True, False])
@pytest.mark.parametrize("B, H", [(1, 1), (3, 4), (5, 7)])
def test_fused_backward_equals_the_plain_numpy_reference(reset_after, B, H):
    """The in-place backward of gru_step gives what reference_backward (reference_gru.py), the
    same formulas one per line in plain NumPy, gives."""
    rng = np.random.default_rng(B * 100 + H)
    arrays = gru_inputs(rng, B, H)
    g = rng.standard_normal((B, H))
    fused = forward_and_grads(lambda *t: gru_step(*t, reset_after=reset_after), arrays, g)[1:]
    assert_all_close(fused, reference_backward(g, *arrays, reset_after=reset_after))


@pytest.mark.parametrize("reset_after", [True, False])
def test_gru_step_gradcheck(reset_after):
    rng = np.random.default_rng(7)
    assert gradcheck(lambda *t: gru_step(*t, reset_after=reset_after), gru_inputs(rng, 3, 4),
                     full_jacobian=True)


@pytest.mark.parametrize("reset_after", [True, False])
def test_fused_cell_over_a_sequence_equals_the_core_cell(reset_after):
    """Six steps sharing the weights (their gradients accumulate over steps), from the cell."""
    rng = np.random.default_rng(3)
    xs, h0 = rng.standard_normal((6, 4, 5)), rng.standard_normal((4, 3))
    results = []
    for kernel in (False, True):
        cell = GRUCell(5, 3, reset_after, rng=np.random.default_rng(1))
        if kernel:
            use_kernels(cell)
        assert type(cell) is (FusedGRUCell if kernel else GRUCell)
        x, h = mg.tensor(xs, requires_grad=True), mg.tensor(h0, requires_grad=True)
        state = h
        for t in range(6):
            state = cell(x[t], state)
        (state * state).sum().backward()
        results.append([state.data, x.grad, h.grad] + [p.grad for p in cell.parameters()])
    assert_all_close(*results)


def test_gru_step_float32_stays_float32():
    rng = np.random.default_rng(0)
    leaves = [mg.tensor(a, requires_grad=True) for a in gru_inputs(rng, 3, 4, np.float32)]
    out = gru_step(*leaves)
    out.backward(np.ones((3, 4), dtype=np.float32))
    assert out.dtype == np.float32
    assert all(t.grad.dtype == np.float32 for t in leaves)


def test_gru_step_names_bad_shapes():
    rng = np.random.default_rng(0)
    gi, h, W, b = gru_inputs(rng, 3, 4)
    with pytest.raises(ValueError, match=r"gru_step: projected input gi \(3, 11\)"):
        gru_step(gi[:, :11], h, W, b)
    with pytest.raises(ValueError, match=r"gru_step: hidden state \(3, 5\)"):
        gru_step(gi, np.zeros((3, 5)), W, b)


def test_the_fused_cell_refuses_create_graph_naming_the_core_cell():
    cell = use_kernels(GRUCell(3, 4, rng=np.random.default_rng(0)))
    x = mg.tensor(np.ones((2, 3)), requires_grad=True)
    with pytest.raises(RuntimeError, match=r"gru_step.*the core GRUCell"):
        mg.grad(cell(x).sum(), [x], create_graph=True)
    (g,) = mg.grad(use_core(cell)(x).sum(), [x], create_graph=True)  # the core cell can
    assert isinstance(g, mg.Tensor)


# ---- the table and the switch ------------------------------------------------------------

def test_the_switch_applies_the_three_tables_each_naming_its_own_kernels():
    assert KERNELS == OURS
    tables = (MINIGRAD_KERNELS, ATTENTION_KERNELS, KERNELS)
    assert sum(len(t) for t in tables) == len(ALL_KERNELS)          # no core class in two tables
    assert ALL_KERNELS == {core: kernel for t in tables for core, kernel in t.items()}
    for core, kernel in ALL_KERNELS.items():
        assert issubclass(kernel, core)
    norm, score = use_kernels(LayerNorm(4)), use_kernels(AdditiveScore(2, 3, 4, rng=np.random.default_rng(0)))
    assert (type(norm), type(score)) == (MINIGRAD_KERNELS[LayerNorm], ATTENTION_KERNELS[AdditiveScore])
    assert (type(use_core(norm)), type(use_core(score))) == (LayerNorm, AdditiveScore)


def test_use_kernels_switches_in_place_without_new_attributes_and_use_core_switches_back():
    model = tiny_model().train()  # greedy decodes in eval mode and sets it back: an attribute
    before = {id(m): (type(m), dict(vars(m))) for m in model.modules()}
    names = [n for n, _ in model.named_parameters()]
    assert use_kernels(model) is model
    assert {type(m) for m in model.modules()} >= {FusedGRUCell, FastBiGRUEncoder,
                                                  FastBahdanauDecoder, FusedAdditiveScore}
    src, src_mask = random_batch(np.random.default_rng(0), [4, 2], 9)
    model.greedy(src, 4, src_mask)
    for m in model.modules():
        assert vars(m) == before[id(m)][1]                     # a kernel adds no attributes
    assert [n for n, _ in model.named_parameters()] == names   # checkpoints load either way
    use_core(model)
    assert all(type(m) is before[id(m)][0] for m in model.modules())


# ---- whole models: each kernel alone, then all of them -------------------------------------

MODELS = {
    "bahdanau": dict(),
    "bahdanau-cho": dict(reset_after=False),
    "luong-concat": dict(decoder="luong", score="concat"),
    "luong-lstm-feeding": dict(decoder="luong", score="general", cell="lstm", input_feeding=True),
    "luong-local-p-feeding": dict(decoder="luong", score="local-p", local_window=1, input_feeding=True),
    "plain": dict(decoder="plain"),
    "transformer-gelu": dict(decoder="transformer", activation="gelu", layers=1, heads=2,
                             d_model=8, ff=16),
}


def loss_and_grads(model, data):
    src, src_mask, tgt, tgt_mask = data
    model.zero_grad()
    loss = model.loss(src, tgt, src_mask, tgt_mask)
    loss.backward()
    return [loss.data] + [p.grad for p in model.parameters()]


def model_and_batch(overrides):
    rng = np.random.default_rng(11)
    src, src_mask = random_batch(rng, [5, 3, 4], 9)
    tgt, tgt_mask = random_batch(rng, [4, 2, 3], 8)
    return tiny_model(**overrides), (src, src_mask, tgt, tgt_mask)


def cores_in(name) -> list:
    """The core classes of OURS that model ``name`` holds."""
    return [core for core in OURS if any(type(m) is core for m in tiny_model(**MODELS[name]).modules())]


@pytest.mark.parametrize("name, core", [(n, c) for n in MODELS for c in cores_in(n)],
                         ids=lambda x: x if isinstance(x, str) else x.__name__)
def test_each_kernel_alone_equals_its_core_class(name, core):
    model, data = model_and_batch(MODELS[name])
    want = loss_and_grads(model, data)
    swap(model, {core: OURS[core]})
    assert any(type(m) is OURS[core] for m in model.modules())
    assert_all_close(loss_and_grads(model, data), want)


@pytest.mark.parametrize("name", list(MODELS))
def test_all_kernels_equal_the_core_model_in_loss_gradients_and_decoding(name):
    model, data = model_and_batch(MODELS[name])
    src, src_mask = data[:2]
    want = loss_and_grads(model, data)
    greedy, beam = model.greedy(src, 5, src_mask), model.beam(src, 3, 0.6, 5, src_mask)
    use_kernels(model)
    assert_all_close(loss_and_grads(model, data), want)
    fast = model.greedy(src, 5, src_mask) + model.beam(src, 3, 0.6, 5, src_mask)
    for a, b in zip(greedy + beam, fast):
        assert a.tokens == b.tokens
        assert abs(a.score - b.score) < 1e-12


def test_the_kernels_keep_float32():
    model = use_kernels(tiny_model(dtype="float32"))
    loss = loss_and_grads(model, model_and_batch({})[1])
    assert loss[0].dtype == np.float32
    assert {g.dtype for g in loss[1:]} == {np.dtype(np.float32)}


# ---- whole sequences as one op (models/fused_seq.py) ---------------------------------------

def ops_in_graph(root) -> dict:
    """{op name: count} of every node reachable from ``root`` (before backward frees it)."""
    from minigrad.engine import topological_order
    counts = {}
    for node in topological_order([root]):
        counts[node._op] = counts.get(node._op, 0) + 1
    return counts


# sizes all different, so a transposed weight or a swapped axis cannot fit by accident
DISTINCT = dict(src_vocab=11, tgt_vocab=10, embed=4, hidden=5, dec_hidden=6, attn=7)


@pytest.mark.parametrize("overrides", [dict(DISTINCT), dict(DISTINCT, score="concat"),
                                       dict(DISTINCT, dtype="float32"), {}],
                         ids=["additive", "concat", "float32", "tiny"])
def test_the_whole_sequence_ops_equal_the_core_model(overrides):
    """The encoder and the teacher-forced Bahdanau decoder each run as one node, and the loss,
    every parameter's gradient and the alignment equal the core model's (1e-12 in float64)."""
    rng = np.random.default_rng(5)
    src, src_mask = random_batch(rng, [6, 2, 4, 5], overrides.get("src_vocab", 9))
    tgt, tgt_mask = random_batch(rng, [3, 5, 1, 4], overrides.get("tgt_vocab", 8))
    data = (src, src_mask, tgt, tgt_mask)
    model = tiny_model(**overrides)
    want = loss_and_grads(model, data)
    alpha_core = model.forward(src, tgt, src_mask)[1]
    use_kernels(model)
    ops = ops_in_graph(model.loss(src, tgt, src_mask, tgt_mask))
    assert ops.get("bigru_sequence") == 1 and ops.get("bahdanau_sequence") == 1
    assert "gru_step" not in ops and "additive_tanh" not in ops      # no per-step nodes left
    got = loss_and_grads(model, data)
    tol = TOL if model.config.dtype == "float64" else dict(rtol=2e-4, atol=2e-5)
    for i, (a, b) in enumerate(zip(got, want)):
        np.testing.assert_allclose(a, b, **tol, err_msg=f"loss/gradient {i}")
    np.testing.assert_allclose(model.forward(src, tgt, src_mask)[1], alpha_core, **tol)


@pytest.mark.parametrize("overrides, kwargs", [
    (dict(temperature=2.0), {}), (dict(truncate=1), {}), (dict(reset_after=False), {}),
    (dict(score="general"), {}), ({}, dict(teacher_forcing=0.5))],
    ids=["temperature", "window", "reset-before", "general-score", "teacher-forcing"])
def test_what_the_sequence_op_does_not_compute_takes_the_per_step_path(overrides, kwargs):
    """Options the one-op decoder does not have fall back to the per-step kernels, still equal
    to the core model."""
    rng = np.random.default_rng(2)
    src, src_mask = random_batch(rng, [5, 3], 9)
    tgt, tgt_mask = random_batch(rng, [4, 2], 8)
    losses = []
    for kernels in (False, True):
        model = tiny_model(**overrides)
        if kernels:
            use_kernels(model)
        loss = model.loss(src, tgt, src_mask, tgt_mask, rng=np.random.default_rng(0), **kwargs)
        if kernels:
            assert "bahdanau_sequence" not in ops_in_graph(loss)
        loss.backward()
        losses.append([loss.data] + [p.grad for p in model.parameters()])
    assert_all_close(*losses)


def test_attention_dropout_in_training_takes_the_per_step_path_and_in_eval_the_sequence_op():
    model = use_kernels(tiny_model(dropout=0.5))
    rng = np.random.default_rng(4)
    src, src_mask = random_batch(rng, [5, 3], 9)
    tgt, tgt_mask = random_batch(rng, [4, 2], 8)
    loss = model.loss(src, tgt, src_mask, tgt_mask, rng=np.random.default_rng(0))
    assert "bahdanau_sequence" not in ops_in_graph(loss)
    model.eval()
    assert "bahdanau_sequence" in ops_in_graph(model.loss(src, tgt, src_mask, tgt_mask))


def test_the_sequence_ops_refuse_create_graph_naming_the_core_model():
    model = use_kernels(tiny_model())
    src, src_mask, tgt, tgt_mask = model_and_batch({})[1]
    loss = model.loss(src, tgt, src_mask, tgt_mask)
    with pytest.raises(RuntimeError, match=r"'bahdanau_sequence'.*the core model"):
        mg.grad(loss, model.parameters(), create_graph=True)


def test_the_sequence_decoder_names_an_out_of_range_input_id():
    model = use_kernels(tiny_model())
    src, src_mask, tgt, _ = model_and_batch({})[1]
    encoded = model.encoder(src, src_mask)
    with pytest.raises(ValueError, match=r"decoder inputs: token id 8 is out of range for a vocabulary of 8"):
        model.decoder(encoded, np.full_like(tgt, 8))


# ---- decoding: the no_grad step (bahdanau_step) against the core model ----------------------

@pytest.mark.parametrize("dtype, tol", [("float64", 1e-12), ("float32", 2e-5)])
def test_greedy_and_beam_on_the_kernels_equal_the_core_in_tokens_log_p_and_alignments(
        dtype, tol, monkeypatch):
    """Greedy (every prefix, so each token's log p) and beam search (k = 3) of the kernels path
    choose the core model's tokens and match its log-probabilities and alignments, through
    ``bahdanau_step`` at every step."""
    import models.kernels as kernels
    rng = np.random.default_rng(8)
    src, src_mask = random_batch(rng, [7, 3, 5, 6, 2], 11)
    core = tiny_model(**DISTINCT, dtype=dtype)
    fast = use_kernels(tiny_model(**DISTINCT, dtype=dtype))
    calls = []
    monkeypatch.setattr(kernels, "bahdanau_step",
                        lambda *a: calls.append(1) or fused_seq.bahdanau_step(*a))
    for n in range(1, 9):
        want, got = core.greedy(src, n, src_mask), fast.greedy(src, n, src_mask)
        for a, b in zip(want, got):
            assert a.tokens == b.tokens
            assert abs(a.score - b.score) <= tol * max(1.0, abs(a.score))  # prefix n: its log p
            np.testing.assert_allclose(b.weights, a.weights, rtol=tol, atol=tol)
    want, got = core.beam(src, 3, 0.6, 8, src_mask), fast.beam(src, 3, 0.6, 8, src_mask)
    for a, b in zip(want, got):
        assert a.tokens == b.tokens
        assert abs(a.score - b.score) <= tol * max(1.0, abs(a.score))
        np.testing.assert_allclose(b.weights, a.weights, rtol=tol, atol=tol)
    assert len(calls) >= 8 + 1                                     # the fast step ran throughout
    assert {len(t.tokens) for t in got} != {1}                     # not all stopped at once


@pytest.mark.parametrize("dtype, tol", [(np.float64, 2 ** -51), (np.float32, 2 ** -22)])
def test_tanh_of_a_sum_from_exp_2k_equals_tanh_up_to_the_limit_and_falls_back_past_it(dtype, tol):
    """tanh(q + k) as 1 − 2 / (1 + e^{2q} e^{2k}) is within 2⁻⁵¹ (float64) of np.tanh, also for
    large q and k of opposite signs up to LIMIT, without a warning; past the limit, or with a
    NaN, it is tanh_ of the sum (NaN where the sum is NaN)."""
    rng = np.random.default_rng(3)
    limit = fused_seq.LIMIT[np.dtype(dtype)]
    q = rng.uniform(-3, 3, (4, 5)).astype(dtype)
    k = rng.uniform(-3, 3, (4, 6, 5)).astype(dtype)
    q[0], k[0] = limit, -(limit - rng.uniform(0, 4, (6, 5)))          # saturating, and near 0
    q[1], k[1] = -limit, limit
    u = np.empty(k.shape, dtype)
    with np.errstate(all="raise"):
        e2k = fused_seq.exp_2k(k)
        assert e2k is not None
        got = fused_seq.tanh_of_sum(q, k, e2k, u)
    assert got is u and u.dtype == dtype
    np.testing.assert_allclose(u, np.tanh(q[:, None, :] + k), rtol=0, atol=tol)
    big = k.copy()
    big[2, 3, 1] = 2 * limit
    assert fused_seq.exp_2k(big) is None and fused_seq.exp_2k(np.full_like(k, np.nan)) is None
    for q_, k_ in ((q, big), (np.where(q > 2, 2 * limit, q).astype(dtype), k)):
        with np.errstate(all="raise"):
            fused_seq.tanh_of_sum(q_, k_, fused_seq.exp_2k(k_) if k_ is k else None, u)
        np.testing.assert_allclose(u, np.tanh(q_[:, None, :] + k_), rtol=0, atol=tol)
    q_nan = q.copy()
    q_nan[3, 2] = np.nan
    with np.errstate(all="raise"):
        fused_seq.tanh_of_sum(q_nan, k, e2k, u)
    assert np.isnan(u[3, :, 2]).all() and np.isfinite(np.delete(u.reshape(-1, 5), 2, axis=1)).all()


@pytest.mark.parametrize("dtype, tol", [(np.float64, 2 ** -48), (np.float32, 2 ** -19)])
def test_additive_scores_without_the_tanh_equal_v_dot_tanh_at_the_limits_and_past_them(dtype, tol):
    """Decoding's e = vᵀ tanh(q + k) as Σv − Σ_a (2 v_a / E_a) / (1/E_a + e^{2k}) equals the
    product with np.tanh (to a few ulp of Σ|v|), saturating q and k included, with no warning;
    past the limit, or with no e^{2k}, it takes tanh_of_sum; a NaN q gives NaN scores."""
    rng = np.random.default_rng(4)
    limit = fused_seq.LIMIT[np.dtype(dtype)]
    q = rng.uniform(-3, 3, (4, 5)).astype(dtype)
    k = rng.uniform(-3, 3, (4, 6, 5)).astype(dtype)
    v = rng.uniform(-2, 2, 5).astype(dtype)
    q[0], k[0] = limit, -(limit - rng.uniform(0, 4, (6, 5)))
    q[1], k[1] = -limit, limit
    exact = np.tanh(q.astype(np.float64)[:, None, :] + k) @ v.astype(np.float64)  # (B, S)
    u = np.empty(k.shape, dtype)
    scale = np.abs(v).sum()
    with np.errstate(all="raise"):
        got = fused_seq.additive_scores(q, k, fused_seq.exp_2k(k), v, u)
        assert got.dtype == dtype and got.shape == (4, 6)
        np.testing.assert_allclose(got, exact, rtol=0, atol=tol * scale)
        for q_, e2k in ((q, None), (np.where(q > 2, 2 * limit, q).astype(dtype), fused_seq.exp_2k(k))):
            got = fused_seq.additive_scores(q_, k, e2k, v, u)
            want = np.tanh(q_.astype(np.float64)[:, None, :] + k) @ v.astype(np.float64)
            np.testing.assert_allclose(got, want, rtol=0, atol=tol * scale)
    q[3, 2] = np.nan
    with np.errstate(invalid="ignore"):
        got = fused_seq.additive_scores(q, k, fused_seq.exp_2k(k), v, u)
    assert np.isnan(got[3]).all() and np.isfinite(got[:3]).all()
