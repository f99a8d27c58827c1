"""Exercises 1-7: elementwise ops, broadcasting, a reduction, matmul, softmax, cross-entropy.

Each forward is built from minigrad ops; the checker differentiates it by central finite
differences, so the forward is the only "answer" stored here -- never a VJP.
"""
from __future__ import annotations

import numpy as np

import minigrad as mg
from minigrad import functional as F
from minigrad.ops import sigmoid_array
from minigrad.exercises.catalog import Exercise, Mistake, normal, sum_to


# ---- 1. mul with broadcasting ----------------------------------------------------------------

MUL = Exercise(
    name="mul", stars=1, title="mul with broadcasting",
    formula="out = a ⊙ b, NumPy broadcasting",
    args=("a", "b"),
    forward=lambda a, b: a * b,
    cases=lambda rng: [normal(rng, a=(3, 4), b=(3, 4)),
                       normal(rng, a=(2, 3, 4), b=(4,)),
                       normal(rng, a=(3, 1), b=(1, 4)),
                       normal(rng, a=(4,), b=(2, 3, 1))],
    hints=(
        "g has the shape of out, which is the broadcast shape of a and b. Each gradient must "
        "have the shape of its own input. Where NumPy stretched an input -- axes it prepended, "
        "and axes of size 1 it repeated -- the input was used many times, so its gradient is "
        "the SUM over those axes: sum the prepended axes away, and sum the size-1 axes with "
        "keepdims=True. Example: b (4,) used in out (2, 3, 4): db = (...).sum(axis=(0, 1)).",
        "d(a ⊙ b)/da = b and d(a ⊙ b)/db = a, elementwise. So dL/da = sum_to(g ⊙ b, a.shape) "
        "and dL/db = sum_to(g ⊙ a, b.shape), where sum_to sums over the broadcast axes as in "
        "hint 1.",
    ),
    mistakes=(
        Mistake("each input's gradient uses the OTHER input: d(a ⊙ b)/da = b, so "
                "dL/da = g ⊙ b (and dL/db = g ⊙ a)",
                lambda g, x, c: {"a": sum_to(g * x["a"], x["a"].shape),
                                 "b": sum_to(g * x["b"], x["b"].shape)}),
    ),
)

# ---- 2. tanh ---------------------------------------------------------------------------------

TANH = Exercise(
    name="tanh", stars=1, title="tanh",
    formula="y = tanh(x)",
    args=("x",),
    forward=mg.tanh,
    cases=lambda rng: [normal(rng, x=(5,)), normal(rng, x=(3, 4)), normal(rng, x=(2, 3, 2))],
    hints=(
        "Elementwise: y, g and dL/dx all have the shape of x. Nothing to sum.",
        "dL/dx = g ⊙ (1 − tanh²(x)) = g ⊙ (1 − y²): the derivative is cheapest in terms of "
        "the output y = tanh(x).",
    ),
    mistakes=(
        Mistake("missing factor 1 − tanh²(x): you passed g straight through; "
                "dL/dx = g ⊙ (1 − tanh²(x))",
                lambda g, x, c: {"x": g}),
        Mistake("used 1 − x² instead of 1 − tanh²(x): the derivative is written in terms of "
                "the OUTPUT y = tanh(x), i.e. 1 − y²",
                lambda g, x, c: {"x": g * (1 - x["x"] ** 2)}),
        Mistake("wrote tanh(x)² where 1 − tanh²(x) belongs",
                lambda g, x, c: {"x": g * np.tanh(x["x"]) ** 2}),
    ),
)

# ---- 3. sigmoid ------------------------------------------------------------------------------

SIGMOID = Exercise(
    name="sigmoid", stars=1, title="sigmoid",
    formula="y = σ(x) = 1 / (1 + e^−x)",
    args=("x",),
    forward=mg.sigmoid,
    cases=lambda rng: [normal(rng, x=(5,)), normal(rng, x=(3, 4)), normal(rng, 2.0, x=(2, 3, 2))],
    hints=(
        "Elementwise: y, g and dL/dx all have the shape of x. Nothing to sum.",
        "dL/dx = g ⊙ σ(x) ⊙ (1 − σ(x)). Compute σ(x) once (stable: for x < 0 use "
        "e^x / (1 + e^x)) and reuse it.",
    ),
    mistakes=(
        Mistake("missing factor σ(x)(1 − σ(x)): you passed g straight through",
                lambda g, x, c: {"x": g}),
        Mistake("used x(1 − x) instead of σ(x)(1 − σ(x)): the derivative is written in terms "
                "of the OUTPUT y = σ(x)",
                lambda g, x, c: {"x": g * x["x"] * (1 - x["x"])}),
        Mistake("missing factor (1 − σ(x)): dL/dx = g ⊙ σ(x) ⊙ (1 − σ(x))",
                lambda g, x, c: {"x": g * sigmoid_array(x["x"])}),
        Mistake("missing factor σ(x): dL/dx = g ⊙ σ(x) ⊙ (1 − σ(x))",
                lambda g, x, c: {"x": g * (1 - sigmoid_array(x["x"]))}),
    ),
)

# ---- 4. sum over an axis ---------------------------------------------------------------------

SUM_AXIS = Exercise(
    name="sum_axis", stars=2, title="sum over an axis",
    formula="y = Σ_axis x  (the axis disappears)",
    args=("x",),
    forward=lambda x, axis: x.sum(axis=axis),
    cases=lambda rng: [normal(rng, x=(3, 4), constants={"axis": 0}),
                       normal(rng, x=(3, 3), constants={"axis": 1}),
                       normal(rng, x=(2, 3, 4), constants={"axis": 1}),
                       normal(rng, x=(2, 3, 4), constants={"axis": -1})],
    hints=(
        "g has x's shape with `axis` removed; dL/dx must have x's full shape. Put the removed "
        "axis back as size 1 (np.expand_dims(g, axis)), then stretch it (np.broadcast_to). "
        "Broadcasting g directly lines it up with x's LAST axes, which is wrong unless axis "
        "is the first one.",
        "Every x element along the axis adds into the same y element with weight 1, so "
        "dL/dx = g copied along the axis: np.broadcast_to(np.expand_dims(g, axis), x.shape).",
    ),
    mistakes=(
        Mistake("g was broadcast without putting the summed axis back: `np.broadcast_to` lines "
                "g up with x's last axes; first `np.expand_dims(g, axis)`",
                lambda g, x, c: {"x": np.broadcast_to(g, x["x"].shape)}),
    ),
)

# ---- 5. matmul -------------------------------------------------------------------------------

MATMUL = Exercise(
    name="matmul", stars=2, title="matmul",
    formula="C = A @ B  (2-D and batched)",
    args=("A", "B"),
    forward=lambda A, B: A @ B,
    cases=lambda rng: [normal(rng, A=(3, 4), B=(4, 2)),
                       normal(rng, A=(3, 3), B=(3, 3)),
                       normal(rng, A=(2, 3, 4), B=(2, 4, 5)),
                       normal(rng, A=(2, 3, 4), B=(4, 2))],
    hints=(
        "A (n, k), B (k, m), G = dL/dC (n, m). dA must be (n, k): the only product of G and "
        "B with that shape is G (n, m) @ Bᵀ (m, k). Likewise dB (k, m) = Aᵀ (k, n) @ G. In a "
        "batch (…, n, k) transpose only the last two axes: np.swapaxes(B, -1, -2) -- .T "
        "reverses ALL axes. If B has no batch axis but A does, B was reused for every batch "
        "element: sum dB over the batch axis.",
        "C_ij = Σ_k A_ik B_kj, so dL/dA_ik = Σ_j G_ij B_kj = (G Bᵀ)_ik and "
        "dL/dB_kj = Σ_i A_ik G_ij = (Aᵀ G)_kj.",
    ),
    mistakes=(
        Mistake("dA = G B: transpose B, dA = G Bᵀ",
                lambda g, x, c: {"A": g @ x["B"]}),
        Mistake("dB = A G: transpose A, dB = Aᵀ G",
                lambda g, x, c: {"B": x["A"] @ g}),
    ),
)

# ---- 6. softmax ------------------------------------------------------------------------------

def _softmax_mistakes():
    def diag_only(g, x, c):
        return {"x": g * F.softmax_array(x["x"])}

    def diagonal_jacobian(g, x, c):
        y = F.softmax_array(x["x"])
        return {"x": g * y * (1 - y)}

    def whole_array_sum(g, x, c):
        y = F.softmax_array(x["x"])
        return {"x": y * (g - np.sum(g * y))}
    return (
        Mistake("kept only diag(α) g: the − α (αᵀ g) term is missing -- every output depends "
                "on every input through the normalising sum", diag_only),
        Mistake("used only the diagonal of the Jacobian, α_i(1 − α_i): the off-diagonal "
                "terms −α_i α_j are missing; dL/dx = α ⊙ (g − αᵀg)", diagonal_jacobian),
        Mistake("αᵀg was summed over the whole array: sum along the softmax axis only, with "
                "keepdims=True: `np.sum(g * α, axis=-1, keepdims=True)`", whole_array_sum),
    )


SOFTMAX = Exercise(
    name="softmax", stars=3, title="softmax",
    formula="α = softmax(x); apply diag(α) − ααᵀ to g without building it",
    args=("x",),
    forward=lambda x: F.softmax(x, axis=-1),
    cases=lambda rng: [normal(rng, x=(5,)), normal(rng, x=(3, 4)), normal(rng, x=(2, 3, 4))],
    hints=(
        "Each row (last axis) is its own softmax: g, α and dL/dx all have x's shape. For each "
        "row you need ONE number, αᵀg = Σ_j α_j g_j: np.sum(g * α, axis=-1, keepdims=True) has "
        "shape (…, 1) and broadcasts back over the row. Never build the (n, n) Jacobian.",
        "∂α_i/∂x_j = α_i (δ_ij − α_j), so dL/dx_j = Σ_i g_i α_i (δ_ij − α_j) "
        "= α_j (g_j − Σ_i g_i α_i), i.e. dL/dx = α ⊙ (g − αᵀg).",
    ),
    mistakes=_softmax_mistakes(),
    zero_sum={"x": -1},
)

# ---- 7. log_softmax with cross-entropy -------------------------------------------------------

def _ce_parts(x, c):
    """softmax p, the one-hot of the targets, and N (the number of positions averaged)."""
    t = c["targets"]
    p = F.softmax_array(x["logits"])
    onehot = np.eye(p.shape[-1])[t]
    return p, onehot, t.size


def _ce_mistake(text, formula):
    def grads(g, x, c):
        p, onehot, n = _ce_parts(x, c)
        return {"logits": formula(g, p, onehot, n)}
    return Mistake(text, grads)


def _ce_cases(rng):
    cases = []
    for shape in [(4, 5), (1, 3), (2, 3, 4)]:
        logits = 1.5 * rng.standard_normal(shape)
        targets = rng.integers(0, shape[-1], size=shape[:-1])
        cases.append(({"logits": logits}, {"targets": targets}))
    return cases


LOG_SOFTMAX_CE = Exercise(
    name="log_softmax_ce", stars=3, title="log_softmax with cross-entropy",
    formula="L = mean over positions of −log softmax(z)[t]",
    args=("logits",),
    forward=lambda logits, targets: F.cross_entropy(logits, targets),
    cases=_ce_cases,
    hints=(
        "logits (…, C), integer targets (…) -- one class per position; N = targets.size "
        "positions in all. The loss is a scalar, so g is a scalar too (a 0-d array). "
        "dL/dlogits has the logits' shape; the one-hot of the targets is np.eye(C)[targets].",
        "For one position: −log softmax(z)[t] = −z_t + log Σ_c e^(z_c), whose gradient is "
        "softmax(z) − onehot(t). The mean divides by N and g scales everything: "
        "dL/dz = g · (softmax(z) − onehot(t)) / N.",
    ),
    mistakes=(
        _ce_mistake("missing the 1/N of the mean (N = number of positions = targets.size)",
                    lambda g, p, oh, n: g * (p - oh)),
        _ce_mistake("forgot to multiply by g, the incoming gradient (a scalar here)",
                    lambda g, p, oh, n: (p - oh) / n),
        _ce_mistake("forgot to subtract the one-hot of the target: dz = g (softmax(z) − "
                    "onehot(t)) / N", lambda g, p, oh, n: g * p / n),
        _ce_mistake("differentiated only −z_t and dropped the log Σ e^z term (its gradient "
                    "is softmax(z))", lambda g, p, oh, n: -g * oh / n),
    ),
    zero_sum={"logits": -1},
)

EXERCISES = [MUL, TANH, SIGMOID, SUM_AXIS, MATMUL, SOFTMAX, LOG_SOFTMAX_CE]
