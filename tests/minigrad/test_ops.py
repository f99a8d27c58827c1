"""Every row of the shipped op table (``minigrad/gradcheck_cases.py``), drawn by Hypothesis.

The table gives each op ``Case(name, fn, ref, domain, example)``; what is test-specific is
added here: ``DOMAINS``, the Hypothesis strategy of each value domain, and ``DRAW``, for each
row, ``draw(data) -> (shapes, params)``, which draws the input shapes and the non-tensor
arguments (axes, indices, masks, targets). Three tests read the table: the forward against
NumPy, a float64 gradcheck (and gradgradcheck), and float32 end to end; one more checks each
row's shipped example, the instance ``python -m minigrad.gradcheck`` checks.
"""
from __future__ import annotations

import hypothesis.extra.numpy as hnp
import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings

import minigrad as mg
from minigrad import functional as F
from minigrad import gradcheck_cases
from minigrad.gradcheck import gradcheck, gradgradcheck
from minigrad.gradcheck_cases import CASES

DOMAINS = {
    "real": st.floats(-3, 3),
    "positive": st.floats(0.5, 3),
    "nonzero": st.floats(0.25, 3) | st.floats(-3, -0.25),
    "distinct": st.integers(-40, 40).map(lambda k: k / 4),  # drawn with unique=True
    "probability": st.floats(0.05, 0.95),
    "eighths": st.integers(-40, 40).map(lambda k: k / 4 + 1 / 8),  # never ties a "distinct"
    "above -1": st.floats(-0.75, 3),                        # log1p
}
SHAPE = hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=4)
SHAPE_1D = hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4)


# ---- drawing shapes and parameters -------------------------------------------------------------

def one(data, shape=SHAPE):
    return [data.draw(shape, label="shape")], {}


def two_broadcast(data):
    """Two shapes that broadcast together (Hypothesis' mutually_broadcastable_shapes)."""
    shapes = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=4),
                       label="shapes")
    return list(shapes.input_shapes), {}


def sub_shape(data, shape):
    """A shape that broadcasts to ``shape`` without enlarging it (leading axes dropped, some 1)."""
    k = data.draw(st.integers(0, len(shape)))
    return tuple(data.draw(st.sampled_from([1, n])) for n in shape[k:])


def axis_of(data, ndim, many=True):
    """None, one axis (possibly negative) or, with ``many``, a tuple of distinct axes."""
    if ndim == 0:
        return None
    choices = st.none() | st.integers(-ndim, ndim - 1)
    if many:
        choices |= st.lists(st.integers(0, ndim - 1), min_size=1, unique=True).map(tuple)
    return data.draw(choices, label="axis")


def reduction(data, shape=SHAPE):
    [s], _ = one(data, shape)
    return [s], {"axis": axis_of(data, len(s)), "keepdims": data.draw(st.booleans())}


def var_params(data):
    [s], params = reduction(data)
    axes = range(len(s)) if params["axis"] is None else np.atleast_1d(params["axis"])
    n = int(np.prod([s[a] for a in axes]))
    return [s], {**params, "ddof": data.draw(st.sampled_from([0, 1] if n > 1 else [0]), label="ddof")}


def cumsum_params(data):
    [s], _ = one(data)
    return [s], {"axis": data.draw(st.none() | st.integers(-max(len(s), 1), max(len(s), 1) - 1))}


def clip_params(data):
    """Bounds between the quarter grid of "distinct", so no input sits on a bound."""
    bounds = data.draw(st.sampled_from([(-1.1, 1.3), (None, 0.6), (-0.4, None)]), label="bounds")
    return one(data)[0], dict(zip(("lo", "hi"), bounds))


def matrix_k(data):
    s = data.draw(hnp.array_shapes(min_dims=2, max_dims=3, min_side=1, max_side=4), label="shape")
    return [s], {"k": data.draw(st.integers(-2, 2), label="k")}


def take_along_params(data):
    [s], _ = one(data, SHAPE_1D)
    axis = data.draw(st.none() | st.integers(-len(s), len(s) - 1), label="axis")
    n = int(np.prod(s)) if axis is None else s[axis]
    ishape = (data.draw(st.integers(0, 5)),) if axis is None else tuple(
        data.draw(st.integers(0, 5)) if d == axis % len(s) else data.draw(st.sampled_from([1, m]))
        for d, m in enumerate(s))
    idx = data.draw(hnp.arrays(np.intp, ishape, elements=st.integers(-n, n - 1)), label="indices")
    return [s], {"indices": idx, "axis": axis}


def pad_params(data):
    [s], _ = one(data)
    per_axis = [(i % 2, 1) for i in range(len(s))]  # NumPy refuses [] (a 0-d x): 1 or (0, 2) then
    widths = data.draw(st.sampled_from([1, (0, 2)] + ([per_axis] if s else [])))
    return [s], {"pad_width": widths, "constant_values": data.draw(st.sampled_from([0.0, -1.5]))}


def repeat_params(data):
    [s], _ = one(data)
    axis = None if not s else data.draw(st.none() | st.integers(-len(s), len(s) - 1))
    n = int(np.prod(s)) if axis is None else s[axis]
    reps = data.draw(st.integers(0, 3) | st.lists(st.integers(0, 3), min_size=n, max_size=n))
    return [s], {"repeats": reps, "axis": axis}


def tile_params(data):
    [s], _ = one(data)
    return [s], {"reps": data.draw(st.integers(1, 3) | st.lists(st.integers(1, 3), max_size=4))}


def tensordot_params(data):
    a = data.draw(hnp.array_shapes(min_dims=0, max_dims=3, max_side=3), label="a")
    n = data.draw(st.integers(0, len(a)), label="n")
    b = a[len(a) - n:] + data.draw(hnp.array_shapes(min_dims=0, max_dims=2, max_side=3), label="b free")
    if data.draw(st.booleans()) and n:  # the same pairing, as two lists in shuffled order
        order = data.draw(st.permutations(range(n)))
        axes = ([len(a) - n + i for i in order], list(order))
        return [a, b], {"axes": axes}
    return [a, b], {"axes": n}


EINSUMS = ["ij,jk->ik", "ij->ji", "ij->", "i,i->", "ij,j->i", "bij,bjk->bik", "i,j->ij",
           "ijk->kj", "ij,kj", "ijk,l->j", "i,ij,jk->k"]


def einsum_params(data):
    spec = data.draw(st.sampled_from(EINSUMS), label="subscripts")
    size = {c: data.draw(st.integers(1, 3)) for c in sorted(set(spec) - set(",->"))}
    return [tuple(size[c] for c in term) for term in spec.split("->")[0].split(",")], {"spec": spec}


def powers(exponents):
    def draw(data):
        return one(data)[0], {"p": data.draw(st.sampled_from(exponents), label="p")}
    return draw


def matmul_shapes(data):
    """1-D or n-D on each side; batch dims drawn to broadcast together."""
    batch = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=2, max_side=3))
    n, k, m = (data.draw(st.integers(1, 4)) for _ in range(3))
    a = (k,) if data.draw(st.booleans()) else batch.input_shapes[0] + (n, k)
    b = (k,) if data.draw(st.booleans()) else batch.input_shapes[1] + (k, m)
    return [a, b], {}


def reshape_params(data):
    [s], _ = one(data)
    new = data.draw(st.sampled_from([(-1,), s[::-1], s + (1,), (1,) + s]), label="new shape")
    return [s], {"shape": new}


def transpose_params(data):
    [s], _ = one(data)
    return [s], {"axes": data.draw(st.none() | st.permutations(range(len(s))).map(tuple))}


def swapaxes_params(data):
    [s], _ = one(data, SHAPE_1D)
    a = st.integers(-len(s), len(s) - 1)
    return [s], {"axis1": data.draw(a), "axis2": data.draw(a)}


def expand_dims_params(data):
    [s], _ = one(data)
    return [s], {"axis": data.draw(st.integers(-len(s) - 1, len(s)))}


def squeeze_params(data):
    s = data.draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=1, max_side=2))
    ones = [i for i, n in enumerate(s) if n == 1]
    return [s], {"axis": data.draw(st.sampled_from([None] + ones))}


def broadcast_params(data):
    [target], _ = one(data)
    return [sub_shape(data, target)], {"shape": target}


def concatenate_params(data):
    [s], _ = one(data, SHAPE_1D)
    axis = data.draw(st.integers(-len(s), len(s) - 1))
    sizes = data.draw(st.lists(st.integers(1, 3), min_size=1, max_size=3))
    shapes = [s[:axis % len(s)] + (k,) + s[axis % len(s) + 1:] for k in sizes]
    return shapes, {"axis": axis}


def stack_params(data):
    s = data.draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=1, max_side=3))
    count = data.draw(st.integers(1, 3))
    return [s] * count, {"axis": data.draw(st.integers(-len(s) - 1, len(s)))}


def split_params(data):
    [s], _ = one(data, SHAPE_1D)
    axis = data.draw(st.integers(-len(s), len(s) - 1))
    n = s[axis]
    sections = data.draw(st.sampled_from([k for k in range(1, n + 1) if n % k == 0])
                         | st.lists(st.integers(0, n), max_size=3).map(sorted))
    return [s], {"sections": sections, "axis": axis}


def index_params(kind):
    def draw(data):
        [s], _ = one(data, SHAPE_1D)
        if kind == "slices":
            index = tuple(data.draw(st.slices(n)) for n in s[:data.draw(st.integers(1, len(s)))])
        elif kind == "ints":     # an integer array along axis 0, repeats likely
            index = data.draw(hnp.arrays(np.intp, data.draw(hnp.array_shapes(max_dims=2, max_side=5)),
                                         elements=st.integers(-s[0], s[0] - 1)))
        elif kind == "mixed":    # an int, then a slice and an integer list where there are axes
            index = (data.draw(st.integers(-s[0], s[0] - 1)),) + tuple(
                data.draw(st.slices(n) | st.lists(st.integers(0, n - 1), min_size=1, max_size=4))
                for n in s[1:2])
        else:                    # a boolean mask over the leading axes
            index = data.draw(hnp.arrays(bool, s[:data.draw(st.integers(1, len(s)))]))
        return [s], {"index": index}
    return draw


def scatter_params(kind):
    """The index of a getitem case, and values shaped like what it picks."""
    pick = index_params(kind)

    def draw(data):
        [s], params = pick(data)
        return [np.zeros(s)[params["index"]].shape], {"index": params["index"], "shape": s}
    return draw


def where_params(data):
    [out], _ = one(data)
    cond = data.draw(hnp.arrays(bool, sub_shape(data, out)), label="condition")
    return [sub_shape(data, out), sub_shape(data, out)], {"condition": cond}


def masked_fill_params(data):
    [s], _ = one(data)
    mask = data.draw(hnp.arrays(bool, sub_shape(data, s)), label="mask")
    return [s], {"mask": mask, "value": data.draw(st.sampled_from([0.0, -1e9, 2.5]))}


def softmax_params(data):
    [s], _ = one(data, SHAPE_1D)
    mask = data.draw(st.none() | hnp.arrays(bool, sub_shape(data, s)), label="mask")
    return [s], {"axis": data.draw(st.integers(-len(s), len(s) - 1)), "mask": mask}


def cross_entropy_params(data):
    [s], _ = one(data, SHAPE_1D)
    C = s[-1]
    targets = data.draw(hnp.arrays(np.int64, s[:-1], elements=st.integers(0, C - 1)))
    return [s], {"targets": targets, "ignore_index": data.draw(st.none() | st.integers(0, C - 1)),
                 "reduction": data.draw(st.sampled_from(["mean", "sum"]))}


def smoothed_ce_params(data):
    [s], params = cross_entropy_params(data)
    return [s], {**params, "reduction": data.draw(st.sampled_from(["none", "mean", "sum"])),
                 "label_smoothing": data.draw(st.sampled_from([0.0, 0.1, 0.5]))}


def binary_params(data):
    [s], _ = one(data)
    t = data.draw(hnp.arrays(np.float64, s, elements=st.sampled_from([0.0, 1.0, 0.3])), label="targets")
    return [s], {"targets": t, "reduction": data.draw(st.sampled_from(["none", "mean", "sum"]))}


def linear_params(bias):
    def draw(data):
        batch = data.draw(hnp.array_shapes(min_dims=0, max_dims=2, max_side=3))
        i, o = data.draw(st.integers(1, 4)), data.draw(st.integers(1, 4))
        return [batch + (i,), (o, i)] + ([(o,)] if bias else []), {}
    return draw


def embedding_params(data):
    V, E = data.draw(st.integers(1, 5)), data.draw(st.integers(1, 3))
    ids = data.draw(hnp.arrays(np.int64, data.draw(hnp.array_shapes(min_dims=0, max_dims=2, max_side=4)),
                               elements=st.integers(0, V - 1)))
    return [(V, E)], {"ids": ids}


def layer_norm_params(data):
    [s], _ = one(data, SHAPE_1D)
    return [s, s[-1:], s[-1:]], {}


DRAW = {  # row name -> draw(data) -> (shapes, params); None: only its shipped example is checked
    "add": two_broadcast, "sub": two_broadcast, "mul": two_broadcast, "div": two_broadcast,
    "neg": one, "operators": two_broadcast, "scalars on either side": one,
    "pow int": powers([0, 1, 2, 3]), "pow real": powers([0.5, -1.0, -1.5, 2.5]), "rpow": one,
    "power": two_broadcast,
    "array ** tensor": lambda data: ([data.draw(st.sampled_from([(), (2,), (3, 2)]))], {}),
    "exp": one, "log": one, "sqrt": one, "tanh": one, "sigmoid": one, "relu": one, "abs": one,
    "abs(), +, flatten": one, "sum": reduction, "mean": reduction, "logsumexp": reduction,
    "matmul": matmul_shapes, "matmul 1-D @ batched": matmul_shapes, "@": matmul_shapes,
    "reshape": reshape_params, "transpose": transpose_params, ".T": one,
    "swapaxes": swapaxes_params, "expand_dims": expand_dims_params, "squeeze": squeeze_params,
    "broadcast_to": broadcast_params, "concatenate": concatenate_params, "stack": stack_params,
    "split": split_params,
    **{f"getitem {kind}": index_params(kind) for kind in ("slices", "ints", "mixed", "bool")},
    **{f"scatter {kind}": scatter_params(kind) for kind in ("slices", "ints", "mixed", "bool")},
    "where": where_params, "masked_fill": masked_fill_params,
    "softmax": softmax_params, "softmax mask": softmax_params,
    "log_softmax": softmax_params, "log_softmax mask": softmax_params,
    "sparsemax": None,  # kinks wherever x_i = τ: tests/minigrad/test_sparsemax.py
    "cross_entropy": cross_entropy_params, "cross_entropy none, smoothed": smoothed_ce_params,
    "linear": linear_params(True), "linear no bias": linear_params(False),
    "embedding": embedding_params, "dropout": one,
    "elu": lambda data: (one(data)[0], {"alpha": data.draw(st.sampled_from([1.0, 0.5]))}),
    "layer_norm": layer_norm_params, "gelu tanh": one, "gelu": one,
    "sign": one, "sin": one, "cos": one, "log1p": one, "expm1": one, "erf": one,
    "maximum": two_broadcast, "minimum": two_broadcast, "clip": clip_params,
    ".sign .sin .cos and others": one, "max": reduction, "min": reduction, "prod": reduction,
    "prod with zeros": reduction, "var": var_params, "std": var_params, "cumsum": cumsum_params,
    ".min .prod .var .std .cumsum": one, "outer": two_broadcast, "tensordot": tensordot_params,
    "einsum": einsum_params, "tril": matrix_k, "triu": matrix_k,
    "take_along_axis": take_along_params, "pad": pad_params, "repeat": repeat_params,
    "tile": tile_params, "softplus": one,
    "leaky_relu": lambda data: (one(data)[0], {
        "negative_slope": data.draw(st.sampled_from([0.01, 0.2]))}),
    "silu": one,
    "nll_loss of log_softmax": lambda data: (lambda s, p: (s, {**p, "reduction": data.draw(
        st.sampled_from(["none", "mean", "sum"]))}))(*cross_entropy_params(data)),
    "binary_cross_entropy": binary_params, "bce with logits": binary_params,
}
DRAWN = [c for c in CASES if DRAW[c.name] is not None]


def test_every_row_of_the_table_has_a_draw_and_every_domain_a_strategy():
    assert sorted(DRAW) == sorted(c.name for c in CASES)
    assert sorted(DOMAINS) == sorted(gradcheck_cases.DOMAINS)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_each_rows_shipped_example_matches_numpy(case):
    """The instance ``python -m minigrad.gradcheck`` checks: the forward against NumPy."""
    arrays, params = gradcheck_cases.inputs(case, np.random.default_rng(0)), case.example[1]
    out = case.fn(*[mg.tensor(a) for a in arrays], **params)
    expected = (case.ref or case.fn)(*arrays, **params)
    assert out.shape == np.shape(expected)
    np.testing.assert_allclose(out.data, expected, rtol=1e-10, atol=1e-12)


def draw_inputs(case, data, dtype=np.float64):
    shapes, params = DRAW[case.name](data)
    domains = [case.domain] * len(shapes) if isinstance(case.domain, str) else case.domain
    arrays = [data.draw(hnp.arrays(np.float64, s, elements=DOMAINS[d], unique=d == "distinct"),
                        label=f"input {i}").astype(dtype)
              for i, (s, d) in enumerate(zip(shapes, domains))]
    return arrays, params


@pytest.mark.parametrize("case", DRAWN, ids=[c.name for c in DRAWN])
@given(data=st.data())
def test_forward_matches_numpy(case, data):
    arrays, params = draw_inputs(case, data)
    out = case.fn(*[mg.tensor(a) for a in arrays], **params)
    expected = (case.ref or case.fn)(*arrays, **params)
    assert out.dtype == np.float64
    assert out.shape == np.shape(expected)
    np.testing.assert_allclose(out.data, expected, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("case", DRAWN, ids=[c.name for c in DRAWN])
@given(data=st.data())
def test_gradcheck(case, data):
    arrays, params = draw_inputs(case, data)
    assert gradcheck(lambda *xs: case.fn(*xs, **params), arrays)


@pytest.mark.parametrize("case", DRAWN, ids=[c.name for c in DRAWN])
@settings(max_examples=10)
@given(data=st.data())
def test_gradgradcheck(case, data):
    """Every op is twice differentiable: its VJP, run on Tensors under create_graph, has the
    derivative that central differences of its first-order gradient give."""
    arrays, params = draw_inputs(case, data)
    assert gradgradcheck(lambda *xs: case.fn(*xs, **params), arrays)


@pytest.mark.parametrize("case", DRAWN, ids=[c.name for c in DRAWN])
@given(data=st.data())
def test_float32_end_to_end(case, data):
    """Outputs and gradients stay float32; Python scalars inside the op adopt float32."""
    arrays, params = draw_inputs(case, data, np.float32)
    xs = [mg.tensor(a, requires_grad=True) for a in arrays]
    out = case.fn(*xs, **params)
    assert out.dtype == np.float32
    out.backward(np.ones(out.shape, np.float32))
    for x in xs:
        assert x.grad.dtype == np.float32 and x.grad.shape == x.shape


# ---- the dtype policy (tensor.py's docstring) -----------------------------------------------------------

F32 = np.float32


def test_an_int_or_bool_tensor_takes_the_float_tensors_dtype():
    x = mg.tensor(np.ones(3, F32), requires_grad=True)
    ints, bools = mg.tensor(np.arange(3)), mg.tensor(np.array([True, False, True]))
    for out in (x * ints, ints * x, x + bools, bools - x, x / (ints + 1), ints @ x,
                mg.where(np.ones(3, bool), ints, x)):
        assert out.dtype == F32
    (x * ints).sum().backward()
    assert x.grad.dtype == F32
    np.testing.assert_array_equal(x.grad, [0, 1, 2])
    assert (mg.tensor(np.ones(2, F32)) * mg.tensor(np.ones(2))).dtype == np.float64  # NumPy's rule


def test_plain_arrays_in_concatenate_and_stack_take_the_first_float_tensors_dtype():
    x = mg.tensor(np.ones((2, 3), F32), requires_grad=True)
    plain = np.zeros((2, 3))                            # float64
    for out in (mg.concatenate([plain, x]), mg.stack([plain, x, np.arange(6).reshape(2, 3)], axis=1),
                mg.concatenate([mg.tensor(np.arange(6).reshape(2, 3)), x], axis=1)):
        assert out.dtype == F32
    mg.stack([plain, x]).sum().backward()
    assert x.grad.dtype == F32


def test_linear_casts_a_plain_input_to_the_weights_dtype():
    w = mg.tensor(np.ones((4, 3), F32), requires_grad=True)
    b = np.zeros(4)                                     # a plain float64 bias too
    out = F.linear(np.ones((2, 3)), w, b)
    assert out.dtype == F32
    out.sum().backward()
    assert w.grad.dtype == F32


# ---- scalar ** tensor ---------------------------------------------------------------------------------

def test_a_scalar_base_to_a_tensor_power():
    x = mg.tensor([0.0, 1.0, 2.0], requires_grad=True)
    out = 0.0 ** x                                      # was exp(x log 0) = NaN at x = 0
    np.testing.assert_array_equal(out.data, [1.0, 0.0, 0.0])
    out.backward(np.ones(3))
    np.testing.assert_array_equal(x.grad, [0, 0, 0])    # no NaN from 0 · log 0, no −inf at 0
    seed = mg.tensor(np.ones(3), requires_grad=True)
    x.grad = None
    (0.0 ** x).backward(seed, create_graph=True)       # the second derivative w.r.t. the seed
    x.grad.sum().backward()
    np.testing.assert_array_equal(seed.grad, [0, 0, 0])  # was NaN; 0 as HIPS autograd
    y = mg.tensor(np.array([0.5, -1.0], F32), requires_grad=True)
    out = 3 ** y
    assert out.dtype == F32
    np.testing.assert_allclose(out.data, 3.0 ** y.data, rtol=1e-6)
    out.backward(np.ones(2, F32))
    np.testing.assert_allclose(y.grad, 3.0 ** y.data * np.log(3.0), rtol=1e-6)
    assert gradcheck(lambda t: np.float64(0.7) ** t, [np.array([-1.0, 0.3, 2.0])])


# ---- 0-d results are arrays -----------------------------------------------------------------------------

def test_0d_results_and_gradients_are_ndarrays():
    p = mg.tensor(3.0, requires_grad=True)
    for out in (p * p * 10, p + 1, mg.sum(mg.tensor([1.0, 2.0])), mg.tensor([1.0, 2.0])[0]):
        assert type(out.data) is np.ndarray and out.shape == ()
    (p * p * 10).backward()
    assert type(p.grad) is np.ndarray and p.grad == 60.0
    (p * p).backward()                                  # accumulating keeps an ndarray
    assert type(p.grad) is np.ndarray and p.grad == 66.0
    assert type(mg.grad(p * p, p)) is np.ndarray


# ---- empty axes ---------------------------------------------------------------------------------

def test_split_of_a_zero_length_axis_gives_k_empty_pieces_as_numpy_does():
    x = mg.tensor(np.zeros((2, 0)), requires_grad=True)
    pieces = mg.split(x, 3, axis=1)
    assert [p.shape for p in pieces] == [a.shape for a in np.split(x.data, 3, axis=1)] == [(2, 0)] * 3
    mg.concatenate(pieces, axis=1).sum().backward()
    assert x.grad.shape == (2, 0)


def test_python_number_protocols_behave_as_numpy():
    loss = mg.tensor(0.123456, requires_grad=True)
    assert float(loss) == 0.123456 and f"{loss:.3f}" == "0.123" and int(mg.tensor(3.7)) == 3
    assert f"{loss}" == repr(loss)
    with pytest.raises(TypeError):
        float(mg.tensor([1.0, 2.0]))                        # NumPy's own error
    with pytest.raises(TypeError):
        f"{mg.tensor([1.0, 2.0]):.3f}"
    t = mg.tensor([[1.0, -2.0], [3.0, 0.5]], requires_grad=True)
    assert t.tolist() == [[1.0, -2.0], [3.0, 0.5]] and len(t) == 2
    assert t.flatten().shape == (4,) and t.ravel().shape == (4,)
    abs(-t).sum().backward()
    np.testing.assert_array_equal(t.grad, np.sign(t.data))
    assert (+t) is not t and np.array_equal((+t).data, t.data)
    with pytest.raises(TypeError, match=r"^tensor: t\[index\] = value is not recorded.*mg.where"):
        t[0] = 5.0


def test_abs_has_zero_gradient_at_its_kink_as_pytorch():
    x = mg.tensor([-1.0, 0.0, 2.0], requires_grad=True)
    mg.abs(x).sum().backward()
    np.testing.assert_array_equal(x.grad, [-1.0, 0.0, 1.0])


# ---- kinks and ties, as PyTorch --------------------------------------------------------------

def test_maximum_and_minimum_split_a_tie_in_half_as_pytorch():
    a = mg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = mg.tensor([2.0, 2.0, 1.0], requires_grad=True)
    (mg.maximum(a, b) + 10 * mg.minimum(a, b)).sum().backward()
    np.testing.assert_array_equal(a.grad, [10, 5.5, 1])
    np.testing.assert_array_equal(b.grad, [1, 5.5, 10])


def test_clip_passes_the_gradient_at_its_bounds_as_pytorch():
    x = mg.tensor([-2.0, -1.0, 0.0, 1.0, 2.0], requires_grad=True)
    mg.clip(x, -1.0, 1.0).sum().backward()
    np.testing.assert_array_equal(x.grad, [0, 1, 1, 1, 0])


def test_clip_takes_bounds_that_broadcast_as_numpy():
    x = mg.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    lo = np.array([0.5, 1.5, 2.5])                                     # (3,) against (2, 3)
    out = mg.clip(x, lo, 4.0)
    np.testing.assert_array_equal(out.data, np.clip(x.data, lo, 4.0))
    out.sum().backward()
    np.testing.assert_array_equal(x.grad, [[0, 0, 0], [1, 1, 0]])     # inside [lo, hi] (bounds too)


def test_split_refuses_indices_that_are_not_ints_naming_the_op():
    for bad in ([1.5], "2", None):
        with pytest.raises(TypeError, match=r"^split: indices_or_sections must be an int or ints"):
            mg.split(mg.tensor(np.arange(4.0)), bad)


def test_sign_has_zero_gradient_and_int_inputs_follow_numpy():
    x = mg.tensor([-2.0, 0.0, 3.0], requires_grad=True)
    (mg.sign(x) * 3 + x).sum().backward()
    np.testing.assert_array_equal(x.grad, [1, 1, 1])
    ints = mg.tensor([-2, 0, 3])
    for op, ref in ((mg.sign, np.sign), (mg.cumsum, np.cumsum), (mg.prod, np.prod), (mg.min, np.min),
                    (mg.sin, np.sin), (mg.var, np.var), (lambda t: mg.clip(t, -1, 1),
                                                         lambda a: np.clip(a, -1, 1))):
        out = op(ints)
        assert out.dtype == ref(ints.data).dtype and not out.requires_grad
        np.testing.assert_array_equal(out.data, ref(ints.data))


def test_prod_with_zeros_has_the_product_of_the_others_as_gradient():
    x = mg.tensor([[2.0, 0.0, 3.0], [0.0, 0.0, 5.0], [1.0, 2.0, 4.0]], requires_grad=True)
    mg.prod(x, axis=1).sum().backward()
    np.testing.assert_array_equal(x.grad, [[0, 6, 0], [0, 0, 0], [8, 4, 2]])
    assert gradgradcheck(lambda t: mg.prod(t, axis=-1), [np.array([[2.0, 0.0, 3.0], [0.0, 0.0, 5.0]])])


def test_std_of_equal_values_has_zero_gradient_as_pytorch():
    x = mg.tensor([2.0, 2.0, 2.0], requires_grad=True)
    mg.std(x).backward()
    np.testing.assert_array_equal(x.grad, [0, 0, 0])


@given(data=st.data())
def test_argmax_and_argmin_match_numpy_with_ties(data):
    x = data.draw(hnp.arrays(np.float64, SHAPE_1D, elements=st.integers(-2, 2).map(float)))
    axis = data.draw(st.none() | st.integers(-x.ndim, x.ndim - 1))
    keepdims = data.draw(st.booleans())
    t = mg.tensor(x, requires_grad=True)
    for out, ref in ((mg.argmax(t, axis, keepdims), np.argmax(x, axis, keepdims=keepdims)),
                     (t.argmin(axis=axis, keepdims=keepdims), np.argmin(x, axis, keepdims=keepdims))):
        assert out.dtype == ref.dtype and not out.requires_grad  # ties: the first index
        np.testing.assert_array_equal(out.data, ref)


def test_a_0d_tensor_takes_axis_0_and_minus_1_where_numpy_does():
    x = mg.tensor(2.0, requires_grad=True)
    for axis in (0, -1):
        for out, ref in ((x.sum(axis=axis), np.sum(x.data, axis=axis)),
                         (mg.max(x, axis), np.max(x.data, axis=axis)),
                         (mg.min(x, axis), np.min(x.data, axis=axis)),
                         (mg.prod(x, axis), np.prod(x.data, axis=axis)),
                         (mg.cumsum(x, axis), np.cumsum(x.data, axis=axis)),
                         (mg.argmax(x, axis), np.argmax(x.data, axis=axis)),
                         (mg.squeeze(x, axis), np.squeeze(x.data, axis=axis)),
                         (mg.logsumexp(x, axis), x.data),
                         (F.softmax(x, axis), 1.0), (F.log_softmax(x, axis), 0.0),
                         (x.mean(axis=axis), 2.0), (mg.var(x, axis), 0.0),  # as torch's dim=
                         (mg.std(x, axis), 0.0)):
            assert out.shape == np.shape(ref)
            np.testing.assert_allclose(out.data, ref)
    assert gradgradcheck(lambda t: F.softmax(t, 0) * t + t.sum(axis=-1) * mg.logsumexp(t, 0),
                         [np.array(0.3)])
    for bad in (lambda: x.sum(axis=(0,)), lambda: x.sum(axis=1), lambda: mg.squeeze(x, 1)):
        with pytest.raises(ValueError, match="out of range"):
            bad()


def test_squeeze_of_a_non_unit_axis_raises_as_numpy():
    with pytest.raises(ValueError, match="does not have size 1"):
        mg.squeeze(mg.tensor(np.zeros((2, 3))), 0)
    with pytest.raises(ValueError):
        np.squeeze(np.zeros((2, 3)), 0)


def test_activations_at_their_kinks_and_extremes_as_pytorch():
    x = mg.tensor([-1000.0, -1.0, 0.0, 1.0, 1000.0], requires_grad=True)
    with np.errstate(all="raise", under="ignore"):
        out = F.softplus(x) + F.leaky_relu(x, 0.1) + F.elu(x, 0.5) + F.gelu(x)
        out.backward(np.ones(5))
    assert np.all(np.isfinite(out.data)) and np.all(np.isfinite(x.grad))
    # at 0: softplus' σ(0) = ½, leaky_relu's slope 0.1, elu's α = 0.5, gelu's Φ(0) = ½
    assert x.grad[2] == 0.5 + 0.1 + 0.5 + 0.5
    np.testing.assert_allclose(F.softplus(x).data[[0, 4]], [0.0, 1000.0])


def test_pow_with_a_tensor_exponent_is_finite_at_a_zero_base_as_pytorch():
    x = mg.tensor([0.0, 0.0, 2.0, 0.0], requires_grad=True)
    y = mg.tensor([2.0, 0.0, 0.0, 0.5], requires_grad=True)
    out = mg.power(x, y)
    np.testing.assert_array_equal(out.data, [0.0, 1.0, 1.0, 0.0])
    with np.errstate(divide="ignore"):                                   # 0^−0.5 = ∞, expected
        out.backward(np.ones(4), create_graph=True)
    np.testing.assert_array_equal(x.grad.data, [0.0, 0.0, 0.0, np.inf])  # 0.5 · 0^−0.5 = ∞
    np.testing.assert_array_equal(y.grad.data, [0.0, 0.0, np.log(2.0), 0.0])
    assert gradgradcheck(mg.power, [np.array([0.7, 2.0, 1.5]), np.array([0.0, -1.5, 2.0])])


def test_binary_cross_entropy_clamps_its_logs_at_minus_100_as_pytorch():
    p = mg.tensor([0.0, 1.0, 0.5], requires_grad=True)
    loss = F.binary_cross_entropy(p, np.array([1.0, 0.0, 1.0]), reduction="none")
    np.testing.assert_allclose(loss.data, [100.0, 100.0, np.log(2.0)])
    loss.sum().backward()
    assert np.all(np.isfinite(p.grad))                      # (p − t) / max(p(1 − p), 1e-12)
    z = mg.tensor([-1000.0, 0.0, 1000.0], requires_grad=True)
    with np.errstate(all="raise", under="ignore"):
        loss = F.binary_cross_entropy_with_logits(z, np.array([1.0, 1.0, 0.0]), reduction="sum")
        loss.backward()
    np.testing.assert_allclose(loss.data, 2000.0 + np.log(2.0))
    np.testing.assert_allclose(z.grad, [-1.0, -0.5, 1.0])


def test_nll_loss_ignores_pytorchs_default_index():
    logp = mg.tensor(np.log(np.full((3, 4), 0.25)), requires_grad=True)
    loss = F.nll_loss(logp, np.array([1, -100, 2]))
    np.testing.assert_allclose(loss.data, np.log(4.0))
    loss.backward()
    np.testing.assert_array_equal(logp.grad, [[0, -0.5, 0, 0], [0] * 4, [0, 0, -0.5, 0]])
