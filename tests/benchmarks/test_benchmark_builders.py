"""The benchmark builders run and measure what they say (timing itself is not tested: the
numbers live in benchmarks/README.md); each command's help names it as it is typed."""
import math
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from benchmarks import attention_scaling, reference

REPO = Path(__file__).parent.parent.parent


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


@pytest.mark.parametrize("module", ["benchmarks", "benchmarks.bench_ops", "benchmarks.bench_read",
                                    "benchmarks.profile_step", "benchmarks.bench_hvp",
                                    "benchmarks.instructions"])
def test_help_names_the_command_as_typed_and_no_internal_issue_numbers(module):
    r = subprocess.run([sys.executable, "-m", module, "--help"], cwd=REPO, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f"usage: python -m {module} ")
    assert "issue" not in r.stdout.lower()


def test_bench_ops_keeps_freed_memory_as_the_suite_does():
    """Without it, glibc hands big freed blocks back and the next op faults them in again:
    float64 mul at 256 x 256 measured 890 µs instead of ~50."""
    r = subprocess.run([sys.executable, "-m", "benchmarks.bench_ops", "--no-torch", "--sizes",
                        "8", "--dtypes", "float32", "--ops", "add", "--repeat", "1",
                        "--min-time", "0.0001"], cwd=REPO, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert "glibc malloc: freed memory kept for reuse (minigrad/runtime/malloc.py)" in r.stdout


def test_the_torch_memory_child_builds_minigrads_model_before_its_baseline(monkeypatch):
    """The minigrad model whose weights torch copies is minigrad's memory, not torch's.

    torch itself is replaced by a stand-in: this checks the order of the child's steps, which
    needs no torch (the suite never requires it; ``python -m benchmarks --compare torch``
    checks the twin's losses against minigrad's before timing anything)."""
    import benchmarks
    from benchmarks import memory
    from minigrad.runtime import blas
    fake_torch = types.SimpleNamespace(set_num_threads=lambda n: None)
    monkeypatch.setitem(sys.modules, "torch", fake_torch)
    monkeypatch.setitem(sys.modules, "benchmarks.torch_reference", types.ModuleType("stub"))
    monkeypatch.setattr(benchmarks, "torch_reference", sys.modules["benchmarks.torch_reference"],
                        raising=False)
    threads = blas.get_threads()
    events, model = [], reference.reference_model
    monkeypatch.setattr(memory, "high_water_mb", lambda: events.append("high-water mark") or 0.0)
    monkeypatch.setattr(reference, "reference_model",
                        lambda *args: events.append("minigrad model") or model(*args))
    monkeypatch.setattr(reference, "build_torch_all",
                        lambda dtype, weights: events.append("torch model") or {"step": lambda: None})
    try:
        memory.child("torch", "float32")
    finally:
        if threads:
            blas.set_threads(threads)
    assert events[:3] == ["minigrad model", "high-water mark", "torch model"]


def test_the_hessian_vector_product_benchmark_checks_its_minigrad_side(monkeypatch):
    """bench_hvp's minigrad Hv equals central differences of the gradient (torch not needed),
    and a Hv off by 1% fails that check."""
    from benchmarks import bench_hvp
    p = bench_hvp.problem(8, 4, 5, "float64")
    hv = bench_hvp.minigrad_hvp(p)()
    assert [h.shape for h in hv] == [(5, 4), (bench_hvp.C, 5)]
    bench_hvp.check_differences(p)
    good = bench_hvp.minigrad_hvp
    monkeypatch.setattr(bench_hvp, "minigrad_hvp", lambda q: lambda: [h * 1.01 for h in good(q)()])
    with pytest.raises(AssertionError, match="central differences"):
        bench_hvp.check_differences(p)
