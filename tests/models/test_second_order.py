"""A default ``Seq2Seq`` loss (Bahdanau decoder, additive score, GRU cells) can be differentiated
twice: ``grad(loss, params, create_graph=True)`` is a differentiable gradient, and the
Hessian-vector product through it equals finite differences of the first gradient."""
import numpy as np
import pytest

import minigrad as mg
from model_helpers import batch, tiny_model


def flat(arrays) -> np.ndarray:
    return np.concatenate([np.ravel(a) for a in arrays])


@pytest.mark.parametrize("overrides", [dict(), dict(reset_after=False)],
                         ids=["default", "reset-before"])
def test_hessian_vector_product_of_the_loss_matches_finite_differences(overrides):
    model = tiny_model(**overrides)                         # float64, the core model
    src, src_mask, tgt, tgt_mask = batch()                  # with source and target padding
    params = model.parameters()
    rng = np.random.default_rng(0)
    u = [rng.standard_normal(p.shape) for p in params]

    def gradient():                                         # ∇L(θ), arrays
        return mg.grad(model.loss(src, tgt, src_mask, tgt_mask), params)

    grads = mg.grad(model.loss(src, tgt, src_mask, tgt_mask), params, create_graph=True)
    assert all(isinstance(g, mg.Tensor) for g in grads)
    g_dot_u = sum((g * ui).sum() for g, ui in zip(grads, u))   # (∇L)·u, a scalar Tensor
    hvp = flat(mg.grad(g_dot_u, params))                    # H u

    eps, originals = 1e-5, [p.data.copy() for p in params]
    for p, d, ui in zip(params, originals, u):
        p.data = d + eps * ui
    plus = flat(gradient())
    for p, d, ui in zip(params, originals, u):
        p.data = d - eps * ui
    minus = flat(gradient())
    for p, d in zip(params, originals):
        p.data = d
    np.testing.assert_allclose(hvp, (plus - minus) / (2 * eps), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(flat(gradient()), flat(g.data for g in grads), rtol=1e-12,
                               atol=1e-14)  # and the first gradient is the ordinary one
