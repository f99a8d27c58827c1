"""The floor (benchmarks/floor.py), the hand-written NumPy step the table compares with, computes
the reference model's loss and every gradient as the core model does, and its Adam is
minigrad's; ``loss_fn``, what HIPS autograd and MyGrad differentiate, is the same loss."""
import numpy as np
import pytest

from benchmarks import floor, reference
from minigrad import optim


@pytest.fixture(scope="module")
def core():
    """The core model's loss and gradients by state_dict name, float64, on the reference batch."""
    model = reference.reference_model("float64", kernels=False)
    src, src_mask, tgt, tgt_mask = batch = reference.reference_batch(0)
    loss = model.loss(src, tgt, src_mask, tgt_mask)
    loss.backward()
    return model, batch, loss.item(), dict(zip(model.state_dict(), (p.grad for p in model.parameters())))


def test_the_floor_computes_the_core_models_loss_and_gradients(core):
    model, batch, loss, grads = core
    got, got_grads = floor.loss_and_grads(floor.params_of(model), batch)
    assert abs(got - loss) < 1e-12
    assert set(got_grads) == set(grads)
    for name, g in grads.items():
        np.testing.assert_allclose(got_grads[name], g, rtol=1e-10, atol=1e-14, err_msg=name)


def test_the_functional_loss_is_the_same_loss(core):
    model, batch, loss, _ = core
    assert abs(floor.loss_fn(floor.params_of(model), batch, np) - loss) < 1e-12


def test_the_floors_adam_is_minigrads():
    rng = np.random.default_rng(0)
    w = rng.standard_normal((3, 4))
    from minigrad.nn import Parameter
    p = Parameter(w.copy())
    ours, theirs = floor.Adam({"w": w.copy()}), optim.Adam([p], lr=reference.LR)
    for _ in range(3):
        g = rng.standard_normal((3, 4))
        p.grad = g.copy()
        theirs.step()
        ours.step({"w": g})
    np.testing.assert_allclose(ours.p["w"], p.data, rtol=1e-14)


def test_the_floor_step_trains_float32_in_float32():
    step = floor.build("float32")
    losses = [step() for _ in range(3)]
    assert losses[2] < losses[0]                      # Adam is reducing the loss
    assert abs(losses[0] - reference.build("float32")()) < 1e-4
