"""gradcheck itself: it must pass right gradients, fail wrong ones with a useful message, and
refuse checks that cannot mean anything."""
from __future__ import annotations

import os
import re
import subprocess
import sys

import numpy as np
import pytest

import minigrad as mg
from minigrad import gradcheck_cases
from minigrad.gradcheck import GradcheckError, gradcheck, numerical_grad
from minigrad.tensor import Tensor

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def square_with_a_bug(x, at=None):
    """x² whose VJP is wrong: 3x instead of 2x everywhere, or only at element ``at``."""
    def vjp(xp, g, out, x):
        factor = np.full(x.shape, 2.0)
        factor[... if at is None else at] = 3.0
        return (g * factor * x,)
    return Tensor._from_op(x.data ** 2, (x,), vjp, "square_with_a_bug")


def square_detached(x):
    """x² whose VJP is right once but reads x as a constant (np.asarray drops the graph), so
    its second derivative comes out 0 instead of 2: the classic higher-order bug."""
    return Tensor._from_op(x.data ** 2, (x,), lambda xp, g, out, x: (g * 2 * np.asarray(x),),
                           "square_detached")


def test_numerical_grad_of_a_known_function():
    x, y = np.array([[1.0, -2.0], [0.5, 3.0]]), np.array(0.7)
    seen = []

    def f(a, b):
        seen.append(type(a))
        return (a ** 3).sum() * b

    gx, gy = numerical_grad(f, [x, y])
    np.testing.assert_allclose(gx, 3 * x ** 2 * 0.7, rtol=1e-8)
    np.testing.assert_allclose(gy, (x ** 3).sum(), rtol=1e-8)
    assert set(seen) == {np.ndarray}                    # called with the kinds it was given
    np.testing.assert_array_equal(x, [[1.0, -2.0], [0.5, 3.0]])   # inputs unchanged

    t = mg.tensor([0.3, -1.2], requires_grad=True)
    (g,) = numerical_grad(lambda a: mg.tanh(a).sum(), [t])
    np.testing.assert_allclose(g, 1 - np.tanh(t.data) ** 2, rtol=1e-8)
    assert t.grad is None


def test_numerical_grad_wants_a_scalar():
    with pytest.raises(ValueError, match="scalar"):
        numerical_grad(lambda a: a * 2, [np.ones(3)])


def test_a_wrong_vjp_fails_naming_the_input_and_element():
    a = mg.tensor(np.ones((2, 3)), requires_grad=True)
    b = mg.tensor(np.arange(6.0).reshape(2, 3) + 1, requires_grad=True)
    with pytest.raises(GradcheckError) as info:
        gradcheck(lambda p, q: (p * square_with_a_bug(q, at=(1, 2))).sum(), [a, b])
    message = str(info.value)
    assert "input 1 (shape (2, 3))" in message
    assert "wrong at element (1, 2)" in message         # the only wrong element, named first
    analytic, numeric = map(float, re.search(r"analytic (\S+), numeric (\S+),", message).groups())
    assert analytic / numeric == pytest.approx(1.5)      # 3·q vs 2·q, both scaled by the same u
    for part in ("abs error", "rel error", "atol=1e-05", "rtol=0.001", "worst"):
        assert part in message
    assert gradcheck(lambda p, q: (p * square_with_a_bug(q, at=(1, 2))).sum(), [a, b],
                     raise_exception=False) is False


def test_the_failure_lists_the_worst_few_elements():
    x = mg.tensor(np.linspace(1, 2, 12).reshape(3, 4), requires_grad=True)
    with pytest.raises(GradcheckError) as info:
        gradcheck(lambda t: square_with_a_bug(t), [x], full_jacobian=True)
    message = str(info.value)
    assert "12 of 144 entries fail" in message
    assert "input 0" in message and "for output element (2, 3)" in message
    assert message.startswith("gradcheck: the gradient of input 0 (shape (3, 4)) is wrong at "
                              "element (2, 3) for output element (2, 3)")   # the largest error
    assert len([line for line in message.splitlines() if line.startswith("    element")]) == 5


def test_tensor_outputs_are_checked_along_random_projections():
    x = mg.tensor(np.random.default_rng(0).standard_normal((4, 3)), requires_grad=True)
    w = mg.tensor(np.random.default_rng(1).standard_normal((3, 2)), requires_grad=True)
    assert gradcheck(lambda a, b: mg.tanh(a @ b), [x, w])
    assert gradcheck(lambda a, b: mg.tanh(a @ b), [x, w], full_jacobian=True)
    assert not gradcheck(lambda a: square_with_a_bug(a, at=(0, 0)), [x], raise_exception=False)
    assert not gradcheck(lambda a: square_with_a_bug(a, at=(0, 0)), [x], raise_exception=False,
                         full_jacobian=True)


def test_a_nan_gradient_fails():
    def nan_vjp(x):
        return Tensor._from_op(x.data * 2, (x,), lambda xp, g, out, x: (g * np.nan,), "nan_vjp")
    assert not gradcheck(nan_vjp, [np.ones(2)], raise_exception=False)


def test_only_inputs_that_require_grad_are_checked():
    a = mg.tensor([1.0, 2.0], requires_grad=True)
    frozen = mg.tensor([3.0, 4.0])
    assert gradcheck(lambda p, q: (p * square_with_a_bug(q)).sum(), [a, frozen])
    frozen.requires_grad = True
    assert not gradcheck(lambda p, q: (p * square_with_a_bug(q)).sum(), [a, frozen],
                         raise_exception=False)


def test_arrays_become_leaves_and_integer_inputs_pass_through():
    logits = np.random.default_rng(0).standard_normal((3, 4))
    targets = np.array([0, 3, 1])
    assert gradcheck(mg.functional.cross_entropy, [logits, targets])


@pytest.mark.parametrize("make", [lambda a: mg.tensor(a, requires_grad=True), lambda a: a],
                         ids=["tensor", "array"])
def test_float32_is_refused_with_the_reason(make):
    x = make(np.ones(3, np.float32))
    with pytest.raises(TypeError, match=r"float32.*1e-3.*meaningless"):
        gradcheck(lambda t: t.sum(), [x])
    with pytest.raises(TypeError, match="float32"):
        numerical_grad(lambda t: t.sum(), [x])


def test_nothing_to_check_is_an_error():
    with pytest.raises(ValueError, match="nothing to check"):
        gradcheck(lambda t: t * 2, [mg.tensor([1.0])])


def test_the_command_line_tool_prints_every_op_ok():
    result = subprocess.run([sys.executable, "-m", "minigrad.gradcheck"], cwd=ROOT,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["op", "shapes", "max", "abs", "err", "max", "rel", "err", "ok"]
    rows = [line for line in lines[2:] if line.strip() and not line.startswith("all")]
    names = {row.split()[0] for row in rows}
    for op in ("add", "div", "pow", "sigmoid", "max", "logsumexp", "matmul", "getitem", "split",
               "where", "masked_fill", "softmax", "log_softmax", "cross_entropy", "embedding",
               "abs", "erf", "maximum", "clip", "prod", "var", "cumsum", "power", "einsum",
               "take_along_axis", "pad", "tile", "softplus", "gelu", "layer_norm", "nll_loss",
               "binary_cross_entropy"):
        assert op in names
    assert all(row.endswith(" ok") for row in rows)
    assert lines[-1] == f"all {len(rows)} ops ok"


def test_the_command_line_tool_exits_1_on_a_failure(monkeypatch, capsys):
    monkeypatch.setattr(gradcheck_cases, "cases", lambda rng: [
        ("square_with_a_bug", square_with_a_bug, [np.ones(2)]),
        ("tanh", mg.tanh, [np.ones(2)]),
        ("raises", lambda x: mg.reshape(x, (3,)), [np.ones(2)]),
        ("square_detached", square_detached, [np.ones(2)]),
    ])
    assert gradcheck_cases.main([]) == 1
    out = capsys.readouterr().out
    assert "square_with_a_bug" in out and "FAIL" in out
    assert "ValueError: reshape" in out and "2 of 4 ops failed" in out
    assert gradcheck_cases.main(["--order", "2"]) == 1
    rows = {line.split()[0]: line for line in capsys.readouterr().out.splitlines() if line}
    assert rows["square_detached"].endswith("FAIL") and rows["square_with_a_bug"].endswith("ok")
    assert rows["2"].startswith("2 of 4 ops failed (second derivatives)")


def test_a_non_positive_step_is_refused():
    for eps in (0.0, -1e-6):
        with pytest.raises(ValueError, match="gradcheck: eps must be > 0"):
            gradcheck(lambda t: t.sum(), [np.ones(2)], eps=eps)
        with pytest.raises(ValueError, match="numerical_grad: eps must be > 0"):
            numerical_grad(lambda t: t.sum(), [np.ones(2)], eps=eps)


def test_a_single_array_or_tensor_is_one_input():
    x = np.array([[1.0, 2.0], [3.0, 4.0]])                 # not two inputs, one per row
    assert gradcheck(lambda t: (t * t).sum(), x)
    assert gradcheck(lambda t: (t * t).sum(), mg.tensor(x, requires_grad=True))
    (g,) = numerical_grad(lambda t: (t * t).sum(), x)
    np.testing.assert_allclose(g, 2 * x, rtol=1e-8)


def test_python_numbers_and_lists_are_not_checked_and_that_is_said():
    with pytest.raises(ValueError, match=r"nothing to check.*input 0: float.*input 1: list"):
        gradcheck(lambda a, b: mg.tensor(b) * a, [2.0, [1.0, 2.0]])


def test_the_worst_list_names_each_element_once():
    x = mg.tensor(np.linspace(1, 2, 6), requires_grad=True)
    with pytest.raises(GradcheckError) as info:
        gradcheck(lambda t: square_with_a_bug(t, at=4) * 1.0, [x])   # 3 projections
    worst = [line for line in info.value.args[0].splitlines() if line.startswith("    element")]
    assert len(worst) == 1 and worst[0].startswith("    element (4,)")


def test_gradcheck_module_checks_parameters_and_restores_them():
    from minigrad import nn
    from minigrad.gradcheck import gradcheck_module
    layer = nn.Linear(3, 2, rng=np.random.default_rng(0))
    before = [p.data for p in layer.parameters()]
    x = mg.tensor(np.random.default_rng(1).normal(size=(4, 3)), requires_grad=True)
    assert gradcheck_module(layer, lambda x: mg.tanh(layer(x)).sum(), [x])
    assert all(p.data is d for p, d in zip(layer.parameters(), before))

    def wrong(x):  # b − detach(b) is 0 in value but adds 1 to the bias's analytic gradient
        return (layer(x) + (layer.bias - layer.bias.detach())).sum()
    with pytest.raises(GradcheckError, match="input 1"):
        gradcheck_module(layer, wrong, [x])


def test_the_command_line_tool_checks_every_second_derivative(capsys):
    assert gradcheck_cases.main(["--order", "2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = [line for line in lines[2:] if line.strip() and not line.startswith("all")]
    assert len(rows) > 40 and all(row.endswith(" ok") for row in rows)
    assert lines[-1] == f"all {len(rows)} ops ok (second derivatives)"
