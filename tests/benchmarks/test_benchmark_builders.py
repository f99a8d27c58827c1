"""The benchmark builders run and measure what they say (timing itself is not tested: the
numbers live in benchmarks/README.md)."""
import math

import numpy as np

from benchmarks import attention_scaling, reference


def test_reference_builders_agree_on_the_loss():
    """forward() is the loss that step() then trains on, from the same initial weights."""
    loss = reference.build_forward("float64")()
    assert math.isclose(reference.build("float64")(), loss, rel_tol=1e-12)
    assert 3.0 < loss < 4.0  # about log(32) for an untrained model


def test_greedy_and_beam_builders_decode_every_example():
    greedy, beam = reference.build_decode("float32")(), reference.build_beam("float32")()
    assert len(greedy) == len(beam) == reference.BATCH
    assert all(1 <= len(t.tokens) <= reference.TGT_LEN for t in greedy + beam)


def test_attention_scaling_workload_returns_the_keys_gradient():
    grad = attention_scaling.build(20, "float64")()
    assert grad.shape == (attention_scaling.B, 20, attention_scaling.K)
    mask = attention_scaling.inputs(20, "float64")["mask"]
    assert np.all(grad[~mask] == 0)  # padded keys get no weight, hence no gradient
    assert np.abs(grad[mask]).min() > 0


def test_exponent_of_a_power_law():
    sizes = [20, 50, 100, 400]
    assert math.isclose(attention_scaling.exponent(sizes, [3e-4 * s for s in sizes]), 1.0)
    assert math.isclose(attention_scaling.exponent(sizes, [s ** 2 for s in sizes]), 2.0)
