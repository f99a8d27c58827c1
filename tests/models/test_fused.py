"""The fused GRU step (models/fused.py) held to the composed cell it replaces (the fused additive
score has its own tests in tests/attention/test_scores.py): the same forward and the same gradients (to ~1e-12 in
float64), finite differences, float32 kept float32, and whole models that give the same loss
and gradients either way."""
import numpy as np
import pytest

import minigrad as mg
from attention.scores import AdditiveScore, ConcatScore
from minigrad.gradcheck import gradcheck
from models.fused import gru_step, reference_backward
from models.recurrent import GRUCell

from model_helpers import random_batch, tiny_model

TOL = dict(rtol=1e-12, atol=1e-12)


def forward_and_grads(fn, arrays, seed_grad):
    """Output and the gradient of every input for ``fn(*leaves).backward(seed_grad)``."""
    leaves = [mg.tensor(a, requires_grad=True) for a in arrays]
    out = fn(*leaves)
    out.backward(seed_grad)
    return [out.data] + [t.grad for t in leaves]


def assert_all_close(got, want):
    for i, (a, b) in enumerate(zip(got, want)):
        np.testing.assert_allclose(a, b, **TOL, err_msg=f"output/gradient {i}")


# ---- the GRU step -------------------------------------------------------------------------

def gru_inputs(rng, B, H, dtype=np.float64):
    return [rng.standard_normal((B, 3 * H)).astype(dtype), rng.standard_normal((B, H)).astype(dtype),
            (0.5 * rng.standard_normal((3 * H, H))).astype(dtype),
            (0.5 * rng.standard_normal(3 * H)).astype(dtype)]


@pytest.mark.parametrize("reset_after", [True, False])
@pytest.mark.parametrize("B, H", [(1, 1), (3, 4), (5, 7)])
def test_gru_step_equals_composed_cell(reset_after, B, H):
    rng = np.random.default_rng(B * 10 + H)
    cell = GRUCell(2, H, reset_after, rng=rng, fused=False)

    def composed(gi, h, W, b):
        cell.weight_hh, cell.bias_hh = W, b
        return cell.composed_step(gi, (h,))[0]

    arrays = gru_inputs(rng, B, H)
    g = rng.standard_normal((B, H))
    fused = forward_and_grads(lambda *t: gru_step(*t, reset_after=reset_after), arrays, g)
    assert_all_close(fused, forward_and_grads(composed, arrays, g))


@pytest.mark.parametrize("reset_after", [True, False])
@pytest.mark.parametrize("B, H", [(1, 1), (3, 4), (5, 7)])
def test_fused_backward_equals_the_plain_numpy_reference(reset_after, B, H):
    """The in-place backward of gru_step gives what models.fused.reference_backward, the same
    formulas one per line in plain NumPy, gives."""
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
def test_gru_cell_sequence_fused_equals_composed(reset_after):
    """Six steps sharing the weights (their gradients accumulate over steps), from the cell."""
    rng = np.random.default_rng(3)
    xs, h0 = rng.standard_normal((6, 4, 5)), rng.standard_normal((4, 3))
    results = []
    for fused in (True, False):
        cell = GRUCell(5, 3, reset_after, rng=np.random.default_rng(1), fused=fused)
        x, h = mg.tensor(xs, requires_grad=True), mg.tensor(h0, requires_grad=True)
        state = (h,)
        for t in range(6):
            state = cell(x[t], state)
        (h_T,) = state
        (h_T * h_T).sum().backward()
        results.append([h_T.data, x.grad, h.grad] + [p.grad for p in cell.parameters()])
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


def test_gru_cell_is_fused_by_default():
    assert GRUCell(2, 3).fused and not GRUCell(2, 3, fused=False).fused


# ---- whole models, fused vs composed --------------------------------------------------------

def set_fused(model, fused: bool) -> None:
    for m in model.modules():
        if isinstance(m, (GRUCell, AdditiveScore, ConcatScore)):
            m.fused = fused


@pytest.mark.parametrize("overrides", [
    dict(),
    dict(reset_after=False),
    dict(decoder="luong", score="concat"),
    dict(decoder="plain"),
], ids=["bahdanau", "bahdanau-cho", "luong-concat", "plain"])
def test_model_loss_and_gradients_fused_equal_composed(overrides):
    rng = np.random.default_rng(11)
    src, src_mask = random_batch(rng, [5, 3, 4], 9)
    tgt, tgt_mask = random_batch(rng, [4, 2, 3], 8)
    results = []
    for fused in (True, False):
        model = tiny_model(**overrides)
        set_fused(model, fused)
        loss = model.loss(src, tgt, src_mask, tgt_mask)
        loss.backward()
        results.append([loss.data] + [p.grad for p in model.parameters()])
    assert_all_close(*results)
