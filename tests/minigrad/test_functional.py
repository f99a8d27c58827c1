"""Properties the op table cannot state: stability at extreme values, ties in max, masks with
nothing kept, fused ops against their composition from primitives, dropout's statistics."""
from __future__ import annotations

import warnings

import hypothesis.extra.numpy as hnp
import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given

import minigrad as mg
from minigrad import functional as F


def strict():
    """Any NumPy overflow, division by zero or invalid value raises; so does any warning.
    Underflow is allowed: e^-1000 rounding to 0 is the correctly rounded answer (and NumPy's
    default ignores it)."""
    return np.errstate(all="raise", under="ignore")


@pytest.fixture
def no_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


# ---- elementwise stability and ties --------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_sigmoid_is_finite_and_silent_at_large_inputs(dtype, no_warnings):
    x = mg.tensor(np.array([-1000, -710, -100, -1, 0, 1, 100, 710, 1000], dtype), requires_grad=True)
    with strict():
        y = mg.sigmoid(x)
        y.backward(np.ones(x.shape, dtype))
    assert y.dtype == dtype and x.grad.dtype == dtype
    np.testing.assert_allclose(y.data[[0, 4, 8]], [0.0, 0.5, 1.0])
    np.testing.assert_allclose(y.data[[3, 5]], [1 / (1 + np.e), 1 / (1 + 1 / np.e)], rtol=1e-6)
    np.testing.assert_allclose(x.grad[[0, 4, 8]], [0.0, 0.25, 0.0])
    assert np.all(np.isfinite(x.grad))


def test_max_ties_share_the_gradient_equally():
    x = mg.tensor([1.0, 3.0, 3.0, 2.0], requires_grad=True)
    mg.max(x).backward()
    np.testing.assert_array_equal(x.grad, [0, 0.5, 0.5, 0])

    y = mg.tensor([[1.0, 1.0, 0.0], [2.0, 5.0, 5.0], [4.0, 4.0, 4.0]], requires_grad=True)
    out = mg.max(y, axis=1, keepdims=True)
    out.backward(np.array([[1.0], [2.0], [3.0]]))
    np.testing.assert_array_equal(y.grad, [[0.5, 0.5, 0], [0, 1, 1], [1, 1, 1]])


def test_max_over_several_axes_with_ties():
    x = mg.tensor(np.array([[[7.0, 1.0], [7.0, 0.0]], [[2.0, 7.0], [3.0, 7.0]]]), requires_grad=True)
    out = mg.max(x, axis=(0, 2))                     # (2,): both entries are 7, tied twice
    assert out.shape == (2,)
    out.backward(np.array([1.0, 4.0]))
    np.testing.assert_array_equal(x.grad, [[[0.5, 0], [2, 0]], [[0, 0.5], [0, 2]]])


def test_getitem_with_repeated_indices_accumulates():
    x = mg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    x[np.array([0, 0, 2, 0])].sum().backward()
    np.testing.assert_array_equal(x.grad, [3, 0, 1])


def test_embedding_with_repeated_ids_accumulates():
    w = mg.tensor(np.arange(8.0).reshape(4, 2), requires_grad=True)
    F.embedding(np.array([[1, 1], [3, 1]]), w).backward(np.ones((2, 2, 2)))
    np.testing.assert_array_equal(w.grad, [[0, 0], [3, 3], [0, 0], [1, 1]])


def test_logsumexp_is_stable():
    x = mg.tensor([[1000.0, 1000.0], [-1000.0, -1000.0]], requires_grad=True)
    with strict():
        out = mg.logsumexp(x, axis=1)
        out.backward(np.ones(2))
    np.testing.assert_allclose(out.data, [1000 + np.log(2), -1000 + np.log(2)])
    np.testing.assert_allclose(x.grad, np.full((2, 2), 0.5))


# ---- softmax and log_softmax ---------------------------------------------------------------------

ROWS = hnp.arrays(np.float64, hnp.array_shapes(min_dims=2, max_dims=2, max_side=5),
                  elements=st.floats(-5, 5))


@given(x=ROWS, shift=st.floats(-100, 100))
def test_softmax_is_shift_invariant_and_sums_to_one(x, shift):
    y = F.softmax(mg.tensor(x)).data
    np.testing.assert_allclose(F.softmax(mg.tensor(x + shift)).data, y, atol=1e-12)
    np.testing.assert_allclose(y.sum(axis=-1), 1.0)
    np.testing.assert_allclose(np.exp(F.log_softmax(mg.tensor(x)).data), y, atol=1e-12)


def test_softmax_and_log_softmax_do_not_overflow():
    x = mg.tensor([[1000.0, 0.0], [-1000.0, -1000.0]])
    with strict():
        np.testing.assert_allclose(F.softmax(x).data, [[1, 0], [0.5, 0.5]])
        np.testing.assert_allclose(F.log_softmax(x).data, [[0, -1000], [-np.log(2)] * 2])


@given(x=ROWS, data=st.data())
def test_softmax_mask_equals_softmax_over_the_kept_entries(x, data):
    mask = data.draw(hnp.arrays(bool, x.shape))
    y = F.softmax(mg.tensor(x), mask=mask).data
    log_y = F.log_softmax(mg.tensor(x), mask=mask).data
    for row, keep, out, log_out in zip(x, mask, y, log_y):
        assert np.all(out[~keep] == 0) and np.all(log_out[~keep] == 0)
        if keep.any():
            expected = np.exp(row[keep]) / np.exp(row[keep]).sum()
            np.testing.assert_allclose(out[keep], expected, atol=1e-12)
            np.testing.assert_allclose(log_out[keep], np.log(expected), atol=1e-12)


@pytest.mark.parametrize("fn", [F.softmax, F.log_softmax], ids=["softmax", "log_softmax"])
def test_a_row_with_nothing_kept_gives_zeros_and_zero_gradient(fn, no_warnings):
    x = mg.tensor(np.random.default_rng(0).standard_normal((3, 4)), requires_grad=True)
    mask = np.array([[True, False, True, True], [False] * 4, [True] * 4])
    with strict(), mg.detect_anomaly():
        y = fn(x, mask=mask)
        y.backward(np.random.default_rng(1).standard_normal((3, 4)))
    np.testing.assert_array_equal(y.data[1], 0)
    np.testing.assert_array_equal(x.grad[1], 0)
    np.testing.assert_array_equal(x.grad[0, 1], 0)      # a masked entry gets no gradient
    assert np.all(x.grad[0, mask[0]] != 0)              # the kept entries do
    assert np.all(np.isfinite(y.data)) and np.all(np.isfinite(x.grad))


@given(x=ROWS, data=st.data())
def test_fused_softmax_ops_match_their_composition(x, data):
    """softmax = exp(x − max) / Σ exp(x − max) and log_softmax = x − logsumexp(x), built from
    primitives: same values, same gradients."""
    g = data.draw(hnp.arrays(np.float64, x.shape, elements=st.floats(-2, 2)))
    composed = {
        F.softmax: lambda t: mg.exp(t - mg.max(t, axis=-1, keepdims=True))
        / mg.exp(t - mg.max(t, axis=-1, keepdims=True)).sum(axis=-1, keepdims=True),
        F.log_softmax: lambda t: t - mg.logsumexp(t, axis=-1, keepdims=True),
    }
    for fused, compose in composed.items():
        a, b = mg.tensor(x, requires_grad=True), mg.tensor(x, requires_grad=True)
        ya, yb = fused(a), compose(b)
        ya.backward(g)
        yb.backward(g)
        np.testing.assert_allclose(ya.data, yb.data, atol=1e-12)
        np.testing.assert_allclose(a.grad, b.grad, atol=1e-10)


# ---- cross_entropy ---------------------------------------------------------------------------------

def test_cross_entropy_by_hand():
    logits = np.array([[2.0, 1.0, 0.0], [0.0, 0.0, 0.0]])
    first = -np.log(np.exp(2) / (np.exp(2) + np.exp(1) + 1))
    x = mg.tensor(logits, requires_grad=True)
    loss = F.cross_entropy(x, np.array([0, 2]))
    np.testing.assert_allclose(loss.item(), (first + np.log(3)) / 2)
    loss.backward()
    p = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(x.grad, (p - np.eye(3)[[0, 2]]) / 2)
    total = F.cross_entropy(mg.tensor(logits), np.array([0, 2]), reduction="sum")
    np.testing.assert_allclose(total.item(), first + np.log(3))


def test_cross_entropy_ignore_index():
    logits = np.random.default_rng(0).standard_normal((2, 3, 4))
    targets = np.array([[1, -100, 3], [-100, 0, 0]])
    x = mg.tensor(logits, requires_grad=True)
    F.cross_entropy(x, targets, ignore_index=-100).backward()
    kept = targets != -100
    logp = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    expected = -logp[kept, targets[kept]].mean()
    np.testing.assert_allclose(F.cross_entropy(mg.tensor(logits), targets, ignore_index=-100).item(),
                               expected)
    np.testing.assert_array_equal(x.grad[~kept], 0)     # ignored positions get no gradient
    np.testing.assert_allclose(x.grad[kept].sum(axis=-1), 0, atol=1e-15)
    x.grad = None
    F.cross_entropy(x, np.full((2, 3), -100), ignore_index=-100).backward()  # all ignored
    np.testing.assert_array_equal(x.grad, 0)


@given(data=st.data())
def test_cross_entropy_matches_its_composition(data):
    """Fused cross_entropy = −mean of log_softmax at the targets, values and gradients."""
    B, T, C = (data.draw(st.integers(1, 4)) for _ in range(3))
    logits = data.draw(hnp.arrays(np.float64, (B, T, C), elements=st.floats(-5, 5)))
    targets = data.draw(hnp.arrays(np.int64, (B, T), elements=st.integers(0, C - 1)))
    a, b = mg.tensor(logits, requires_grad=True), mg.tensor(logits, requires_grad=True)
    fused = F.cross_entropy(a, targets)
    picked = F.log_softmax(b)[np.arange(B)[:, None], np.arange(T)[None, :], targets]   # (B, T)
    composed = -picked.mean()
    fused.backward()
    composed.backward()
    np.testing.assert_allclose(fused.item(), composed.item(), rtol=1e-12)
    np.testing.assert_allclose(a.grad, b.grad, atol=1e-12)


@pytest.mark.parametrize("targets, message", [
    (np.array([0, 3]), "out of range"), (np.array([0.0, 1.0]), "integers"),
    (np.array([0, 1, 2]), "do not fit"),
])
def test_cross_entropy_rejects_bad_targets(targets, message):
    with pytest.raises(ValueError, match=message):
        F.cross_entropy(mg.tensor(np.zeros((2, 3))), targets)


def test_cross_entropy_refuses_integer_logits():
    """Integer logits were truncated (2 instead of 2.4076): refused, with the fix named."""
    with pytest.raises(ValueError, match=r"cross_entropy: logits must be floating.*int64"):
        F.cross_entropy([[1, 2, 3]], np.array([0]))
    assert F.cross_entropy([[1.0, 2.0, 3.0]], np.array([0])).item() == pytest.approx(2.4076059644)


# ---- linear and dropout -------------------------------------------------------------------------------

def test_linear_matches_its_composition():
    rng = np.random.default_rng(0)
    x, w, b = rng.standard_normal((2, 3, 4)), rng.standard_normal((5, 4)), rng.standard_normal(5)
    fused = [mg.tensor(v, requires_grad=True) for v in (x, w, b)]
    composed = [mg.tensor(v, requires_grad=True) for v in (x, w, b)]
    g = rng.standard_normal((2, 3, 5))
    F.linear(*fused).backward(g)
    (composed[0] @ composed[1].T + composed[2]).backward(g)
    for p, q in zip(fused, composed):
        np.testing.assert_allclose(p.grad, q.grad, atol=1e-12)


def test_dropout_keeps_the_expectation():
    p, n = 0.3, 200_000
    x = mg.tensor(np.ones(n), requires_grad=True)
    y = F.dropout(x, p, rng=np.random.default_rng(0))
    kept = y.data != 0
    assert abs(y.data.mean() - 1.0) < 0.01              # E[y] = x (inverted dropout)
    assert abs((~kept).mean() - p) < 0.01               # a fraction p is dropped
    np.testing.assert_allclose(y.data[kept], 1 / (1 - p))
    y.backward(np.full(n, 2.0))
    np.testing.assert_allclose(x.grad, 2.0 * y.data)    # gradient = g · mask / (1 − p)


def test_dropout_is_the_identity_in_eval_and_at_p0():
    x = mg.tensor(np.arange(6.0), requires_grad=True)
    for y in (F.dropout(x, 0.5, rng=np.random.default_rng(0), training=False),
              F.dropout(x, 0.0, rng=np.random.default_rng(0))):
        np.testing.assert_array_equal(y.data, x.data)
        x.grad = None
        y.backward(np.ones(6))
        np.testing.assert_array_equal(x.grad, np.ones(6))


def test_dropout_edge_cases(no_warnings):
    x = mg.tensor(np.ones(5, np.float32))
    np.testing.assert_array_equal(F.dropout(x, 1.0, rng=np.random.default_rng(0)).data, 0)
    assert F.dropout(x, 0.5, rng=np.random.default_rng(0)).dtype == np.float32
    a = F.dropout(x, 0.5, rng=np.random.default_rng(7)).data
    np.testing.assert_array_equal(a, F.dropout(x, 0.5, rng=np.random.default_rng(7)).data)
    with pytest.raises(ValueError, match="rng"):
        F.dropout(x, 0.5)
    with pytest.raises(ValueError, match="p must be"):
        F.dropout(x, 1.5, rng=np.random.default_rng(0))
    with pytest.raises(TypeError, match=r"training must be a bool.*rng is keyword-only"):
        F.dropout(x, 0.5, np.random.default_rng(0))  # PyTorch's third argument is training
    np.testing.assert_array_equal(F.dropout(x, 0.5, False).data, x.data)  # F.dropout(x, p, training)
