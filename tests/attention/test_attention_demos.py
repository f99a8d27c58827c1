"""The demos (``python -m attention``) print the sources' numbers; each is checked here."""
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from attention.demos import source_000, source_004
from attention.__main__ import DEMOS, main

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_004_example_prints_the_articles_table_and_contexts(tmp_path):
    result = source_004.example(out_dir=tmp_path)
    v = result.values
    np.testing.assert_array_equal(np.round(v["scores"], 4), [[1.5232, 0.9640, 0.2335],
                                                             [0.2335, 0.9640, 1.5232]])
    np.testing.assert_array_equal(np.round(v["weights"], 4), [[0.5414, 0.3095, 0.1491],
                                                              [0.1491, 0.3095, 0.5414]])
    np.testing.assert_array_equal(np.round(v["contexts"], 6), [[1.392334, -0.607666],
                                                               [0.607666, -1.392334]])
    for line in ("I       (2, 0)     1.5232  0.5414     0.2335  0.1491",
                 "like    (1, -1)    0.9640  0.3095     0.9640  0.3095",
                 "cats    (0, -2)    0.2335  0.1491     1.5232  0.5414",
                 "context c_A = Σ_j α_j h_j = (1.392334, -0.607666)",
                 "context c_B = Σ_j α_j h_j = (0.607666, -1.392334)"):
        assert line in result.text
    # the ablation: equal weights whatever the state
    np.testing.assert_allclose(v["ablation_weights"], 1 / 3, atol=1e-15)
    assert result.text.count("weights 0.3333 0.3333 0.3333   c = (1.0000, -1.0000)") == 5
    shown = [float(x) for x in re.findall(r"^  s = +(-?[\d.]+):", result.text, re.M)]
    assert shown == [-3, -1, 0, 1, 3]  # states from the swept range [−3, 3] that the plot shows
    # the curves: α_I(s) = α_cats(−s) on the symmetric grid s ∈ [−3, 3]
    s, w = v["curve_states"], v["curve_weights"]
    assert s[0] == -3 and s[-1] == 3
    np.testing.assert_allclose(w[:, 0], w[::-1, 2], atol=1e-12)
    assert "α(I)" in result.text and "decoder state s" in result.text
    (svg,) = result.files
    assert os.path.basename(svg) == "004_weights_vs_state.svg"
    assert ET.parse(svg).getroot().tag.endswith("svg")


def test_004_gradient_formula_beside_finite_differences_and_autograd():
    result = source_004.gradient()
    for name, sign in (("A", 1), ("B", -1)):
        v = result.values[name]
        np.testing.assert_allclose(v["formula"], v["numeric"], rtol=0, atol=1e-8)
        np.testing.assert_allclose(v["formula"], v["autograd"], rtol=0, atol=1e-12)
        assert abs(v["formula"].sum()) < 1e-12
        rows = [0.328996, -0.121434, -0.207561]                   # ∂c/∂e_j, state A
        expected = rows if sign == 1 else [-r for r in rows[::-1]]
        np.testing.assert_array_equal(np.round(v["dc_de"][:, 0], 6), expected)
    assert "(0.328996, 0.328996)" in result.text and "(-0.207561, -0.207561)" in result.text
    assert "0.493493306" in result.text


def test_000_scaling_std_is_sqrt_d_raw_and_1_scaled():
    result = source_000.scaling()
    for d, (raw, scaled) in result.values["std"].items():
        assert abs(raw / np.sqrt(d) - 1) < 0.05 and abs(scaled - 1) < 0.05
        assert f"{raw:>9.3f}  {np.sqrt(d):>7.3f}  {scaled:>12.3f}" in result.text
    raw, scaled = result.values["softmax"]["raw"], result.values["softmax"]["scaled"]
    assert raw["max_weight"] > 0.8 > 0.5 > scaled["max_weight"]
    assert raw["entropy"] < 0.5 < 1.5 < scaled["entropy"]
    assert raw["one_hot"] > 0.3 and scaled["one_hot"] == 0
    assert raw["jacobian"] < scaled["jacobian"]
    assert f"{raw['max_weight']:>9.3f}  {raw['entropy']:>8.3f}" in result.text
    assert 0.005 < result.values["beyond_20"] < 0.03          # tails only: about 1.3 %
    # the row range (max - min over 8 keys) scales with std √d = 8: median ≈ 2.85 std
    assert 18 < raw["range"][1] < 26 and 2.3 < scaled["range"][1] < 3.3
    np.testing.assert_allclose(raw["range"][1] / scaled["range"][1], 8.0, rtol=0.1)
    assert "row range" in result.text and "softmax(e + c) = softmax(e)" in result.text


def test_000_path_length_rnn_gradient_vanishes_attention_does_not(tmp_path):
    result = source_000.path_length(out_dir=tmp_path, lengths=(2, 10, 20, 40), batch=8)
    rnn, att = result.values["rnn"], result.values["attention"]
    assert np.all(np.diff(np.log(rnn)) < 0)                # shrinks with every length
    assert rnn[2] < 1e-3 and att[2] > 1e-2                 # n = 20: geometric vs ~1/n
    assert att[-1] / rnn[-1] > 1e6
    for n, r, a in zip((2, 10, 20, 40), rnn, att):
        assert f"{n:>5}  {r:>10.2e}  {a:>10.2e}" in result.text
    assert ET.parse(result.files[0]).getroot().tag.endswith("svg")


def test_cli_lists_runs_and_rejects(tmp_path, capsys):
    assert main(["--list"]) == 0
    assert capsys.readouterr().out.split("\n")[0].startswith("004-example")
    keep = tmp_path / "notes.txt"
    keep.write_text("mine")
    assert main(["004-example", "004-gradient", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "0.5414" in out and "∂L/∂e_j" in out
    assert sorted(os.listdir(tmp_path)) == ["004_weights_vs_state.svg", "notes.txt"]
    assert keep.read_text() == "mine"
    assert main(["000-scaling", "--no-svg"]) == 0
    with pytest.raises(SystemExit):
        main(["no-such-demo"])
    with pytest.raises(SystemExit):
        main(["004-example", "--out", str(keep)])
    assert keep.read_text() == "mine"


def test_python_dash_m_attention_runs_every_demo(tmp_path):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    run = subprocess.run([sys.executable, "-m", "attention"], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stderr == ""
    for name in DEMOS:
        assert DEMOS[name][1]  # each has a description
    assert "1.5232" in run.stdout and "(0.607666, -1.392334)" in run.stdout
    assert "std(q·k)" in run.stdout and "tanh RNN" in run.stdout
    assert sorted(os.listdir(tmp_path / "attention-demos")) == sorted(
        ["000_path_length.svg", "004_graph.svg", "004_explore.html", "004_weights_vs_state.svg",
         "000_alignment_untrained.svg", "000_alignment_trained.svg", "004_hard_vs_soft.svg",
         "003_hierarchical.svg", "003_temperature_example.svg", "003_temperature_toy_T0.25.svg",
         "003_temperature_toy_T4.svg"])


def test_output_piped_into_a_reader_that_stops_early_ends_quietly(tmp_path):
    """`python -m attention | head`: when the reader goes away, no BrokenPipeError traceback."""
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    run = subprocess.Popen([sys.executable, "-m", "attention", "004-gradient", "--no-svg"],
                           cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    run.stdout.close()                                   # the reader has gone before any output
    _, err = run.communicate(timeout=120)
    assert b"BrokenPipeError" not in err and b"Traceback" not in err, err.decode()
    assert run.returncode in (0, 1)                      # 1: the output was cut short


def test_the_hessian_demo_matches_its_formula_two_ways():
    result = DEMOS["004-hessian"][0]()
    for state in ("A", "B"):
        v = result.values[state]
        np.testing.assert_allclose(v["autograd"], v["formula"], atol=1e-14)
        np.testing.assert_allclose(v["numeric"], v["formula"], atol=1e-8)
        np.testing.assert_allclose(v["formula"].sum(axis=1), 0, atol=1e-15)  # shift invariance
    assert "δ_ij a_j − α_i a_j − a_i α_j" in result.text


def test_the_runner_switches_the_kernels_on_for_the_demos_that_train_only():
    """``run`` is the one place the demos' kernels are switched on; the toy model trains to the
    same numbers with them, and the graph drawing (which trains nothing) shows the core."""
    from attention.demos import run
    from attention.demos.toy import train_toy, weights_of
    from attention.kernels import FusedAdditiveScore
    assert sorted(n for n, d in DEMOS.items() if d.trains) == ["000-alignment", "003-temperature",
                                                                "004-hard"]
    core, fast = train_toy(3, steps=20), train_toy(3, steps=20, kernels=True)
    assert type(core.model.score).__name__ == "AdditiveScore"
    assert type(fast.model.score) is FusedAdditiveScore
    np.testing.assert_allclose(weights_of(fast.model, fast.example),
                               weights_of(core.model, core.example), rtol=0, atol=1e-9)
    assert "α (weights) = softmax" in run("004-graph").text
