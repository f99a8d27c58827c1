"""NumPy's functions take a Tensor as its data (no graph), as they take any array-like:
``np.sum(t)`` equals ``np.sum(t.data)``; the Tensor methods stay ops with a graph."""
import numpy as np
import pytest

import minigrad as mg

DATA = np.array([[1.5, -2.0, 3.25], [0.5, 4.0, -1.0]])
FUNCTIONS = [np.sum, np.mean, np.max, np.min, np.prod, np.std, np.var, np.amax, np.amin,
             np.all, np.any, np.median, np.average, np.argmax, np.cumsum]


@pytest.mark.parametrize("fn", FUNCTIONS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("kwargs", [{}, {"axis": 0}, {"axis": 1}])
def test_numpy_function_reads_the_tensor_as_its_data(fn, kwargs):
    t = mg.tensor(DATA, requires_grad=True)
    got = fn(t, **kwargs)
    assert not isinstance(got, mg.Tensor)
    np.testing.assert_array_equal(got, fn(DATA, **kwargs))


@pytest.mark.parametrize("fn", [np.sum, np.mean, np.max, np.prod, np.var],
                         ids=lambda f: f.__name__)
def test_numpy_keywords_are_numpy_s(fn):
    t = mg.tensor(DATA, dtype=np.float32)
    np.testing.assert_array_equal(fn(t, axis=1, keepdims=True), fn(DATA.astype(np.float32), axis=1, keepdims=True))
    out = np.zeros(3, dtype=np.float32)
    assert fn(t, axis=0, out=out) is out
    np.testing.assert_array_equal(out, fn(DATA.astype(np.float32), axis=0))


def test_numpy_dtype_and_ddof():
    t = mg.tensor(DATA)
    assert np.sum(t, dtype=np.float32).dtype == np.float32
    assert np.mean(t, dtype=np.float32).dtype == np.float32
    assert np.std(t, ddof=1) == np.std(DATA, ddof=1)
    assert np.sum(t, where=DATA > 0) == np.sum(DATA, where=DATA > 0)


def test_methods_stay_ops_with_a_graph():
    t = mg.tensor(DATA, requires_grad=True)
    for name in ("sum", "mean", "max", "min", "prod", "var", "std"):
        r = getattr(t, name)(axis=0)
        assert isinstance(r, mg.Tensor) and r.requires_grad, name
        np.testing.assert_allclose(r.data, getattr(np, name)(DATA, axis=0), rtol=0, atol=1e-15)
    t.sum().backward()
    np.testing.assert_array_equal(t.grad, np.ones_like(DATA))


def test_method_dtype_without_out_is_refused():
    t = mg.tensor(DATA, requires_grad=True)
    with pytest.raises(TypeError, match=r"Tensor\.mean: dtype= is not supported .*astype"):
        t.mean(dtype=np.float32)


def test_numpy_result_has_no_graph():
    t = mg.tensor(DATA, requires_grad=True)
    total = np.sum(t)
    assert isinstance(total, np.floating) and total == DATA.sum()
    assert t.grad is None
