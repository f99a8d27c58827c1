"""NumPy's own functions on a Tensor keep the graph (``minigrad/numpy_functions.py``): each gives
the Tensor, value and gradient, of minigrad's op of the same meaning; comparisons give booleans;
a function with no op is refused in one line; ``np.asarray(t)`` is still the data."""
import inspect

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import minigrad as mg
from minigrad import functional as F
from minigrad.numpy_functions import FUNCTIONS, UFUNCS

DATA = np.array([[1.5, -2.0, 3.25], [0.5, 4.0, -1.0]])
arrays = hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, max_side=4),
                    elements=st.floats(0.1, 3.0))

# (NumPy's call, minigrad's): the same arguments, Tensors in place of arrays
UNARY = [(np.exp, mg.exp), (np.log, mg.log), (np.tanh, mg.tanh), (np.sqrt, mg.sqrt),
         (np.negative, mg.neg), (np.abs, mg.abs), (np.sin, mg.sin), (np.log1p, mg.log1p),
         (np.sum, mg.sum), (np.mean, mg.mean), (np.max, mg.max), (np.prod, mg.prod),
         (np.var, mg.var), (np.cumsum, lambda x: mg.cumsum(x)),
         (lambda x: np.sum(x, axis=-1, keepdims=True), lambda x: mg.sum(x, -1, True)),
         (np.transpose, mg.transpose), (np.ravel, lambda x: mg.reshape(x, -1)),
         (lambda x: np.maximum(x, 1.0), lambda x: mg.maximum(x, 1.0)),
         (lambda x: np.power(x, 3), lambda x: mg.power(x, 3)),
         (lambda x: np.expand_dims(x, 0), lambda x: mg.expand_dims(x, 0)),
         (lambda x: np.concatenate([x, x]), lambda x: mg.concatenate([x, x])),
         (lambda x: np.stack([x, 2 * x], axis=-1), lambda x: mg.stack([x, 2 * x], axis=-1)),
         (lambda x: np.where(x.data > 1, x, 0.0), lambda x: mg.where(x.data > 1, x, 0.0)),
         (lambda x: np.add(np.ones(x.shape), x) * np.multiply(x, x),
          lambda x: mg.add(np.ones(x.shape), x) * mg.mul(x, x)),
         (lambda x: np.ones(x.shape) / x - x ** 2, lambda x: mg.div(np.ones(x.shape), x) - x ** 2)]


@pytest.mark.parametrize("numpy_fn, op", UNARY, ids=[str(i) for i in range(len(UNARY))])
@given(data=arrays)
def test_a_numpy_function_on_a_tensor_is_the_op_with_its_gradient(numpy_fn, op, data):
    a = mg.tensor(data, requires_grad=True)
    b = mg.tensor(data, requires_grad=True)
    got, want = numpy_fn(a), op(b)
    assert isinstance(got, mg.Tensor) and got.requires_grad
    np.testing.assert_array_equal(got.data, want.data)
    seed = np.linspace(-1, 1, got.data.size).reshape(got.shape)
    got.backward(seed)
    want.backward(seed)
    np.testing.assert_array_equal(a.grad, b.grad)


def test_numpy_sum_of_squares_backpropagates_as_micrograd_users_expect():
    t = mg.tensor(DATA, requires_grad=True)
    np.sum(t ** 2).backward()
    np.testing.assert_array_equal(t.grad, 2 * DATA)


def test_an_array_on_the_left_of_an_operator_gives_a_tensor():
    t = mg.tensor(DATA, requires_grad=True)
    for r in (np.ones(3) + t, np.ones(3) * t, np.ones((3, 2)).T @ t.T, np.float64(2.0) - t):
        assert isinstance(r, mg.Tensor) and r.requires_grad


def test_comparisons_and_tests_give_booleans_with_no_graph():
    t = mg.tensor(DATA, requires_grad=True)
    np.testing.assert_array_equal(np.isnan(t), np.isnan(DATA))
    np.testing.assert_array_equal(np.greater(t, 0), DATA > 0)
    assert np.all(t > -5) and np.allclose(t, DATA) and np.shape(t) == DATA.shape


def test_asarray_is_still_the_data():
    t = mg.tensor(DATA, requires_grad=True)
    assert np.asarray(t) is t.data
    np.testing.assert_array_equal(np.array(t, dtype=np.float32), DATA.astype(np.float32))


@pytest.mark.parametrize("call, words", [
    (lambda t: np.median(t), r"np\.median on a Tensor: minigrad has no op for it \(the closest "
                             r"is np\.mean\); np\.median\(t\.data\)"),
    (lambda t: np.cbrt(t), r"np\.cbrt on a Tensor: minigrad has no op for it"),
    (lambda t: np.add.reduce(t), r"np\.add\.reduce on a Tensor"),
    (lambda t: np.sum(t, dtype=np.float32), r"np\.sum on a Tensor runs mg\.sum\(x, axis, "
                                            r"keepdims\): .*'dtype'"),
    (lambda t: np.add(t, 1, out=np.zeros(3)), r"np\.add on a Tensor runs mg\.add\(a, b\)"),
])
def test_a_numpy_function_without_an_op_is_refused_in_one_line(call, words):
    t = mg.tensor(DATA, requires_grad=True)
    with pytest.raises(TypeError, match=words) as e:
        call(t)
    assert "\n" not in str(e.value)


def test_every_table_entry_is_a_numpy_callable_and_a_minigrad_op():
    for table in (UFUNCS, FUNCTIONS):
        for numpy_fn, op in table.items():
            assert callable(numpy_fn) and op.__module__.startswith("minigrad."), numpy_fn


def test_methods_stay_ops_with_a_graph():
    t = mg.tensor(DATA, requires_grad=True)
    for name in ("sum", "mean", "max", "min", "prod", "var", "std"):
        r = getattr(t, name)(axis=0)
        assert isinstance(r, mg.Tensor) and r.requires_grad, name
        np.testing.assert_allclose(r.data, getattr(np, name)(DATA, axis=0), rtol=0, atol=1e-15)
    t.sum().backward()
    np.testing.assert_array_equal(t.grad, np.ones_like(DATA))


def test_a_pytorch_name_minigrad_lacks_is_refused_with_its_numpy_twin():
    t = mg.tensor([[1.0, 2.0]], requires_grad=True)
    cases = [(t, "'Tensor' object", "unsqueeze", "expand_dims"),
             (t, "'Tensor' object", "view", "reshape"),
             (mg, "module 'minigrad'", "cat", "concatenate")]
    for where, owner, name, twin in cases:
        with pytest.raises(AttributeError) as info:
            getattr(where, name)
        assert str(info.value) == (f"{owner} has no attribute '{name}' (PyTorch's name; minigrad "
                                   f"follows NumPy: {twin})")
        assert hasattr(getattr(mg, twin), "__call__")                     # the twin exists
    with pytest.raises(AttributeError, match=r"^'Tensor' object has no attribute 'nothing'$"):
        t.nothing
    assert not hasattr(t, "unsqueeze") and not hasattr(mg, "cat")     # hasattr still works


def test_pytorchs_dim_and_keepdim_are_refused_in_one_line_naming_axis_and_keepdims():
    """A PyTorch habit, written as a learner would: every op with an ``axis`` refuses ``dim=`` and
    ``keepdim=`` naming NumPy's keyword, as a method, a minigrad function and F.softmax."""
    t = mg.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    calls = {"sum": lambda: t.sum(dim=1), "mean": lambda: t.mean(1, keepdim=True),
             "max": lambda: mg.max(t, dim=0), "logsumexp": lambda: t.logsumexp(dim=-1),
             "concatenate": lambda: mg.concatenate([t, t], dim=0),
             "softmax": lambda: F.softmax(t, dim=-1),
             "log_softmax": lambda: F.log_softmax(t, dim=1)}
    for name, call in calls.items():
        keyword, numpy = ("keepdim", "keepdims") if name == "mean" else ("dim", "axis")
        with pytest.raises(TypeError) as info:
            call()
        assert str(info.value) == (f"{name}() got PyTorch's keyword {keyword}=; minigrad follows "
                                   f"NumPy: {numpy}=")
    methods = [n for n, f in vars(mg.Tensor).items() if callable(f) and hasattr(f, "__wrapped__")]
    assert {"sum", "mean", "max", "var", "argmax", "squeeze", "cumsum"} <= set(methods)
    assert "exp" not in methods and "tanh" not in methods            # no axis: no wrapper
    # NumPy's spelling is untouched, and so are what a user reads: name, docstring, signature
    np.testing.assert_allclose(t.sum(axis=1, keepdims=True).data, [[3.0], [12.0]])
    np.testing.assert_allclose(F.softmax(t, axis=-1).data.sum(-1), [1.0, 1.0])
    assert mg.sum.__name__ == "sum" and mg.sum.__doc__ == mg.ops.sum.__doc__
    assert list(inspect.signature(t.sum).parameters)[:2] == ["axis", "keepdims"]
    with pytest.raises(TypeError, match="unexpected keyword argument 'axes'"):
        t.sum(axes=1)                                                   # another typo: Python's
