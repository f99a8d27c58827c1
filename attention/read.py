"""The attention read  c = Σ_j α_j h_j,  α = masked softmax(e),  and its analytic gradient.

Shape letters: B batch, T queries, S source positions, D value width. Scores e (B, [T,] S)
read values h (B, S, D) into a context c (B, [T,] D); with heads, an axis h follows B.

Backward, with g = ∂L/∂c (source 004 §7). Softmax's Jacobian is ∂α_k/∂e_j = α_k(δ_kj − α_j):

    ∂c/∂e_j = Σ_k α_k(δ_kj − α_j) h_k = α_j (h_j − c),    so    ∂L/∂e_j = α_j g·(h_j − c),

and c is linear in h:  ∂L/∂h_j = α_j g  (Σ_t α_tj g_t for T queries). A masked j has α_j = 0
and gets exactly 0; Σ_j ∂L/∂e_j = g·c − g·c Σ_j α_j = 0, so a shift of all scores changes
nothing; a query whose every key is masked has α = 0, reads c = 0 and passes back zeros.

``attend`` composes the read from minigrad ops; ``read`` is one op whose VJP is the formula in
the ``xp`` form (minigrad/tensor.py), so both differentiate again. Both check their inputs;
``read_op``, the op, assumes them checked.
"""
import numpy as np

from attention.checks import fit, read_inputs
from minigrad import functional as F
from minigrad.tensor import Tensor


def weighted_sum(weights, values):
    """c = Σ_j α_j h_j = α @ h, arrays or Tensors: (B, [T,] S) with (B, S, D) -> (B, [T,] D)."""
    if weights.ndim == values.ndim - 1:                              # one query
        return (weights[..., None, :] @ values)[..., 0, :]           # (B, D)
    return weights @ values                                          # (B, T, D)


def attend(scores, values, mask=None) -> tuple:
    """``(context, weights)``, composed: the masked softmax (mask True = attend), then Σ α h."""
    e, h, mask = read_inputs("attend", scores, values, mask)
    weights = F.softmax_op(e, -1, mask)                              # (B, [T,] S): α
    return weighted_sum(weights, h), weights                         # (B, [T,] D)


def read(scores, values, mask=None) -> tuple:
    """``(context, weights)`` as ``attend`` gives them, c as one op."""
    return read_op(*read_inputs("read", scores, values, mask))


def read_op(e, h, mask, dropout: float = 0.0, rng=None) -> tuple:
    """The read of Tensors e (B, [T,] S), h (B, S, D) that fit, the mask ready to broadcast; with
    ``dropout`` p: c = Σ_j α̃_j h_j, α̃_j = α_j m_j / (1 − p), m_j ~ Bernoulli(1 − p) (``rng``)."""
    weights = F.softmax_op(e, -1, mask)                              # (B, [T,] S): α
    if dropout != 0:
        return weighted_sum(F.dropout(weights, dropout, rng=rng), h), weights  # (B, [T,] D)
    c = weighted_sum(weights.data, h.data)                           # (B, [T,] D)

    def vjp(xp, g, c, e, h):                                         # g (B, [T,] D)
        a = xp.saved(weights.data, lambda: weights)  # α; under create_graph, the weights tensor
        if a.ndim == h.ndim - 1:                                     # one query: α_j g
            return score_gradient(a, h, c, g), a[..., :, None] * g[..., None, :]  # (B, S, D)
        return score_gradient(a, h, c, g), a.swapaxes(-1, -2) @ g     # (B, S, D): Σ_t α_tj g_t
    return Tensor._from_op(c, (e, h), vjp, "read"), weights


def score_gradient(a, h, c, g):
    """∂L/∂e_j = α_j g·(h_j − c) for every j, unchecked: arrays, or Tensors (differentiable)."""
    g_dot_h = weighted_sum(g, h.swapaxes(-1, -2))                    # (B, [T,] S): g·h_j
    g_dot_c = (g * c).sum(axis=-1, keepdims=True)                    # (B, [T,] 1): g·c
    return a * (g_dot_h - g_dot_c)                                   # (B, [T,] S)


def score_grad(weights, values, context, grad_context):
    """∂L/∂e_j = α_j g·(h_j − c) for weights α (B, [T,] S), values h (B, S, D), context c and
    grad_context g (B, [T,] D), checked; Tensors stay Tensors (differentiable)."""
    a, h, c, g = (x if isinstance(x, Tensor) else np.asarray(x)
                  for x in (weights, values, context, grad_context))
    fit("score_grad", values=(h, "B h? S+ D"), weights=(a, "B h? T? S"),
        context=(c, "B h? T? D"), grad_context=(g, "B h? T? D"))
    return score_gradient(a, h, c, g)
