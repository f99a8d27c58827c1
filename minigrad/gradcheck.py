"""Gradient checking: compare the engine's analytic gradients with finite differences.

**Central differences.** For a scalar function f and a small step ε,

    ∂f/∂x_i ≈ (f(x + ε e_i) − f(x − ε e_i)) / 2ε

where e_i is the i-th unit vector. Taylor's theorem gives the truncation error: the even terms
cancel, leaving ε²/6 · f'''(x), so halving ε quarters it (the one-sided difference
(f(x + ε e_i) − f(x)) / ε only halves it). Each f is also computed with a rounding error of
about δ·|f|, δ the machine epsilon, and the division by 2ε magnifies that to ≈ δ·|f| / ε.

**Why float64 only.** δ is 2.2e-16 in float64 and 1.2e-7 in float32. In float64 with ε = 1e-6
the two errors are ~1e-12 and ~1e-10: a gradient is known to ~7 digits, so a wrong VJP stands
out. In float32 the rounding error alone is ~1.2e-7 / 1e-6 ≈ 0.1 -- and even the best step
(ε ≈ δ^(1/3) ≈ 5e-3) leaves ~1e-3 -- so the check could not tell a right gradient from a
slightly wrong one. ``gradcheck`` therefore refuses float32 inputs: check the float64 version
of the computation, the VJPs are the same code.

**Tensor outputs: random projections.** For ``out = fn(x)`` with M elements the full Jacobian
needs M backward passes. Instead draw a random u shaped like ``out`` and check the scalar
L = Σ out ⊙ u: its gradient is exactly the VJP that ``backward(u)`` computes. A wrong VJP
survives a random u only by accident, and a few independent u's make that vanishingly
unlikely. ``full_jacobian=True`` checks every entry ∂out_j/∂x_i instead (slower, precise
error location).

A check passes where |analytic − numeric| ≤ atol + rtol·|numeric| (as ``np.allclose``). Keep
inputs away from kinks (relu at 0, ties in max): there the two one-sided derivatives differ
and the finite difference averages them. ``fn`` must be deterministic (a dropout inside it
needs a fresh generator with the same seed on every call).

    from minigrad.gradcheck import gradcheck, numerical_grad
    gradcheck(lambda x, w: mg.tanh(x @ w), [x, w])   # True, or GradcheckError saying where
    numerical_grad(lambda x: (x ** 3).sum(), [np.array([1.0, 2.0])])   # [array([3., 12.])]

    python -m minigrad.gradcheck             # check every primitive and functional op
    python -m minigrad.gradcheck --order 2   # their second derivatives (gradgradcheck)

**Second derivatives.** ``gradgradcheck`` applies the same check one level up: the gradient
of ``fn`` is itself a function of the inputs, and the engine's derivative of it (the backward
of the backward, recorded with ``create_graph=True``) is compared with central differences of
first-order gradients.
"""
from __future__ import annotations

import sys

import numpy as np

from minigrad import autograd, engine, shape_ops
from minigrad.modes import no_grad
from minigrad.tensor import Tensor

PROJECTIONS = 3  # random vectors u in the default mode
SHOW_WORST = 5   # elements listed in a failure message


class GradcheckError(AssertionError):
    """An analytic gradient disagrees with the finite-difference one."""


def _float64_copy(x, who: str, i: int) -> np.ndarray:
    """A float64 working copy of input ``i``; float32 and non-float inputs are refused."""
    data = np.array(x.data if isinstance(x, Tensor) else x, copy=True)
    if data.dtype == np.float32 or data.dtype == np.float16:
        raise TypeError(
            f"{who}: input {i} is {data.dtype}. Finite differences in {data.dtype} carry an error "
            f"of ~1e-3 or worse (machine epsilon {np.finfo(data.dtype).eps:.1e} divided by the "
            f"step), so the check would be meaningless: pass float64 inputs.")
    if data.dtype != np.float64:
        raise TypeError(f"{who}: input {i} has dtype {data.dtype}; only float64 inputs can be "
                        f"perturbed (close over integer arguments with a lambda)")
    return data


def _as_list(who: str, inputs, eps: float) -> list:
    """``inputs`` as a list (a single array, Tensor or number is one input); ``eps`` checked."""
    if not eps > 0:
        raise ValueError(f"{who}: eps must be > 0, got {eps}")
    return list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]


def _central_differences(f, x: np.ndarray, eps: float) -> np.ndarray:
    """∂f/∂x[idx] for every element of ``x`` by central differences: shape x.shape + f's shape.

    ``x`` is perturbed in place, one element at a time, and restored.
    """
    columns = []
    for idx in np.ndindex(x.shape):
        original = x[idx]
        x[idx] = original + eps
        plus = f()
        x[idx] = original - eps
        minus = f()
        x[idx] = original
        columns.append((plus - minus) / (2 * eps))
    return np.reshape(columns, x.shape + np.shape(columns[0] if columns else f()))


def numerical_grad(fn, inputs, eps: float = 1e-6) -> list:
    """∂fn/∂input for each input of a scalar-valued ``fn``, by central differences.

    ``inputs`` are Tensors or float64 arrays (or one of them, not in a list); ``fn(*inputs)``
    is called with the same kinds (positionally) and returns a scalar: a one-element Tensor, a
    0-d array or a float. Returns a list of one float64 array per input, shaped like it. The
    inputs are not changed.
    """
    inputs = _as_list("numerical_grad", inputs, eps)
    arrays = [_float64_copy(x, "numerical_grad", i) for i, x in enumerate(inputs)]
    kinds = [isinstance(x, Tensor) for x in inputs]

    def f() -> float:
        args = [Tensor(a) if is_tensor else a.copy() for a, is_tensor in zip(arrays, kinds)]
        with no_grad():
            out = fn(*args)
        value = np.asarray(out.data if isinstance(out, Tensor) else out, dtype=np.float64)
        if value.size != 1:
            raise ValueError(f"numerical_grad: fn must return a scalar, got shape {value.shape}")
        return float(value.reshape(()))

    return [_central_differences(f, a, eps) for a in arrays]


def _errors(analytic: np.ndarray, numeric: np.ndarray, atol: float, rtol: float):
    """Absolute error, relative error |a − n| / max(|n|, atol) (so entries near zero do not
    blow it up), and the failing entries: those not within atol + rtol·|n| (NaN included)."""
    abs_err = np.abs(analytic - numeric)
    rel_err = abs_err / np.maximum(np.abs(numeric), atol)
    return abs_err, rel_err, ~(abs_err <= atol + rtol * np.abs(numeric))


def _failure(who, i, shape, lead, what, analytic, numeric, abs_err, rel_err, bad, atol,
             rtol) -> str:
    """The message for input ``i``: the worst entry first, then the worst few.

    Entries are indexed ``lead + element``: ``lead`` is the projection number or the output
    element (``what`` names it), ``element`` the multi-index into the input.
    """
    excess = np.nan_to_num((abs_err - rtol * np.abs(numeric)) / atol, nan=np.inf)  # NaN: worst
    order = np.argsort(-np.where(bad, excess, -np.inf), axis=None, kind="stable")
    worst = {}  # input element -> its worst failing entry: each element is listed once
    for k in order[:int(bad.sum())]:
        ix = tuple(int(j) for j in np.unravel_index(k, bad.shape))
        worst.setdefault(ix[lead:], ix)
        if len(worst) == SHOW_WORST:
            break
    flat = list(worst.values())

    def entry(ix):
        tag = ix[0] if what == "along projection" else ix[:lead]
        where = f"element {ix[lead:]}" + (f" {what} {tag}" if lead else "")
        return (f"{where}: analytic {analytic[ix]:.6e}, numeric {numeric[ix]:.6e}, "
                f"abs error {abs_err[ix]:.2e}, rel error {rel_err[ix]:.2e}")

    of = ("the gradient" if who == "gradcheck"
          else "the second derivative (the gradient of the gradient)")
    lines = [f"{who}: {of} of input {i} (shape {shape}) is wrong at " + entry(flat[0]),
             f"  {int(bad.sum())} of {bad.size} entries fail |analytic - numeric| <= "
             f"atol + rtol*|numeric| (atol={atol:g}, rtol={rtol:g}); the worst:"]
    lines += [f"    {entry(ix)}" for ix in flat]
    return "\n".join(lines)


def _arguments(inputs, who: str = "gradcheck") -> tuple:
    """``(args for fn, indices of the inputs to check)``: a float array becomes a leaf Tensor
    to check, a float Tensor is checked when it requires grad; anything else is passed as is."""
    args, checked = [], []
    for i, x in enumerate(inputs):
        if isinstance(x, np.ndarray) and x.dtype.kind == "f":
            x = Tensor(x, requires_grad=True)   # a float array: a leaf to check
        if isinstance(x, Tensor) and x.dtype.kind == "f":
            _float64_copy(x, who, i)            # refuses float32 with the reason
            if x.requires_grad:
                checked.append(i)
        args.append(x)
    if not checked:
        got = ", ".join(f"input {i}: {type(x).__name__} {getattr(x, 'dtype', '')}".rstrip()
                        for i, x in enumerate(inputs))
        raise ValueError(f"{who}: nothing to check: no input is a float64 array or a Tensor "
                         f"with requires_grad=True ({got}); Python numbers and lists are passed "
                         f"to fn unchecked, so wrap them in np.array(...)")
    return args, checked


def _check(fn, inputs, eps, atol, rtol, full_jacobian, rng, who="gradcheck") -> list:
    """Compare analytic and numeric gradients of every checked input.

    Returns ``(input index, max abs error, max rel error, failure message or None)`` per
    checked input.
    """
    args, checked = _arguments(inputs, who)
    out = fn(*args)
    if not isinstance(out, Tensor) or out.dtype != np.float64:
        raise TypeError(f"{who}: fn must return a float64 Tensor, got "
                        f"{type(out).__name__} of dtype {getattr(out, 'dtype', None)}")
    targets = [args[i] for i in checked]

    def vjp(u) -> tuple:  # dL/d input for L = Σ out ⊙ u
        if not out.requires_grad:  # no checked input reaches the output: the gradient is 0
            return tuple(np.zeros_like(t.data) for t in targets)
        return autograd.grad(out, targets, grad_outputs=u, retain_graph=True)

    if full_jacobian:  # seeds: every unit vector e_j; entries indexed (output j, input element)
        seeds = np.eye(out.size).reshape((out.size,) + out.shape)
        lead, what = out.ndim, "for output element"
    else:
        seeds = rng.standard_normal((PROJECTIONS,) + out.shape)
        lead, what = 1, "along projection"
    rows = [vjp(u) for u in seeds]
    results = []
    for k, i in enumerate(checked):
        work = _float64_copy(args[i], who, i)
        call = list(args)

        def output() -> np.ndarray:
            call[i] = Tensor(work)
            with no_grad():
                return np.array(fn(*call).data, dtype=np.float64)

        d = _central_differences(output, work, eps)  # (*x.shape, *out.shape): ∂out/∂x
        x_axes = list(range(work.ndim))
        out_axes = list(range(work.ndim, d.ndim))
        if full_jacobian:
            numeric = d.transpose(out_axes + x_axes)                        # (*out, *x)
            analytic = np.stack([r[k] for r in rows]).reshape(numeric.shape)
        else:
            numeric = np.tensordot(seeds, d, axes=(list(range(1, 1 + out.ndim)), out_axes))
            analytic = np.stack([r[k] for r in rows])                       # (P, *x)
        abs_err, rel_err, bad = _errors(analytic, numeric, atol, rtol)
        message = (_failure(who, i, work.shape, lead, what, analytic, numeric, abs_err, rel_err,
                            bad, atol, rtol) if bad.any() else None)
        results.append((i, float(abs_err.max(initial=0)), float(rel_err.max(initial=0)), message))
    return results


def gradcheck(fn, inputs, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
              raise_exception: bool = True, full_jacobian: bool = False,
              rng: np.random.Generator | None = None) -> bool:
    """Check the analytic gradients of ``fn(*inputs)`` against central differences.

    ``inputs``: a list of Tensors (those with ``requires_grad=True`` are checked), float64
    arrays (made into leaves and checked) or anything else (passed through unchecked, e.g.
    integer targets); a single array or Tensor is one input. ``eps`` must be > 0.
    ``fn`` returns a float64 Tensor of any shape. By default the VJP is checked along
    ``PROJECTIONS`` random vectors u drawn from ``rng`` (seed 0 if None); with
    ``full_jacobian=True`` every entry of the Jacobian is. Float32 inputs are refused (see the
    module docstring). On a mismatch raises ``GradcheckError`` naming the input, the element,
    both values and their errors -- or returns False if ``raise_exception=False``.
    """
    rng = np.random.default_rng(0) if rng is None else rng
    inputs = _as_list("gradcheck", inputs, eps)
    for _, _, _, message in _check(fn, inputs, eps, atol, rtol, full_jacobian, rng):
        if message is not None:
            if raise_exception:
                raise GradcheckError(message + "\n  to see which op's VJP is wrong: "
                                     "minigrad.viz.draw_gradcheck(fn, inputs, path='graph.svg')")
            return False
    return True


def gradcheck_module(module, fn, inputs=(), **kwargs) -> bool:
    """``gradcheck`` of ``fn(*inputs)`` with respect to the inputs *and* every parameter of
    ``module`` (a ``minigrad.nn.Module``), e.g. a GRU cell or a decoder's loss end to end.

    gradcheck perturbs copies of what it checks; the module reads its parameters from its
    attributes, so for each call their data are pointed at those copies, and restored after.
    """
    params = module.parameters()
    originals = [p.data for p in params]

    def f(*args):
        for p, a in zip(params, args):
            p.data = a.data
        return fn(*args[len(params):])

    try:
        return gradcheck(f, params + list(inputs), **kwargs)
    finally:
        for p, data in zip(params, originals):
            p.data = data


def first_derivative(fn, inputs, rng: np.random.Generator):
    """G(*args) = ∂(Σ u ⊙ fn(*args))/∂x for the inputs gradcheck would check, flattened and
    joined into one vector, u a fixed random vector shaped like fn's output.

    Called on leaves that require grad, G records its backward (``create_graph=True``), so
    its own VJP is a second derivative of fn; called under ``no_grad`` (as gradcheck does
    while it perturbs an input) it computes the same G by an ordinary backward on fresh leaves.
    """
    _, checked = _arguments(inputs, "gradgradcheck")
    seed = []

    def G(*args):
        recording, call = engine.mode.grad_enabled, list(args)
        if not recording:
            for i in checked:
                call[i] = Tensor(args[i].data, requires_grad=True)
        engine.mode.grad_enabled = True
        try:
            out = fn(*call)
            if not seed:
                seed.append(rng.standard_normal(out.shape))
            targets = [call[i] for i in checked]
            if not out.requires_grad:  # fn does not depend on them: G = 0
                return Tensor(np.zeros(sum(t.size for t in targets)))
            grads = autograd.grad(out, targets, grad_outputs=seed[0], create_graph=recording)
            if not recording:
                return Tensor(np.concatenate([np.ravel(g) for g in grads]))
            return shape_ops.concatenate([g.reshape(-1) for g in grads])
        finally:
            engine.mode.grad_enabled = recording
    return G


def gradgradcheck(fn, inputs, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
                  raise_exception: bool = True, rng: np.random.Generator | None = None) -> bool:
    """Check the second derivatives of ``fn(*inputs)``: gradcheck applied to its gradient.

    The gradient along a random u, G(x) = ∂(Σ u ⊙ fn(x))/∂x (``first_derivative``), is a
    function of the inputs like any other. Its VJP -- the backward of the backward, recorded
    with ``create_graph=True`` and projected on random vectors w -- must match central
    differences of G, (G(x + ε e_i) − G(x − ε e_i)) / 2ε, where each G comes from an ordinary
    first-order backward: a check of w·(∂²L/∂x∂x) e_i, the Hessian of L = Σ u ⊙ fn, against
    the first derivatives. Arguments and the failure report (input, element, both values,
    errors) are gradcheck's.
    """
    rng = np.random.default_rng(0) if rng is None else rng
    inputs = _as_list("gradgradcheck", inputs, eps)
    G = first_derivative(fn, inputs, rng)
    for _, _, _, message in _check(G, inputs, eps, atol, rtol, False, rng, "gradgradcheck"):
        if message is not None:
            if raise_exception:
                raise GradcheckError(message)
            return False
    return True


if __name__ == "__main__":
    from minigrad.gradcheck_cases import main
    sys.exit(main())
