"""The walkthroughs (models/app/tours): each runs, follows its source's sections in order, and
every number it compares with the source agrees to the printed digit."""
from __future__ import annotations

import pathlib
import subprocess
import sys

import numpy as np
import pytest

from models.app.tours.__main__ import main
from models.app.tours import HERE, TOURS, run
from models.app.tours import book

HEADINGS_004 = ["一、从人的注意力，到按需要读取信息", "二、没有 Attention，模型也可以处理上下文",
                "三、把“只能使用摘要”改成“可以重新读取”", "四、从当前需求，到一组读取权重",
                "五、早期 Attention 怎样计算“匹配”？", "六、同一份内容，换一种状态就换一种读取",
                "七、没有人标注“应该看哪里”，它怎样学会？", "八、从早期 Attention，走向下一种结构"]
HEADINGS_000 = ["一、歷史背景:一個翻譯工程問題引發的革命", "二、思想前史:對齊與檢索的可微化",
                "三、自注意力的前夜:從「查別人」到「查自己」", "四、程式碼實作",
                "五、注意力的歷史地位:從技巧到範式", "六、本節重點", "七、思考問題"]
HEADINGS_003 = ["1. 从“硬对齐”到“软对齐”Attention机制的诞生背景", "2. Bahdanau Attention联合学习的对齐之道",
                "3. Luong Attention解耦与简化的高效变体", "4. 深入对比Bahdanau vs. Luong 的五个关键维度",
                "5. 从经典Attention到现代模型的桥梁价值", "6. 实战中的调参经验与扩展思考"]
HEADINGS = {"000": HEADINGS_000, "003": HEADINGS_003, "004": HEADINGS_004}


@pytest.fixture(scope="module")
def ran(tmp_path_factory):
    """name -> (the walkthrough's record, its output folder): each walkthrough run once."""
    done = {}

    def get(name: str) -> tuple:
        if name not in done:
            out = tmp_path_factory.mktemp(f"tour{name}")
            done[name] = run(name, str(out)), out
        return done[name]
    return get


def test_004_follows_the_sources_sections_in_order(ran):
    record, _ = ran("004")
    assert record.sections == HEADINGS_004


def test_004_every_printed_number_of_the_source_agrees(ran):
    record, _ = ran("004")
    assert len(record.checks) == 16                                   # §6: 12 table cells, 4 context entries
    assert all(c.agrees for c in record.checks), [c for c in record.checks if not c.agrees]


def test_004_what_its_cells_compute(ran):
    v = ran("004")[0].values
    assert v["summary_is_last_state"]                                  # §2: c = h_T
    alpha = v["alpha_rows"]                                            # §3: re-read per state
    np.testing.assert_allclose(alpha.sum(axis=1), 1.0, atol=1e-12)
    assert np.ptp(alpha, axis=0).min() > 0.1                           # every column moves with s
    s = (v["sparsemax_A"] > 0).astype(float)                           # §4: exact zero, Jacobian
    assert s.tolist() == [1.0, 1.0, 0.0]
    np.testing.assert_allclose(v["jacobian_sparsemax"], np.diag(s) - np.outer(s, s) / s.sum(), atol=1e-15)
    a = np.array([0.5414, 0.3095, 0.1491])
    np.testing.assert_allclose(v["jacobian_softmax"], np.diag(a) - np.outer(a, a), atol=1e-4)
    assert v["hard_grad"] is None                                      # the hard read: no gradient
    assert v["score_formula_gap_-1"] < 1e-15 and v["score_formula_gap_+1"] < 1e-15  # §5
    assert v["ablation_spread"] < 1e-12                                # no tanh: state has no say
    assert v["sum_over_mean"] == pytest.approx(4.0, rel=1e-12)         # §7: sum = N · mean
    assert v["expansion_gap"] < 1e-15                                  # §6: the expansion
    assert v["grad_gap_A"] < 1e-8 and v["grad_gap_B"] < 1e-8           # α g·(h − c) = autograd = FD
    assert v["dot_equals_general"]                                     # §8: W = I


def test_004_draws_its_figures_as_svg_files(ran):
    record, out = ran("004")
    names = sorted(pathlib.Path(f).name for f in record.files)
    assert names == ["004_s3_architectures.svg", "004_s5_with_without_tanh.svg",
                     "004_s6_weights_vs_state.svg"]
    for f in record.files:
        text = pathlib.Path(f).read_text(encoding="utf-8")
        assert text.startswith("<svg") and text.rstrip().removesuffix(book.MARK).rstrip().endswith("</svg>")
    assert sorted(p.name for p in out.iterdir()) == names


@pytest.mark.parametrize("name", sorted(TOURS))
def test_each_walkthrough_is_a_percent_script_with_a_try_it_per_section(name):
    text = (HERE / TOURS[name][0]).read_text(encoding="utf-8")
    cells = text.split("# %%")[1:]
    assert text.startswith("# %% [markdown]") and len(cells) >= 2 * len(HEADINGS[name])
    for cell in cells:
        if cell.startswith(" [markdown]"):
            assert all(line.startswith("#") for line in cell.splitlines()[1:] if line.strip())
    assert text.count("\nsection(") == text.count("\ntry_it(") == len(HEADINGS[name])


def test_a_walkthrough_runs_as_a_plain_script(tmp_path):
    done = subprocess.run([sys.executable, str(HERE / "source_004.py")], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "c_B[2]" in done.stdout and "✗" not in done.stdout
    assert len(list((tmp_path / "attention-tour").glob("*.svg"))) == 3


def test_the_command_line_runs_a_tour_and_says_how_many_numbers_agree(tmp_path, capsys):
    assert main(["004", "--out", str(tmp_path / "figs")]) == 0
    assert "16 of 16 numbers agree" in capsys.readouterr().out
    assert main(["--list"]) == 0 and "004" in capsys.readouterr().out
    assert main(["004", "--no-svg"]) == 0
    assert "[figure 004_s3_architectures.svg: not written" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["999"])


def test_check_agrees_only_to_the_printed_digit():
    book.begin(None)
    assert book.check("rounds to it", 0.54139, "0.5414")
    assert book.check("unicode minus", -0.6076664, "−0.607666")
    assert not book.check("one digit off", 0.5416, "0.5414")
    assert not book.check("sign", 0.607666, "−0.607666")
    assert [c.agrees for c in book.BOOK.checks] == [True, True, False, False]


def test_000_follows_the_sources_sections_and_its_printed_numbers_agree(ran):
    record, out = ran("000")
    assert record.sections == HEADINGS_000
    assert [c.what for c in record.checks] == ["4.1 row 1: Σ α", "4.1 row 2: Σ α",
                                               "4.2 raw dot std (≈ √64)", "4.2 scaled std (≈ 1)"]
    assert all(c.agrees for c in record.checks)
    assert sorted(p.name for p in out.iterdir()) == ["000_s4_alignment.svg", "000_s4_path_length.svg"]


def test_000_what_its_cells_compute(ran):
    v = ran("000")[0].values
    assert v["summary_width"] == 16 and v["soft_address_argmax"] == 2
    assert v["typo_is_uniform"] and v["softmax_gap"] < 1e-15          # 2.2: the typo, literally
    for d, (raw, scaled) in v["stds"].items():                          # 2.3: std √d, then 1
        assert abs(raw / np.sqrt(d) - 1) < 0.05 and abs(scaled - 1) < 0.05
    assert (v["hop1"], v["hop2"]) == ("B", "C")                         # §3: two hops, two facts
    np.testing.assert_allclose(v["self_rows"], 1.0, atol=1e-12)
    assert v["diagonal"] > 0.9 and v["untrained_max"] < 0.5            # 4.3: trained diagonal
    rnn, att = v["paths"]["rnn"], v["paths"]["attention"]               # 4.4: O(n) vs O(1)
    assert (np.diff(np.log(rnn)) < 0).all() and att[-1] / rnn[-1] > 1e20
    assert v["stacked_grad"] > 0 and v["gradcheck"]
    assert v["q1_sparse_zero"] and v["q3_same"] and v["q3_differ"] > 0    # weights ≠ attribution
    one, heads = v["q1_heads"]                  # one head blends; two heads keep one value each
    assert np.allclose(one, [0.5, 0.5], atol=1e-3) and heads[0][0] > 0.95 and heads[1][1] > 0.95
    for rho in (0.0, 0.5, 0.9):                                          # Q2: mean ρd, var d(1+ρ²)
        mean, var, want_mean, want_var = v[f"q2_{rho}"]
        assert abs(mean - want_mean) < 1.0 and abs(var / want_var - 1) < 0.05
    assert v["q4_gap"] < 1e-12 and v["q5_gap"] < 1e-12
    (raw_one_hot, raw_jac), (scaled_one_hot, scaled_jac) = v["saturation"]["raw"], v["saturation"]["scaled"]
    assert raw_one_hot > scaled_one_hot and raw_jac < scaled_jac      # 2.3: raw scores saturate
    blind, seen = v["order_gaps"]                                      # §3: positions give order
    assert blind < 1e-12 and seen > 0.1
    assert v["padded_weight"] == 0.0                                   # 4.1: the padding mask


def test_003_follows_the_sources_sections_and_draws_its_figures(ran):
    record, out = ran("003")
    assert record.sections == HEADINGS_003 and record.checks == []
    assert sorted(p.name for p in out.iterdir()) == ["003_s1_bottleneck.svg", "003_s6_alignments.svg",
                                                     "003_s6_hierarchical.svg"]


def test_003_measures_what_the_source_claims(ran):
    """Training figures as ranges (BLAS kernels round differently); structure exactly."""
    v = ran("003")[0].values
    fixed, bahdanau = v["by_length"]["fixed summary"], v["by_length"]["Bahdanau"]
    assert fixed[8] < 0.3 and bahdanau[8] > fixed[8] + 0.3            # §1: the bottleneck
    assert v["p1_sum"] == pytest.approx(1.0, abs=1e-5)
    (b_dep, b_acc, b_flat), (l_dep, l_acc, l_flat) = v["delay"]["Bahdanau"], v["delay"]["Luong"]
    assert l_dep == 0.0 and b_dep > 0.1                                # §3.2: the order, exactly
    assert b_acc > 0.9 and l_acc > 0.8 and b_flat < b_acc - 0.3 and l_flat < l_acc - 0.3
    assert [row[0] for row in v["table"]][:4] == ["papers", "order (‖∂s_t/∂read_t‖)", "score",
                                                  "fusion of c_t"]
    assert v["by_hand_gap"] < 1e-5                                     # §5: the forward by hand
    assert v["temperature_0.5"] > v["temperature_1.0"] > v["temperature_2.0"]  # §6: T sharpens
    assert v["window_far"] == 0.0 and v["local_outside"] == 0.0
    for name in ("Bahdanau", "Luong"):
        matching, on_eos, through_attention = v["sensible"][name]
        assert matching > 0.5 and on_eos < 0.1 and through_attention > 0.5  # sensible, not lazy
    han = v["hierarchical"]                                            # experience three
    assert han["accuracy"] > 0.95 and sum(b > 0.9 for b, _ in han["by_class"]) >= 2


def test_in_a_notebook_a_figure_is_displayed_not_written(tmp_path, monkeypatch):
    """Under IPython (a notebook kernel), ``show`` hands the drawing to IPython's display,
    whose ``_repr_svg_`` draws it inline; nothing is written."""
    import types
    shown = []
    fake = types.ModuleType("IPython")
    fake.get_ipython = lambda: object()
    display = types.ModuleType("IPython.display")
    display.display = shown.append
    monkeypatch.setitem(sys.modules, "IPython", fake)
    monkeypatch.setitem(sys.modules, "IPython.display", display)
    from minigrad.draw import line_plot_svg
    book.begin(str(tmp_path))
    drawing = line_plot_svg({"y": ([0, 1], [0, 1])})
    book.show(drawing, "x.svg")
    assert shown == [drawing] and "<svg" in drawing._repr_svg_()
    assert book.BOOK.files == [] and not (tmp_path / "x.svg").exists()
