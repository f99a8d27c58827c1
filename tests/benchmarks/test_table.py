"""``python -m benchmarks.table`` runs end to end (one short run, no timing asserted), its rows
say why when a library is missing, and ``--write`` replaces only the part of a README between
its markers. The kernels path it measures equals the core on the reference step."""
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from benchmarks import reference, table

REPO = Path(__file__).parent.parent.parent


def test_the_kernels_equal_the_core_on_the_reference_step():
    """The step the table times: kernels (one node per sequence) and core, float64, 1e-12."""
    src, src_mask, tgt, tgt_mask = reference.reference_batch(0)
    results = []
    for kernels in (True, False):
        model = reference.reference_model("float64", kernels=kernels)
        loss = model.loss(src, tgt, src_mask, tgt_mask)
        loss.backward()
        results.append([loss.data] + [p.grad for p in model.parameters()])
    for i, (a, b) in enumerate(zip(*results)):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12, err_msg=f"loss/gradient {i}")


def test_the_flop_count_is_every_product_of_the_model():
    """The count read off the core step's graph equals the model's products counted by hand, at
    small sizes where the encoder's and the decoder's recurrent products share a shape (a count
    keyed by shape alone lost the encoder's)."""
    B, S, T, V, E, H, A = 3, 4, 5, 7, 2, 3, 4
    K, G = 2 * H, 3 * H
    forward = (2 * S * B * E * G + 2 * S * B * H * G     # encoder: W_ih x_j, W_hh h_j, both ways
               + B * K * H + B * S * K * A               # s_0 = tanh(W_init mean h), W_k h_j
               + T * (B * H * A + B * S * A + B * S * K)  # per step: W_q s, vᵀ u_j, Σ_j α_j h_j
               + T * (B * (E + K) * G + B * H * G)        # the decoder's GRU
               + B * T * (H + K) * V)                     # the output layer
    backward = 2 * forward - 2 * B * H * G               # two per product; no ∂L/∂h_0 (h_0 = 0)
    products = table.step_products(dict(B=B, S=S, T=T, V=V, E=E, H=H, A=A))
    assert table.flops(products) == 2 * (forward + backward)
    assert products[1, B, H, G] == 2 * S + T              # W_hh h: encoder and decoder, forward


def test_the_header_names_the_simd_level():
    from numpy._core import _multiarray_umath as u
    found = [f for f in u.__cpu_dispatch__ if u.__cpu_features__.get(f)]
    assert table.simd().startswith(" ".join(found) or "none")
    assert table.simd().endswith(" ".join(u.__cpu_baseline__))


def test_avx2_reaches_numpy_openblas_and_torch_before_they_load():
    """``--avx2``'s children run as on a CPU without AVX-512: NumPy's loops, OpenBLAS's kernel and
    PyTorch's kernels (when installed) each say so in the header's machine line."""
    from numpy._core import _multiarray_umath as u
    if not u.__cpu_features__.get("AVX2"):  # every x86 CI machine has it: there this must run
        assert os.environ.get("CI") != "true", "CI=true: this CPU has no AVX2"
        pytest.skip("this CPU has no AVX2")
    probe = "import json; from benchmarks import table; print(json.dumps(table.machine()))"
    out = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True,
                         env=table.child_env(1, avx2=True), timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    m = json.loads(out.stdout)
    assert m["simd"].startswith("X86_V3 over baseline"), m["simd"]
    assert table.child_env(1, avx2=True)["OPENBLAS_CORETYPE"] == "Haswell"
    if importlib.util.find_spec("threadpoolctl"):            # what names OpenBLAS's kernel
        assert m["kernel"] == "Haswell", m
    assert m["torch"] == ("AVX2" if importlib.util.find_spec("torch") else "not installed"), m
    assert table.child_env(2)["OPENBLAS_NUM_THREADS"] == "2"


def test_one_short_run_prints_every_row_and_the_limits():
    out = subprocess.run([sys.executable, "-m", "benchmarks.table", "--runs", "1", "--rounds", "1",
                          "--threads", "1", "--dtypes", "float64",
                          "--skip", "torch.compile,JAX jit,HIPS autograd,MyGrad"],
                         cwd=REPO, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    text = out.stdout
    for row in table.TRAIN:
        assert f"| {row} |" in text
    assert "| torch.compile | skipped |" in text and "| JAX jit | skipped |" in text
    assert "BLAS:" in text and "matmul GFLOP" in text and "kernels ÷ floor ≤ 0.95" in text
    assert "SIMD (NumPy's loops): " in text and "BLAS kernel: " in text
    assert "PyTorch's kernels: " in text
    for workload in ("greedy, batch 64", "beam 4, 1 sentence"):
        assert f"| {workload} |" in text
    if importlib.util.find_spec("torch"):                     # the small graphs: against torch
        for graph in table.SMALL:
            assert f"| {graph} |" in text and f"| {graph} ÷ torch eager ≤ " in text


def test_the_small_graphs_give_minigrad_and_torch_the_same_gradients():
    if os.environ.get("CI") != "true":             # CI installs torch: there this must run
        pytest.importorskip("torch")
    leaves, graphs = table.small_graphs("float64")
    for graph, ops in graphs.values():
        for side in leaves:
            graph(*side)
        for mine, theirs in zip(*leaves):
            np.testing.assert_allclose(mine.grad, theirs.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_a_library_that_is_not_installed_gets_a_row_saying_so(monkeypatch):
    assert table.library_step("no_such_autograd_library", "float64") == "not installed"
    monkeypatch.setitem(sys.modules, "jax", None)                  # import jax raises ImportError
    assert table.jax_step("float64") == "not installed"


def test_write_replaces_only_between_the_markers(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text(f"before\n{table.START}\nold table\n{table.END}\nafter\n", encoding="utf-8")
    table.write("new table\n", readme)
    assert readme.read_text(encoding="utf-8") == \
        f"before\n{table.START}\nnew table\n{table.END}\nafter\n"
    second = "".join(f"{a}\nold {b}\n{c}\n" for a, b, c in
                     ((table.START, "first", table.END), (*table.MARKERS[True][:1], "second",
                                                           table.MARKERS[True][1])))
    readme.write_text(second, encoding="utf-8")
    table.write("new second\n", readme, avx2=True)                  # the first table stays
    assert readme.read_text(encoding="utf-8") == second.replace("old second", "new second")
    plain = tmp_path / "plain.md"
    plain.write_text("no markers\n", encoding="utf-8")
    with pytest.raises(SystemExit, match="markers"):
        table.write("x", plain)
    assert plain.read_text(encoding="utf-8") == "no markers\n"


def test_skip_reads_a_row_name_with_its_own_comma_and_names_an_unknown_row():
    assert table.parse_skip("kernels, per step,MyGrad") == {"kernels, per step", "MyGrad"}
    assert table.parse_skip("torch.compile, HIPS autograd,") == {"torch.compile", "HIPS autograd"}
    assert table.parse_skip("") == set()
    with pytest.raises(SystemExit, match=r"--skip: 'kernels' is not a row that can be skipped"):
        table.parse_skip("kernels")                    # the kernels row is what the table is for
    with pytest.raises(SystemExit, match=r"--skip: 'MyGrd'.*rows: kernels, per step, "):
        table.parse_skip("MyGrd")
