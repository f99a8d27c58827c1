"""The second-derivative exercises (15 hvp, 16 read_second): their forward is the engine's own
first-order gradient, the checker's truth is the central differences of that gradient, and a
learner's wrong file is diagnosed by name through the sandbox.

(The reference solutions, the shipped stubs and the in-process mistakes are covered with every
other exercise in test_exercises.py.)
"""
import importlib.util
from pathlib import Path

import numpy as np
import pytest

import minigrad as mg
from minigrad.exercises import check_file, checker, find, report
from minigrad.tensor import Tensor

SOLUTIONS = Path(__file__).parent / "exercise_solutions"
_spec = importlib.util.spec_from_file_location("numpy_vjps", SOLUTIONS / "numpy_vjps.py")
numpy_vjps = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(numpy_vjps)


def logistic_gradient(w, X, y):
    """∇f(w) of the mean logistic loss, by the engine's reverse mode on the composed loss."""
    w = mg.tensor(w, requires_grad=True)
    z = mg.tensor(X) @ w                                          # (N,)
    return mg.grad((mg.log(1 + mg.exp(z)) - y * z).mean(), [w])[0]


def read_gradient(e, h, gc):
    """∂L/∂e for L = gc·c, c = Σ_j softmax(e)_j h_j, by the engine's reverse mode."""
    e = mg.tensor(e, requires_grad=True)
    c = (mg.expand_dims(mg.functional.softmax(e, axis=-1), 1) @ mg.tensor(h)).squeeze(1)
    return mg.grad((c * gc).sum(), [e])[0]                        # (B, S)


FIRST = {"hvp": logistic_gradient, "read_second": read_gradient}


def central_differences(fn, arrays, eps=1e-6):
    """∂fn/∂array for each array, one element at a time (independent of minigrad.gradcheck)."""
    grads = []
    for k, x in enumerate(arrays):
        grad = np.zeros_like(x)
        for i in np.ndindex(x.shape):
            step = [a.copy() for a in arrays]
            step[k][i] += eps
            up = fn(*step)
            step[k][i] -= 2 * eps
            grad[i] = (up - fn(*step)) / (2 * eps)
        grads.append(grad)
    return grads


@pytest.mark.parametrize("name", sorted(FIRST))
def test_truth_is_the_differences_of_the_engines_first_gradient(name):
    e, first = find(name), FIRST[name]
    for inputs, constants, g in checker._cases(e):
        arrays = list(inputs.values())
        with mg.no_grad():
            forward = e.forward(*[Tensor(x) for x in arrays], **constants).data
        np.testing.assert_allclose(forward, first(*arrays, **constants), rtol=1e-12, atol=1e-15)
        fd = central_differences(lambda *xs: np.sum(g * first(*xs, **constants)), arrays)
        truth = checker._numeric(e, inputs, constants, g)
        assert len(truth) == len(fd) == len(e.args)
        for t, d in zip(truth, fd):
            np.testing.assert_allclose(t, d, rtol=1e-6, atol=1e-8)


def test_hvp_truth_is_the_explicit_hessian_times_g():
    """H from the closed form Xᵀ diag(σ(1 − σ)) X / N, built only here, times g."""
    e = find("hvp")
    for inputs, c, g in checker._cases(e):
        s = 1 / (1 + np.exp(-(c["X"] @ inputs["w"])))
        H = c["X"].T @ (c["X"] * (s * (1 - s))[:, None]) / len(c["y"])   # (D, D)
        (truth,) = checker._numeric(e, inputs, c, g)
        np.testing.assert_allclose(truth, H @ g, rtol=1e-6, atol=1e-9)


def test_read_second_truth_is_the_derived_hessian_times_g():
    """de = (diag(a) − α aᵀ − a αᵀ) g, the Hessian derived in the hint, built only here."""
    e = find("read_second")
    for inputs, c, g in checker._cases(e):
        alpha = np.exp(inputs["e"]) / np.exp(inputs["e"]).sum(-1, keepdims=True)   # (B, S)
        s = np.einsum("bd,bsd->bs", inputs["gc"], inputs["h"])
        a = alpha * (s - (alpha * s).sum(-1, keepdims=True))
        H = [np.diag(ai) - np.outer(al, ai) - np.outer(ai, al) for al, ai in zip(alpha, a)]
        de = checker._numeric(e, inputs, c, g)[0]
        np.testing.assert_allclose(de, np.einsum("bst,bs->bt", np.array(H), g), atol=1e-8)
        np.testing.assert_allclose(de.sum(axis=-1), 0, atol=1e-8)


NAMED = [(n, m, t) for n, m, t in numpy_vjps.MISTAKES
         if n in FIRST and any(t in mistake.text for mistake in find(n).mistakes)]


def test_every_named_mistake_of_the_new_exercises_is_tested():
    for name in FIRST:
        for mistake in find(name).mistakes:
            assert any(n == name and t in mistake.text for n, _, t in NAMED), mistake.text


@pytest.mark.parametrize("name, mistake, text", NAMED, ids=[f"{n}-{m}" for n, m, _ in NAMED])
def test_a_learners_wrong_file_is_named_through_the_sandbox(tmp_path, name, mistake, text):
    """The learner's file runs in the child process; the parent names the mistake."""
    e = find(name)
    (tmp_path / e.file).write_text(
        "import functools\nimport importlib.util\n"
        f"spec = importlib.util.spec_from_file_location('v', {str(SOLUTIONS / 'numpy_vjps.py')!r})\n"
        "v = importlib.util.module_from_spec(spec)\nspec.loader.exec_module(v)\n"
        f"{e.function} = functools.partial(v.{name}, mistake={mistake!r})\n", encoding="utf-8")
    rep = check_file(e, tmp_path)
    assert rep.status == "failing" and rep.passed == 0, report.full(rep)
    diagnoses = [r.diagnosis or "" for case in rep.cases for r in case.results]
    assert any(text in d for d in diagnoses), report.full(rep)
