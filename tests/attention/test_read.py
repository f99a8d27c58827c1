"""The read c = Σ_j α_j h_j: masked softmax, composed ``attend``, the op ``read`` and the
analytic gradient ``score_grad`` ∂L/∂e_j = α_j g·(h_j − c) (source 004 §7), checked three ways;
``read`` differentiated twice."""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import minigrad as mg
from attention import AdditiveScore, Attention, DotScore, attend, masked_softmax, read, score_grad
from attention.kernels import KERNELS
from attention_checks import expand_mask, read_inputs
from minigrad.gradcheck import gradcheck, gradgradcheck, numerical_grad
from minigrad.kernels import swap


def np_softmax(e, mask):
    """Reference: exp over kept entries, normalised; rows with nothing kept are 0."""
    z = np.where(mask, np.exp(e - e.max(-1, keepdims=True)), 0.0)
    total = z.sum(-1, keepdims=True)
    return np.divide(z, total, out=np.zeros_like(z), where=total > 0)


@given(read_inputs())
def test_attend_and_read_match_numpy(inputs):
    scores, values, mask = inputs
    alpha = np_softmax(scores, expand_mask(mask, scores))
    context = np.einsum("b...s,bsd->b...d", alpha, values)
    for fn in (attend, read):
        c, w = fn(scores, values, mask)
        np.testing.assert_allclose(w.data, alpha, rtol=0, atol=1e-12)
        np.testing.assert_allclose(c.data, context, rtol=0, atol=1e-12)


# ---- score_grad, the three checks of the issue -----------------------------------------

def loss_of_scores(values, g, mask):
    """L(e) = g·c(e), the loss whose ∂L/∂c is g."""
    return lambda e: (read(e, values, mask)[0] * g).sum()


@settings(deadline=None)
@given(read_inputs(), st.integers(0, 2**32 - 1))
def test_score_grad_matches_finite_differences(inputs, seed):
    scores, values, mask = inputs
    c, w = read(scores, values, mask)
    g = np.random.default_rng(seed).uniform(-1, 1, c.shape)
    formula = score_grad(w.data, values, c.data, g)
    numeric = numerical_grad(loss_of_scores(values, g, mask), [mg.tensor(scores)], eps=1e-5)[0]
    # relative to the gradient's size; the floor makes an all-masked (zero) gradient absolute
    rel = np.linalg.norm(formula - numeric) / max(np.linalg.norm(numeric), 1e-2)
    assert rel <= 1e-6


@given(read_inputs(), st.integers(0, 2**32 - 1))
def test_score_grad_equals_composed_autograd(inputs, seed):
    scores, values, mask = inputs
    e = mg.tensor(scores, requires_grad=True)
    c, w = attend(e, values, mask)                  # softmax, then the weighted sum
    g = np.random.default_rng(seed).normal(size=c.shape)
    c.backward(g)
    np.testing.assert_allclose(score_grad(w.data, values, c.data, g), e.grad, rtol=0, atol=1e-12)


@given(read_inputs(), st.integers(0, 2**32 - 1))
def test_score_grad_sums_to_zero_and_is_zero_where_masked(inputs, seed):
    scores, values, mask = inputs
    c, w = read(scores, values, mask)
    g = np.random.default_rng(seed).normal(size=c.shape)
    grad = score_grad(w.data, values, c.data, g)
    scale = 1 + np.abs(g).sum(-1, keepdims=True) * np.abs(values).max()
    assert np.all(np.abs(grad.sum(-1, keepdims=True)) <= 1e-12 * scale)   # Σ_j ∂L/∂e_j = 0
    assert np.all(grad[~expand_mask(mask, scores)] == 0.0)                 # exactly 0


@given(read_inputs(), st.integers(0, 2**32 - 1))
def test_read_backward_equals_composed(inputs, seed):
    scores, values, mask = inputs
    grads = []
    for fn in (read, attend):
        e, h = mg.tensor(scores, requires_grad=True), mg.tensor(values, requires_grad=True)
        c, w = fn(e, h, mask)
        rng = np.random.default_rng(seed)
        loss = (c * rng.normal(size=c.shape)).sum() + (w * rng.normal(size=w.shape)).sum()
        loss.backward()
        grads.append((e.grad, h.grad))
    for op, composed in zip(*grads):
        np.testing.assert_allclose(op, composed, rtol=0, atol=1e-12)


def test_read_gradcheck_3d_with_mask():
    rng = np.random.default_rng(0)
    scores, values = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 4, 5))
    mask = np.array([[True, True, False, True], [True, False, False, False]])
    assert gradcheck(lambda e, h: read(e, h, mask)[0], [scores, values])
    assert gradcheck(lambda e, h: read(e, h, mask)[1], [scores, values])


# ---- dtypes: the same policy as minigrad's ops, in attend and read alike -----------------

@pytest.mark.parametrize("fn", [attend, read])
def test_plain_array_operands_adopt_the_other_operands_float_dtype(fn):
    s32, v64 = np.zeros((2, 3), np.float32), np.ones((2, 3, 4))
    for scores, values, dtype in ((s32, v64, np.float32),                   # plain + plain
                                  (mg.tensor(s32), v64, np.float32),        # Tensor + plain
                                  (s32.astype(np.float64), mg.tensor(v64.astype(np.float32)),
                                   np.float32)):                            # plain + Tensor
        c, w = fn(scores, values)
        assert c.data.dtype == w.data.dtype == dtype


@pytest.mark.parametrize("fn", [attend, read])
def test_an_int_tensor_and_float32_values_give_float32_as_mul_does(fn):
    scores, values = mg.tensor(np.zeros((2, 3), np.int64)), np.ones((2, 3, 4), np.float32)
    assert (scores * values[..., 0]).dtype == np.float32                 # mg.mul's pairing
    c, w = fn(scores, values)
    assert c.data.dtype == w.data.dtype == np.float32


@pytest.mark.parametrize("fn", [attend, read])
def test_float_tensors_of_different_precision_promote_as_numpy_does(fn):
    e = mg.tensor(np.zeros((2, 3), np.float32), requires_grad=True)
    h = mg.tensor(np.ones((2, 3, 4)), requires_grad=True)                  # float64
    c, _ = fn(e, h)
    c.sum().backward()
    assert c.data.dtype == np.float64
    assert e.grad.dtype == np.float32 and h.grad.dtype == np.float64     # each leaf's own


def test_read_is_one_node_for_the_context():
    e = mg.tensor(np.zeros((2, 3)), requires_grad=True)
    c, w = read(e, np.ones((2, 3, 4)))
    assert c._op == "read" and c._parents[0] is e
    assert w._op == "softmax" and w._parents[0] is e


# ---- read is differentiable twice: its VJP is the formula, in the xp form -------------------

@pytest.mark.parametrize("shape", [(2, 4), (2, 3, 4), (2, 2, 3, 4)], ids=["(B,S)", "(B,T,S)",
                                                                          "(B,h,T,S)"])
def test_read_gradgradchecks_with_a_mask(shape):
    rng = np.random.default_rng(5)
    scores = rng.normal(size=shape)
    values = rng.normal(size=shape[:-2] + (4, 3) if len(shape) == 4 else (2, 4, 3))
    mask = np.array([[True, True, False, True], [False] * 4])        # row 1: all masked
    for out in (0, 1):  # the context and the weights
        assert gradgradcheck(lambda e, h: read(e, h, mask)[out], [scores, values])


def test_read_second_derivatives_equal_the_composed_reads():
    """∂/∂(e, h) of g·∂L/∂(e, h) for L = Σ c ⊙ w: create_graph through read and through
    attend give the same Tensors (to 1e-12), and score_grad under create_graph is one of them."""
    rng = np.random.default_rng(6)
    scores, values = rng.normal(size=(3, 2, 5)), rng.normal(size=(3, 5, 4))
    weight, mask = rng.normal(size=(3, 2, 4)), rng.random((3, 5)) < 0.7
    out = []
    for fn in (read, attend):
        e, h = mg.tensor(scores, requires_grad=True), mg.tensor(values, requires_grad=True)
        c, w = fn(e, h, mask)
        ge, gh = mg.grad((c * weight).sum() + (w * w).sum(), [e, h], create_graph=True)
        assert ge.requires_grad and gh.requires_grad
        second = mg.grad((ge * ge).sum() + (gh * gh).sum(), [e, h])   # through the backward
        out.append([ge.data, gh.data, *second])
    for a, b in zip(*out):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)


def test_the_default_attention_module_differentiates_twice():
    """Attention(AdditiveScore) as a decoder builds it: the core score and ``read``, with a
    mask that hides every key of example 1."""
    rng = np.random.default_rng(7)
    att = Attention(AdditiveScore(3, 4, 5, rng=rng))
    mask = np.array([[True, True, False, True], [False] * 4])
    q, keys = rng.normal(size=(2, 3)), rng.normal(size=(2, 4, 4))
    assert gradgradcheck(lambda q, k: att(q, k, mask=mask)[0], [q, keys])


# ---- a query with every key masked: zeros, never NaN, no warning -------------------------

@pytest.mark.parametrize("fn", [read, attend])
@pytest.mark.parametrize("shape", [(2, 4), (2, 3, 4)])
def test_all_masked_rows_give_zero_weights_context_and_gradients(fn, shape):
    rng = np.random.default_rng(1)
    e = mg.tensor(rng.normal(size=shape), requires_grad=True)
    h = mg.tensor(rng.normal(size=(2, 4, 3)), requires_grad=True)
    mask = np.array([[False] * 4, [True, False, True, False]])
    with warnings.catch_warnings(), np.errstate(all="raise"):
        warnings.simplefilter("error")
        c, w = fn(e, h, mask)
        (c.sum() + (w * w).sum()).backward()
    assert np.all(w.data[0] == 0) and np.all(c.data[0] == 0)
    assert np.all(e.grad[0] == 0) and np.all(np.isfinite(e.grad)) and np.all(np.isfinite(h.grad))
    assert np.all(h.grad[0] == 0)
    np.testing.assert_allclose(w.data[1].sum(-1), 1.0, atol=1e-12)


def test_masked_softmax_takes_a_b_s_mask_for_3d_scores_and_other_axes():
    e = np.arange(24.0).reshape(2, 3, 4) / 7
    mask = np.array([[True, False, True, True], [False, False, False, True]])
    w = masked_softmax(e, mask).data
    assert w.shape == (2, 3, 4) and np.all(w[:, :, ~mask[1]][1] == 0)
    np.testing.assert_allclose(w[1, :, 3], 1.0)
    np.testing.assert_allclose(masked_softmax(e, axis=1).data.sum(1), 1.0)


def test_a_2d_mask_is_key_padding_per_example_even_when_b_equals_t():
    """(B, S) is read as key padding for every query of example b, never as (T, S); a per-query
    mask is given with a leading 1: (1, T, S)."""
    e = np.zeros((3, 3, 4))                                          # B = T = 3
    mask = np.array([[True, True, False, False], [True, False, False, False], [True] * 4])
    for fn in (masked_softmax, lambda e, m: read(e, np.ones((3, 4, 2)), m)[1]):
        np.testing.assert_array_equal(fn(e, mask).data > 0, np.broadcast_to(mask[:, None], e.shape))
        np.testing.assert_array_equal(fn(e, mask[None]).data > 0, np.broadcast_to(mask, e.shape))


def test_attention_module_equals_score_then_attend_and_projected_is_reused():
    rng = np.random.default_rng(2)
    score = AdditiveScore(3, 4, 5, rng=rng)
    q, keys = rng.normal(size=(2, 3)), rng.normal(size=(2, 6, 4))
    mask = np.array([[True] * 6, [True] * 4 + [False] * 2])
    c1, w1 = Attention(score)(q, keys, mask=mask)
    c2, w2 = attend(score(q, keys), keys, mask)
    att = Attention(score)
    c3, w3 = att(q, keys, mask=mask, projected=att.project_keys(keys))
    for c, w in ((c2, w2), (c3, w3)):
        np.testing.assert_allclose(c.data, c1.data, atol=1e-12)
        np.testing.assert_allclose(w.data, w1.data, atol=1e-12)
    values = rng.normal(size=(2, 6, 7))
    assert Attention(DotScore())(rng.normal(size=(2, 4)), keys, values)[0].shape == (2, 7)


@pytest.mark.parametrize("kernels", [False, True])
def test_all_masked_row_through_a_score_module_gives_zero_query_and_key_gradients(kernels):
    rng = np.random.default_rng(3)
    score = AdditiveScore(3, 4, 5, rng=rng)
    q = mg.tensor(rng.normal(size=(2, 3)), requires_grad=True)
    keys = mg.tensor(rng.normal(size=(2, 5, 4)), requires_grad=True)
    mask = np.array([[False] * 5, [True] * 5])
    with warnings.catch_warnings(), np.errstate(all="raise"):
        warnings.simplefilter("error")
        att = Attention(score)
        c, w = (swap(att, KERNELS) if kernels else att)(q, keys, mask=mask)
        (c * c).sum().backward()
    assert np.all(c.data[0] == 0) and np.all(w.data[0] == 0)
    assert np.all(q.grad[0] == 0) and np.all(keys.grad[0] == 0)
    assert np.abs(q.grad[1]).max() > 0


# ---- the graph: read is one node, attend four --------------------------------------------

def graph_ops(t) -> list:
    """The op names of every node that ``t``'s backward visits (leaves excluded)."""
    seen, stack, ops = set(), [t], []
    while stack:
        x = stack.pop()
        if id(x) not in seen:
            seen.add(id(x))
            ops += [x._op] if x._parents else []
            stack.extend(x._parents)
    return ops


def test_read_is_one_node_where_the_composed_read_is_four():
    """read's context is one node whose VJP is the formula; attend's is the softmax, a new
    query axis, the matmul and the axis taken away again, each with its own VJP."""
    rng = np.random.default_rng(0)
    e = mg.tensor(rng.normal(size=(4, 5)), requires_grad=True)
    h = mg.tensor(rng.normal(size=(4, 5, 3)), requires_grad=True)
    assert graph_ops(read(e, h)[0]) == ["read"]
    assert sorted(graph_ops(attend(e, h)[0])) == ["getitem", "getitem", "matmul", "softmax"]
