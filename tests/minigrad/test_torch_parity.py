"""minigrad against PyTorch, in float64 to 1e-10: a dozen ops' values and first and second
derivatives, ``cross_entropy`` (``ignore_index``, ``label_smoothing``, every reduction) and
``layer_norm``. (The cells and attention: ``tests/models/test_torch_parity_models.py``.)

PyTorch comes with the test extras (``pip install -e '.[test]'``, CPU wheel 2.13.0) on Python
3.11 / x86_64; there, a missing torch FAILS these tests rather than skipping them. Elsewhere
they are skipped, with the reason and the command.

First derivatives are vector-Jacobian products uᵀJ with a random u; second derivatives are
vᵀ∂(uᵀJ)/∂x, the gradient of the first one's dot product with a random v, computed by
``minigrad.grad(..., create_graph=True)`` and ``torch.autograd.grad(..., create_graph=True)``.
"""

import numpy as np
import pytest

import minigrad as mg
from minigrad import functional as F
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


POS, ANY, UNIT = (0.5, 2.0), (-2.0, 2.0), (-0.9, 0.9)
# name, minigrad, torch, input shapes, domain (kept away from kinks and ties)
OPS = [
    ("add (broadcast)", lambda a, b: a + b, lambda a, b: a + b, [(3, 4), (4,)], ANY),
    ("mul (broadcast)", lambda a, b: a * b, lambda a, b: a * b, [(3, 1), (1, 4)], ANY),
    ("div", lambda a, b: a / b, lambda a, b: a / b, [(3, 4), (3, 4)], POS),
    ("pow", lambda a, b: a ** b, lambda a, b: a ** b, [(3, 4), (3, 4)], POS),
    ("matmul (batched)", lambda a, b: a @ b, lambda a, b: a @ b, [(2, 3, 4), (4, 5)], ANY),
    ("exp", mg.exp, lambda a: torch.exp(a), [(3, 4)], ANY),
    ("log", mg.log, lambda a: torch.log(a), [(3, 4)], POS),
    ("sqrt", mg.sqrt, lambda a: torch.sqrt(a), [(3, 4)], POS),
    ("tanh", mg.tanh, lambda a: torch.tanh(a), [(3, 4)], ANY),
    ("sigmoid", mg.sigmoid, lambda a: torch.sigmoid(a), [(3, 4)], ANY),
    ("sin", mg.sin, lambda a: torch.sin(a), [(3, 4)], ANY),
    ("erf", mg.erf, lambda a: torch.erf(a), [(3, 4)], ANY),
    ("log1p", mg.log1p, lambda a: torch.log1p(a), [(3, 4)], UNIT),
    ("sum (axis)", lambda a: a.sum(axis=1), lambda a: a.sum(dim=1), [(3, 4)], ANY),
    ("mean (keepdims)", lambda a: a.mean(axis=0, keepdims=True),
     lambda a: a.mean(dim=0, keepdim=True), [(3, 4)], ANY),
    ("var (ddof=1)", lambda a: a.var(axis=1, ddof=1), lambda a: a.var(dim=1, correction=1),
     [(3, 4)], ANY),
    ("prod", lambda a: a.prod(axis=1), lambda a: a.prod(dim=1), [(3, 4)], POS),
    ("logsumexp", lambda a: a.logsumexp(axis=-1), lambda a: a.logsumexp(dim=-1), [(3, 4)], ANY),
    ("softmax", lambda a: F.softmax(a, axis=-1), lambda a: torch.softmax(a, dim=-1), [(3, 4)], ANY),
    ("log_softmax", lambda a: F.log_softmax(a, axis=-1), lambda a: torch.log_softmax(a, dim=-1),
     [(3, 4)], ANY),
    ("gelu", lambda a: F.gelu(a), lambda a: torch.nn.functional.gelu(a), [(3, 4)], ANY),
    ("gelu (tanh)", lambda a: F.gelu(a, approximate="tanh"),
     lambda a: torch.nn.functional.gelu(a, approximate="tanh"), [(3, 4)], ANY),
    ("softplus", F.softplus, lambda a: torch.nn.functional.softplus(a), [(3, 4)], ANY),
    ("transpose, getitem, concatenate", lambda a, b: mg.concatenate([a.T[1:], b], axis=0),
     lambda a, b: torch.cat([a.T[1:], b], dim=0), [(3, 4), (2, 3)], ANY),
    ("where", lambda a, b: mg.where(np.arange(12).reshape(3, 4) % 3 == 0, a, b) * a,
     lambda a, b: torch.where(torch.from_numpy(np.arange(12).reshape(3, 4) % 3 == 0), a, b) * a,
     [(3, 4), (3, 4)], ANY),
    ("composite: tanh(a @ b) * sigmoid(a @ b)", lambda a, b: (a @ b).tanh() * (a @ b).sigmoid(),
     lambda a, b: (a @ b).tanh() * (a @ b).sigmoid(), [(3, 4), (4, 2)], ANY),
]


@pytest.mark.parametrize("name, mg_fn, torch_fn, shapes, domain", OPS, ids=[o[0] for o in OPS])
def test_op_values_and_first_and_second_derivatives(name, mg_fn, torch_fn, shapes, domain):
    rng = np.random.default_rng(sum(map(ord, name)))                    # the same data every run
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
