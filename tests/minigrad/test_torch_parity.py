"""minigrad against PyTorch, in float64 to 1e-10: the values and first and second derivatives
of two dozen rows of the shipped op table (``minigrad/gradcheck_cases.py``) and of three
compositions, ``cross_entropy`` (``ignore_index``, ``label_smoothing``, every reduction) and
``layer_norm``. (The cells and attention: ``tests/models/test_torch_parity_models.py``.)

Their own run: ``pip install -e '.[parity]' && python -m pytest -q -m parity`` (PyTorch 2.13.0,
the CPU build). Without torch they are skipped, with the reason and the command; under CI=true
(``.ci/run``) a missing torch FAILS them instead.

First derivatives are vector-Jacobian products uᵀJ with a random u; second derivatives are
vᵀ∂(uᵀJ)/∂x, the gradient of the first one's dot product with a random v, computed by
``minigrad.grad(..., create_graph=True)`` and ``torch.autograd.grad(..., create_graph=True)``.
"""

import numpy as np
import pytest

import minigrad as mg
from minigrad import functional as F
from minigrad.gradcheck_cases import CASES, inputs
from minigrad.nn_ops import layer_norm

from torch_parity_guard import TOL, require_torch, torch


@pytest.fixture(autouse=True)
def _torch_present():
    require_torch()


def t64(a, requires_grad=True):
    return torch.tensor(np.asarray(a), dtype=torch.float64, requires_grad=requires_grad)


def close(mine, theirs, what: str) -> None:
    mine = mine.data if isinstance(mine, mg.Tensor) else np.asarray(mine)
    theirs = theirs.detach().numpy() if torch.is_tensor(theirs) else np.asarray(theirs)
    assert mine.shape == theirs.shape, f"{what}: shapes {mine.shape} vs {theirs.shape}"
    np.testing.assert_allclose(mine, theirs, err_msg=what, **TOL)


def compare(mg_fn, torch_fn, arrays, name: str, second: bool = True, seed: int = 0) -> None:
    """Values, uᵀJ and vᵀ∂(uᵀJ)/∂x of ``fn(*arrays)`` for every input, minigrad vs torch."""
    rng = np.random.default_rng(seed)
    xs = [mg.tensor(a, requires_grad=True) for a in arrays]
    ts = [t64(a) for a in arrays]
    out, tout = mg_fn(*xs), torch_fn(*ts)
    close(out, tout, f"{name}: value")
    u = rng.standard_normal(out.shape)
    gs = mg.grad(out, xs, grad_outputs=u, create_graph=second)
    tgs = torch.autograd.grad(tout, ts, grad_outputs=torch.from_numpy(u), create_graph=second)
    for i, (g, tg) in enumerate(zip(gs, tgs)):
        close(g, tg, f"{name}: first derivative, input {i}")
    if not second:
        return
    vs = [rng.standard_normal(a.shape) for a in arrays]
    dot = sum((g * v).sum() for g, v in zip(gs, vs))
    tdot = sum((tg * torch.from_numpy(v)).sum() for tg, v in zip(tgs, vs))
    hs = mg.grad(dot, xs) if dot.requires_grad else [np.zeros(a.shape) for a in arrays]
    ths = torch.autograd.grad(tdot, ts, allow_unused=True) if tdot.requires_grad else [None] * len(ts)
    for i, (h, th) in enumerate(zip(hs, ths)):
        close(h, np.zeros(arrays[i].shape) if th is None else th, f"{name}: second derivative, input {i}")


# PyTorch's op for rows of the shipped table (minigrad/gradcheck_cases.py), called as the row's
# fn is: on tensors, with the row's example params; inputs: its example shapes and domains.
TORCH = {
    "add": lambda a, b: a + b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
    "power": lambda a, b: a ** b,
    "matmul": lambda a, b: a @ b,
    # looked up when called: without torch the module still imports, and its tests skip
    **{name: (lambda name: lambda a: getattr(torch, name)(a))(name)
       for name in ("exp", "log", "sqrt", "tanh", "sigmoid", "sin", "erf", "log1p")},
    "sum": lambda a, axis, keepdims: a.sum(dim=axis, keepdim=keepdims),
    "mean": lambda a, axis, keepdims: a.mean(dim=axis, keepdim=keepdims),
    "var": lambda a, axis, keepdims, ddof: a.var(dim=axis, correction=ddof, keepdim=keepdims),
    "prod": lambda a, axis, keepdims: a.prod(dim=axis, keepdim=keepdims),
    "logsumexp": lambda a, axis, keepdims: a.logsumexp(dim=axis, keepdim=keepdims),
    "softmax": lambda a, axis, mask: torch.softmax(a, dim=axis),
    "log_softmax": lambda a, axis, mask: torch.log_softmax(a, dim=axis),
    "gelu": lambda a: torch.nn.functional.gelu(a),
    "gelu tanh": lambda a: torch.nn.functional.gelu(a, approximate="tanh"),
    "softplus": lambda a: torch.nn.functional.softplus(a),
}
ROWS = [c for c in CASES if c.name in TORCH]

ANY = (-2.0, 2.0)
# test-specific compositions: name, minigrad, torch, input shapes, domain
COMPOSITES = [
    ("transpose, getitem, concatenate", lambda a, b: mg.concatenate([a.T[1:], b], axis=0),
     lambda a, b: torch.cat([a.T[1:], b], dim=0), [(3, 4), (2, 3)], ANY),
    ("where", lambda a, b: mg.where(np.arange(12).reshape(3, 4) % 3 == 0, a, b) * a,
     lambda a, b: torch.where(torch.from_numpy(np.arange(12).reshape(3, 4) % 3 == 0), a, b) * a,
     [(3, 4), (3, 4)], ANY),
    ("composite: tanh(a @ b) * sigmoid(a @ b)", lambda a, b: (a @ b).tanh() * (a @ b).sigmoid(),
     lambda a, b: (a @ b).tanh() * (a @ b).sigmoid(), [(3, 4), (4, 2)], ANY),
]


def test_every_torch_row_is_in_the_shipped_table():
    assert len(ROWS) == len(TORCH)


@pytest.mark.parametrize("case", ROWS, ids=[c.name for c in ROWS])
def test_op_values_and_first_and_second_derivatives(case):
    arrays = inputs(case, np.random.default_rng(sum(map(ord, case.name))))  # the same every run
    params = case.example[1]
    compare(lambda *xs: case.fn(*xs, **params), lambda *ts: TORCH[case.name](*ts, **params),
            arrays, case.name)


@pytest.mark.parametrize("name, mg_fn, torch_fn, shapes, domain", COMPOSITES,
                         ids=[o[0] for o in COMPOSITES])
def test_compositions_values_and_first_and_second_derivatives(name, mg_fn, torch_fn, shapes, domain):
    rng = np.random.default_rng(sum(map(ord, name)))
    compare(mg_fn, torch_fn, [rng.uniform(*domain, size=s) for s in shapes], name)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("ignore_index", [None, 2, -100])
@pytest.mark.parametrize("label_smoothing", [0.0, 0.1])
def test_cross_entropy(reduction, ignore_index, label_smoothing):
    rng = np.random.default_rng(1)
    logits = rng.normal(size=(7, 5))
    targets = rng.integers(0, 5, 7)
    if ignore_index is not None:
        targets[[1, 4]] = ignore_index                        # two rows ignored
    if ignore_index == 2:
        targets[0] = 3
    kw = {} if ignore_index is None else {"ignore_index": ignore_index}
    compare(lambda x: F.cross_entropy(x, targets, reduction=reduction,
                                      label_smoothing=label_smoothing, **kw),
            lambda x: torch.nn.functional.cross_entropy(
                x, torch.from_numpy(targets), reduction=reduction,
                label_smoothing=label_smoothing, **kw),
            [logits], f"cross_entropy({reduction}, ignore={ignore_index}, eps={label_smoothing})")


def test_cross_entropy_over_a_sequence():
    """minigrad's classes are the last axis (B, T, C); PyTorch's the second (B, C, T)."""
    rng = np.random.default_rng(2)
    logits, targets = rng.normal(size=(2, 3, 4)), rng.integers(0, 4, (2, 3))
    targets[1, 2] = 0
    compare(lambda x: F.cross_entropy(x, targets, ignore_index=0, label_smoothing=0.2),
            lambda x: torch.nn.functional.cross_entropy(x.permute(0, 2, 1), torch.from_numpy(targets),
                                                        ignore_index=0, label_smoothing=0.2),
            [logits], "cross_entropy (B, T, C)")


@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm(affine):
    rng = np.random.default_rng(3)
    arrays = [rng.normal(size=(2, 3, 6))] + ([rng.normal(size=6), rng.normal(size=6)] if affine else [])
    compare(lambda x, *wb: layer_norm(x, *wb, eps=1e-5),
            lambda x, *wb: torch.nn.functional.layer_norm(x, (6,), *wb, eps=1e-5),
            arrays, f"layer_norm (affine={affine})")


def test_the_comparison_can_fail():
    """Each check can fail: a wrong value; the right value with a wrong slope; the right value
    and slope with a wrong curvature (torch's a² whose second factor is a constant)."""
    x = np.random.default_rng(4).normal(size=(2, 3))
    with pytest.raises(AssertionError, match="value"):
        compare(mg.sigmoid, lambda a: torch.tanh(a), [x], "wrong")
    with pytest.raises(AssertionError, match="first derivative, input 0"):
        compare(lambda a: a * 2.0, lambda a: a.detach() * 2.0 + 0.0 * a, [x], "flat")
    with pytest.raises(AssertionError, match="second derivative, input 0"):
        compare(lambda a: a * a, lambda a: 2.0 * a * a.detach() - a.detach() ** 2, [x], "straight")
