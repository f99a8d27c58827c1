"""Engine semantics: traversal order, accumulation, freeing the graph, no_grad, grad(),
detect_anomaly, and the Tensor basics they rest on."""
from __future__ import annotations

import gc
import sys
import weakref

import numpy as np
import pytest

import minigrad as mg
from minigrad.viz.graph import KEEP_NUMBERS


# ---- order and accumulation ------------------------------------------------------------------------

def test_backward_through_a_100000_op_chain_needs_no_recursion():
    limit = sys.getrecursionlimit()
    x = mg.tensor(2.0, requires_grad=True)
    y = x
    for _ in range(100_000):
        y = y * 1.00001
    y.backward()
    assert sys.getrecursionlimit() == limit             # nothing raised it
    np.testing.assert_allclose(x.grad, 1.00001 ** 100_000, rtol=1e-9)


def test_diamond_and_reused_inputs():
    x = mg.tensor([1.0, -2.0], requires_grad=True)
    a, b = x * 2, x * 3                                 # two paths from x ...
    (a * b + x * x + x).sum().backward()               # ... meet again: 6x² + x² + x
    np.testing.assert_allclose(x.grad, 14 * x.data + 1)


def test_a_doubling_ladder_visits_each_node_once():
    """y = 2^60 x through 60 nodes each used twice: 2^60 paths, so a traversal that followed
    paths instead of visiting each node once (after all its consumers) would never finish."""
    x = mg.tensor(1.0, requires_grad=True)
    y = x
    for _ in range(60):
        y = y + y
    y.backward()
    assert x.grad == 2.0 ** 60


def test_leaves_accumulate_across_backward_calls():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    (x * 3).sum().backward()
    (x * x).sum().backward()
    np.testing.assert_allclose(x.grad, 3 + 2 * x.data)


def test_a_leaf_can_be_the_root():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    x.backward(np.array([5.0, 6.0]))
    np.testing.assert_array_equal(x.grad, [5, 6])


def test_second_backward_through_a_freed_graph_raises():
    x = mg.tensor(3.0, requires_grad=True)
    y = mg.exp(x) * x
    y.backward()
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        y.backward()


def test_retain_graph_accumulates_exactly_twice():
    x = mg.tensor([0.5, 1.5], requires_grad=True)
    h = mg.tanh(x)
    y = (h * h + h * x).sum()                           # a diamond through h and x
    y.backward(retain_graph=True)
    once = x.grad.copy()
    y.backward()
    np.testing.assert_allclose(x.grad, 2 * once, rtol=1e-15)
    t = np.tanh(x.data)
    np.testing.assert_allclose(once, (2 * t + x.data) * (1 - t * t) + t)
    with pytest.raises(RuntimeError, match="retain_graph"):
        y.backward()                                    # the second call freed it


def test_non_scalar_backward_needs_a_gradient():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    with pytest.raises(RuntimeError, match="non-scalar"):
        y.backward()
    with pytest.raises(ValueError, match="shape"):
        y.backward(np.ones(3))
    y.backward(np.array([1.0, -1.0]))
    np.testing.assert_array_equal(x.grad, [2, -2])


def test_backward_on_a_tensor_without_graph_raises():
    with pytest.raises(RuntimeError, match="does not require grad"):
        (mg.tensor([1.0]) * 2).sum().backward()


# ---- no_grad and grad() -------------------------------------------------------------------------------

def test_no_grad_builds_no_graph_and_restores_the_mode():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    with mg.no_grad():
        y = (x * 2).sum()
        with mg.no_grad():
            pass
        z = x * 3                                       # still off after the nested block
    assert not y.requires_grad and y._parents == () and not z.requires_grad
    with pytest.raises(RuntimeError):
        y.backward()
    with pytest.raises(KeyError):
        with mg.no_grad():
            raise KeyError("boom")
    assert (x * 2).requires_grad                        # on again, even after an exception


def test_grad_returns_gradients_without_touching_dot_grad():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    w = mg.tensor([3.0, 4.0], requires_grad=True)
    unused = mg.tensor([0.0], requires_grad=True)
    w.grad = np.array([100.0, 100.0])
    h = x * w
    gx, gw, gh, gu = mg.grad((h * h).sum(), [x, w, h, unused])
    np.testing.assert_allclose(gx, 2 * h.data * w.data)
    np.testing.assert_allclose(gw, 2 * h.data * x.data)
    np.testing.assert_allclose(gh, 2 * h.data)          # an intermediate works too
    np.testing.assert_array_equal(gu, [0.0])            # not reached: zeros
    assert x.grad is None and unused.grad is None
    np.testing.assert_array_equal(w.grad, [100, 100])


def test_grad_returns_fresh_writable_arrays():
    a, b = mg.tensor(np.ones(3), requires_grad=True), mg.tensor(np.ones(3), requires_grad=True)
    seed = np.array([1.0, 2.0, 3.0])
    ga, gb = mg.grad(a + b, [a, b], grad_outputs=seed)  # add's VJP passes g to both sides
    ga += 1                                             # writable, and not shared
    np.testing.assert_array_equal(gb, seed)
    np.testing.assert_array_equal(seed, [1.0, 2.0, 3.0])
    (gs,) = mg.grad(a.sum(), [a])                       # sum's VJP broadcasts (read-only)
    gs[0] = 5.0
    np.testing.assert_array_equal(gs, [5.0, 1.0, 1.0])


def test_grad_with_grad_outputs_and_a_single_input():
    x = mg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    g = mg.grad(x * x, x, grad_outputs=np.array([1.0, 0.0, -1.0]))
    np.testing.assert_allclose(g, [2.0, 0.0, -6.0])
    assert x.grad is None
    with pytest.raises(RuntimeError, match="non-scalar"):
        mg.grad(x * x, x)


# ---- freeing the graph ---------------------------------------------------------------------------

def test_backward_releases_the_graph():
    """Once backward returns, nothing holds the intermediates of a training-sized graph any
    more (with retain_graph, or for a graph small enough to be kept for drawing, they live
    until the output goes). Reference counting alone must free them: the collector is off, so
    a reference cycle in the graph would keep them alive and fail the test."""
    gc.collect()
    gc.disable()
    try:
        x = mg.tensor(np.ones(KEEP_NUMBERS), requires_grad=True)
        h = mg.exp(x)
        y = (h * h).sum()
        intermediate = weakref.ref(h)
        del h
        assert intermediate() is not None               # y's graph holds it
        y.backward()
        assert intermediate() is None                   # released, though y is alive

        x = mg.tensor(np.ones(3), requires_grad=True)
        h = mg.exp(x)
        y = (h * h).sum()
        intermediate = weakref.ref(h)
        del h
        y.backward()
        assert intermediate() is not None               # a small graph is kept for draw_graph
        del y
        assert intermediate() is None                   # and freed with the output

        h = mg.exp(x)
        y = (h * h).sum()
        intermediate = weakref.ref(h)
        del h
        y.backward(retain_graph=True)
        assert intermediate() is not None               # kept for a second backward
        del y
        assert intermediate() is None                   # and freed with the output
    finally:
        gc.enable()


# ---- detect_anomaly -----------------------------------------------------------------------------------

def test_detect_anomaly_names_the_op_with_a_nan_forward():
    x = mg.tensor(-1.0, requires_grad=True)
    with np.errstate(invalid="ignore"):
        assert np.isnan(mg.log(x).item())               # silent without the switch
        with mg.detect_anomaly(), pytest.raises(FloatingPointError, match="forward of op 'log'"):
            mg.log(x)


def test_detect_anomaly_names_the_op_with_an_inf_backward():
    x = mg.tensor([0.0, 1.0], requires_grad=True)
    with np.errstate(divide="ignore"):
        with mg.detect_anomaly(), pytest.raises(FloatingPointError, match="backward of op 'sqrt'"):
            mg.sqrt(x).sum().backward()
        x.grad = None
        mg.sqrt(x).sum().backward()                     # off again: inf passes silently
    assert np.isinf(x.grad[0])


# ---- Tensor basics ------------------------------------------------------------------------------------

def test_tensor_attributes_and_conversions():
    t = mg.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert t.dtype == np.float64 and t.shape == (2, 3) and t.ndim == 2 and len(t) == 2
    assert t.T.shape == (3, 2) and t.sum().item() == 21.0
    assert t.numpy() is t.data
    a = np.ones(2, np.float32)
    u = mg.tensor(a)
    a[0] = 5                                            # tensor() copies
    assert u.dtype == np.float32 and u.data[0] == 1
    assert mg.tensor(2.5).dtype == np.float64
    with pytest.raises(ValueError, match="one-element"):
        t.item()


def test_detach_cuts_the_graph():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    d = (x * 2).detach()
    assert not d.requires_grad
    (d * x).sum().backward()
    np.testing.assert_array_equal(x.grad, [2.0, 4.0])  # d is a constant


def test_tensors_hash_by_identity_and_compare_elementwise():
    a, b = mg.tensor([1.0, 2.0]), mg.tensor([1.0, 2.0])
    assert len({a, b}) == 2 and {a: 1, b: 2}[b] == 2    # identity keys, == never consulted
    for result, expected in [(a == b, [True, True]), (a != b, [False, False]),
                             (a == 1.0, [True, False]), (a != 2, [True, False]),
                             (a < 2, [True, False]), (a <= 1, [True, False]),
                             (a > 1, [False, True]), (a >= 2, [False, True]),
                             (2.0 > a, [True, False]), (np.array([1.0, 3.0]) == a, [True, False])]:
        assert isinstance(result, np.ndarray) and result.dtype == bool
        np.testing.assert_array_equal(result, expected)


def test_comparisons_work_inside_numpy_where_and_record_no_graph():
    t = mg.tensor([0.0, 1.5, 0.0], requires_grad=True)
    np.testing.assert_array_equal(np.where(t == 0, -1.0, t.data), [-1.0, 1.5, -1.0])
    y = mg.where(t != 0, t * 2, t * 3)                 # a comparison as a where condition
    y.sum().backward()
    np.testing.assert_array_equal(t.grad, [3.0, 2.0, 3.0])


def test_the_engine_never_compares_tensors():
    """Reused inputs, diamonds and grad() with several inputs go through the engine's dicts
    and sets: with == made to raise, they still work."""
    class Strict(mg.Tensor):
        __slots__ = ()

        def __eq__(self, other):
            raise AssertionError("the engine called ==")
        __hash__ = mg.Tensor.__hash__

    x = mg.tensor([1.0, -2.0], requires_grad=True)
    x.__class__ = Strict
    a, b = x * 2, x * 3
    for t in (a, b):
        t.__class__ = Strict
    y = (a * b + x * x).sum()
    gx, ga = mg.grad(y, [x, a], retain_graph=True)
    np.testing.assert_allclose(gx, 14 * x.data)
    np.testing.assert_allclose(ga, b.data)
    y.backward()
    np.testing.assert_allclose(x.grad, 14 * x.data)


def test_truth_value_of_a_tensor_is_like_numpys():
    assert mg.tensor(2.0) and not mg.tensor([0.0])     # one element: its value
    for t in (mg.tensor([1.0, 2.0]), mg.tensor(np.ones((0,)))):
        with pytest.raises(ValueError, match="truth value of a tensor with .* elements is ambiguous"):
            bool(t)


def test_numpy_reads_a_tensor_as_its_data_and_ndarray_op_tensor_stays_a_tensor():
    t = mg.tensor([1.0, 2.0], requires_grad=True)
    assert np.asarray(t) is t.data
    assert np.asarray(t, dtype=np.float32).dtype == np.float32
    np.testing.assert_array_equal(np.array([t, t]), [[1.0, 2.0], [1.0, 2.0]])
    for out in (np.ones(2) + t, np.ones(2) * t, np.ones(2) - t, np.ones(2) / t, np.ones((2, 2)) @ t,
                np.float64(2.0) * t):
        assert isinstance(out, mg.Tensor) and out.requires_grad


# ---- a broken VJP is reported by name ---------------------------------------------------------------

def test_a_vjp_returning_too_few_gradients_is_named():
    a, b = mg.tensor([1.0], requires_grad=True), mg.tensor([2.0], requires_grad=True)
    out = mg.Tensor._from_op(a.data * b.data, (a, b), lambda xp, g, out, a, b: (g * b,),
                             "half_mul")
    with pytest.raises(RuntimeError, match="op 'half_mul': its VJP returned 1 gradient for 2 inputs"):
        out.sum().backward()


def test_a_vjp_returning_a_misshaped_gradient_is_named():
    a = mg.tensor([1.0, 2.0], requires_grad=True)
    out = mg.Tensor._from_op(a.data * 2, (a,), lambda xp, g, out, a: (np.ones(3),),
                             "bad_shape")
    with pytest.raises(RuntimeError, match=r"op 'bad_shape'.*shape \(3,\).*shape \(2,\)"):
        out.sum().backward()


# ---- in-place changes to saved tensors ----------------------------------------------------------

def test_changing_a_saved_tensor_before_backward_raises_naming_the_op_and_input():
    a = mg.tensor([1.0, 2.0], requires_grad=True)
    b = mg.tensor([3.0, 4.0])                           # a constant: a's gradient reads it
    y = (a * b).sum()
    b.data[0] = 100
    with pytest.raises(RuntimeError, match=r"input 1 of op 'mul' \(a tensor of shape \(2,\)\) "
                                           r"was changed in place"):
        y.backward()
    assert a.grad is None                               # nothing was accumulated
    b.data[0] = 3.0                                     # restored: the same bytes again
    y.backward()
    np.testing.assert_array_equal(a.grad, [3.0, 4.0])


def test_a_parameter_changed_between_two_backward_passes_is_caught():
    w = mg.tensor([0.5, -1.0], requires_grad=True)
    y = mg.tanh(w * w).sum()
    y.backward(retain_graph=True)
    w.data -= 0.1 * w.grad                              # an optimizer step, graph still held
    with pytest.raises(RuntimeError, match="input 0 of op 'mul'"):
        y.backward()
    with pytest.raises(RuntimeError, match="input 0 of op 'mul'"):
        mg.grad(y, [w])


def test_changing_data_after_backward_or_by_a_new_array_is_allowed():
    w = mg.tensor([0.5, -1.0], requires_grad=True)
    for _ in range(3):                                  # a training loop: step after backward
        (w * w).sum().backward()
        w.data -= 0.1 * w.grad
        w.grad = None
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    x.data = np.array([5.0, 6.0])                       # a new array before recording
    (x * x).sum().backward()
    np.testing.assert_array_equal(x.grad, [10.0, 12.0])


def test_a_constant_made_by_an_op_is_checked_like_a_leaf():
    a = mg.tensor([1.0, 2.0], requires_grad=True)
    (a * a).sum().backward()                            # the epoch moves on
    c = (a * 3).detach()                                # made in this epoch, with no graph
    with mg.no_grad():
        d = a * 2                                       # likewise
    y = (a * c * d).sum()
    d.data[1] = -1.0
    with pytest.raises(RuntimeError, match=r"input 1 of op 'mul' \(a tensor of shape \(2,\)\)"):
        y.backward()
    d.data[1] = 4.0
    a.grad = None
    y.backward()
    np.testing.assert_array_equal(a.grad, [3.0 * 2.0, 6.0 * 4.0])  # c * d


def test_a_constant_changed_before_any_graph_records_it_is_not_flagged():
    a = mg.tensor([1.0, 2.0], requires_grad=True)
    c = mg.tensor([3.0, 4.0])
    d = c * 2                                           # an op on constants only: no graph
    c.data[0] = 5.0                                     # nothing recorded c yet: allowed
    (a * c).sum().backward()
    np.testing.assert_array_equal(a.grad, [5.0, 4.0])
    np.testing.assert_array_equal(d.data, [6.0, 8.0])
