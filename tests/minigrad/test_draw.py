"""Tests for minigrad/draw: the pictures parse, fit, escape and say what the data say."""
import math
import os
import re
import stat
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from hypothesis import given, strategies as st

from minigrad.draw import heatmap_svg, heatmap_text, line_plot_svg, line_plot_text
from minigrad.draw.common import nice_ticks

NS = "{http://www.w3.org/2000/svg}"


def attention_weights(rng: np.random.Generator, T: int, S: int) -> np.ndarray:
    """Rows that are probability distributions, as softmax attention gives them. (T, S)"""
    w = np.exp(rng.normal(size=(T, S)))
    return w / w.sum(axis=1, keepdims=True)


def cells(root: ET.Element) -> list:
    return [r for r in root.iter(NS + "rect") if r.get("class") == "cell"]


def luminance(hex_colour: str) -> float:
    r, g, b = (int(hex_colour[k:k + 2], 16) for k in (1, 3, 5))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def texts(root: ET.Element) -> list:
    return [t.text for t in root.iter(NS + "text")]


# --- heatmap_svg -------------------------------------------------------------------------------

def test_heatmap_svg_has_one_rect_per_cell_and_a_colour_bar():
    w = attention_weights(np.random.default_rng(0), 7, 9)
    root = ET.fromstring(heatmap_svg(w, list("abcdefg"), list("ABCDEFGHI"), title="t"))
    assert root.tag == NS + "svg"
    assert len(cells(root)) == 7 * 9
    rects = list(root.iter(NS + "rect"))
    assert sorted(r.get("class") for r in rects if r.get("class") != "cell") == \
        ["colorbar", "frame", "page"]
    bar = next(r for r in rects if r.get("class") == "colorbar")
    gradient = root.find(f".//{NS}linearGradient")
    assert bar.get("fill") == f"url(#{gradient.get('id')})"
    assert len(gradient.findall(NS + "stop")) >= 2
    assert {"0", "0.5", "1"} <= set(texts(root))
    assert set("abcdefgABCDEFGHI") <= set(texts(root))  # every label is drawn


def test_heatmap_svg_larger_weight_is_darker():
    ramp = np.linspace(0.0, 1.0, 11)[None, :]  # (1, 11)
    root = ET.fromstring(heatmap_svg(ramp, ["t"], [str(k) for k in range(11)]))
    lum = [luminance(c.get("fill")) for c in cells(root)]  # row-major, so left to right
    assert all(a > b for a, b in zip(lum, lum[1:])), lum


def test_heatmap_svg_escapes_labels_and_shows_invisible_tokens():
    rows, cols = ["<", "&", 'say "hi"'], ["<s>", "&amp;", " ", "\n"]
    svg = heatmap_svg(np.full((3, 4), 0.25), rows, cols, title="A & B <i>")
    root = ET.fromstring(svg)  # raises if anything was left unescaped
    drawn = texts(root)
    assert {"<", "&", 'say␣"hi"', "<s>", "&amp;", "␣", "␊", "A & B <i>"} <= set(drawn)
    assert "<s>" not in svg and "<i>" not in svg


def column_labels(root: ET.Element) -> dict:
    """{label: its <text> element} for the column labels (the ones above the grid)."""
    top = float(next(r for r in root.iter(NS + "rect") if r.get("class") == "frame").get("y"))
    out = {}
    for t in root.iter(NS + "text"):
        if t.get("class") == "col-label":
            m = re.search(r"translate\(([\d.]+),([\d.]+)\)", t.get("transform") or "")
            assert float(m.group(2) if m else t.get("y")) < top  # its foot is above the grid
            out[t.text] = t
    return out


def test_heatmap_svg_keeps_labels_upright_and_turns_only_the_long_ones():
    cols = ["S", "a", " ", ",", "-", "<eos>"]
    root = ET.fromstring(heatmap_svg(np.full((2, 6), 1 / 6), ["1", "<eos>"], cols))
    labels = column_labels(root)
    assert set(labels) == {"S", "a", "␣", ",", "-", "<eos>"}
    for c in "Sa␣,-":  # one character always fits a cell: upright, as it is read
        assert "rotate" not in (labels[c].get("transform") or ""), c
    assert "rotate(-90)" in labels["<eos>"].get("transform")  # wider than a cell: turned


def test_heatmap_svg_turned_label_stays_clear_of_the_titles():
    cols = list("Saturday, May 16, 1970") + ["<eos>"]  # the title is as wide as the grid
    root = ET.fromstring(heatmap_svg(np.full((3, len(cols)), 1 / len(cols)), list("abc"), cols,
                                     title="Saturday, May 16, 1970 → 1970-05-16",
                                     row_title="output", col_title="input"))
    title = next(t for t in root.iter(NS + "text") if t.get("class") == "title")
    col_title = next(t for t in root.iter(NS + "text") if t.get("class") == "col-title")
    eos = column_labels(root)["<eos>"]
    x, y = map(float, re.search(r"translate\(([\d.]+),([\d.]+)\)", eos.get("transform")).groups())
    fs = float(eos.get("font-size"))
    eos_top = y - len("<eos>") * fs * 0.62  # the turned label reads upwards from y
    assert float(title.get("y")) + 4 < float(col_title.get("y")) - 12  # descenders, cap height
    assert float(col_title.get("y")) + 4 < eos_top


def test_heatmap_svg_axis_titles_and_scale_label():
    w = np.full((4, 5), 0.2)
    root = ET.fromstring(heatmap_svg(w, list("abcd"), list("vwxyz"), row_title="output",
                                     col_title="input", scale_label="attention weight"))
    by_class = {t.get("class"): t for t in root.iter(NS + "text")}
    assert by_class["row-title"].text == "output" and "rotate(-90)" in \
        by_class["row-title"].get("transform")
    assert by_class["col-title"].text == "input"
    assert by_class["scale-label"].text == "attention weight"
    plain = ET.fromstring(heatmap_svg(w, list("abcd"), list("vwxyz"), scale_label=None))
    assert not {"row-title", "col-title", "scale-label"} & {t.get("class")
                                                             for t in plain.iter(NS + "text")}


def test_heatmap_svg_writes_path_atomically(tmp_path):
    target = tmp_path / "attn.svg"
    target.write_text("old contents")
    svg = heatmap_svg(np.eye(3), list("abc"), list("xyz"), path=target)
    assert target.read_text(encoding="utf-8") == svg
    assert [p.name for p in tmp_path.iterdir()] == ["attn.svg"]  # no temp file left behind


def test_svg_files_get_the_usual_permissions_not_the_temp_files_0600(tmp_path):
    old = os.umask(0o022)
    try:
        heatmap_svg(np.eye(2), list("ab"), list("xy"), path=tmp_path / "a.svg")
        line_plot_svg({"y": ([0, 1], [0, 1])}, path=tmp_path / "b.svg")
    finally:
        os.umask(old)
    for name in ("a.svg", "b.svg"):
        assert stat.S_IMODE(os.stat(tmp_path / name).st_mode) == 0o644


# --- heatmap_text ------------------------------------------------------------------------------

def test_heatmap_text_fits_width_and_marks_each_peak_darkest():
    T, S, width = 5, 40, 60
    peaks = [0, 9, 17, 30, 39]
    w = np.full((T, S), 0.1 / (S - 1))
    w[np.arange(T), peaks] = 0.9  # (T, S), rows sum to 1
    rows = ["le", "chat", "est", "noir", "<eos>"]
    cols = [chr(ord("a") + k % 26) for k in range(S)]
    out = heatmap_text(w, rows, cols, title="forty columns", max_width=width)
    lines = out.splitlines()
    assert all(len(line) <= width for line in lines), max(map(len, lines))
    assert lines[0] == "forty columns"
    assert "abcdefghijklmnopqrstuvwxyzabcdefghijklmn" in out.replace(" ", "")
    for label, peak in zip(rows, peaks):
        line = next(ln for ln in lines if ln.split("│")[0].strip() == label)
        grid = line.split("│")[1]
        cell = len(grid) // S
        assert len(grid) == S * cell
        assert grid[peak * cell:(peak + 1) * cell] == "█" * cell
        assert grid.count("█") == cell  # only the peak is darkest


def test_heatmap_text_uses_a_fixed_scale_and_shows_small_weights():
    weights = [[0.0, 0.02, 0.25, 0.3, 0.5, 0.6, 0.75, 0.9]]  # edges belong to the bin above
    out = heatmap_text(weights, ["t"], list("abcdefgh"))
    grid = next(ln for ln in out.splitlines() if ln.startswith("t ")).split("│")[1]
    assert grid == "  ░░▒▒▒▒▓▓▓▓████"  # 0.02 is faint but not blank; 0.9 is not rescaled


def test_heatmap_text_long_labels_go_downwards():
    out = heatmap_text(np.eye(2), ["one", "two"], ["cat", "dog"])
    assert out.splitlines()[:3] == ["     c d", "     a o", "     t g"]


def test_heatmap_text_too_many_columns_says_so():
    out = heatmap_text(np.full((2, 200), 1 / 200), ["a", "b"], ["x"] * 200, max_width=50)
    assert all(len(line) <= 50 for line in out.splitlines())
    assert "more columns not shown" in out


# --- input checks ------------------------------------------------------------------------------

@pytest.mark.parametrize("fn", [heatmap_svg, heatmap_text])
def test_heatmap_mismatched_labels_name_function_role_and_shape(fn):
    w = np.full((7, 9), 1 / 9)
    with pytest.raises(ValueError, match=re.escape(
            f"{fn.__name__}: row_labels has 5 entries but weights has 7 rows (shape (7, 9))")):
        fn(w, list("abcde"), list("ABCDEFGHI"))
    with pytest.raises(ValueError, match=re.escape(
            f"{fn.__name__}: col_labels has 8 entries but weights has 9 columns (shape (7, 9))")):
        fn(w, list("abcdefg"), list("ABCDEFGH"))


@pytest.mark.parametrize("fn", [heatmap_svg, heatmap_text])
@pytest.mark.parametrize("weights, words", [
    (np.full((2, 7, 9), 0.1), "2-D array (T rows, S columns) but has shape (2, 7, 9)"),
    (np.full((7, 9), 1.5), "in [0, 1]"),
    (np.full((7, 9), np.nan), "finite"),
])
def test_heatmap_rejects_bad_weights(fn, weights, words):
    with pytest.raises(ValueError, match=re.escape(f"{fn.__name__}: ") + ".*" + re.escape(words)):
        fn(weights, list("abcdefg"), list("ABCDEFGHI"))


@pytest.mark.parametrize("fn", [line_plot_svg, line_plot_text])
def test_line_plot_rejects_mismatched_series(fn):
    with pytest.raises(ValueError, match=re.escape(
            f"{fn.__name__}: series 'loss'") + ".*xs shape \\(5,\\), ys shape \\(4,\\)"):
        fn({"loss": (range(5), range(4))})
    with pytest.raises(ValueError, match=f"{fn.__name__}: series is empty"):
        fn({})


# --- line plots --------------------------------------------------------------------------------

def training_curves():
    epochs = np.arange(1, 21)
    valid = 2.0 / epochs + 0.4
    valid[8:11] = np.nan  # a gap, e.g. epochs without a validation pass
    return {"train": (epochs, 2.0 / epochs), "valid <held-out> & co": (epochs, valid),
            "final": ([20], [0.5])}


def test_line_plot_svg_has_one_path_per_series_and_a_legend(tmp_path):
    target = tmp_path / "curves.svg"
    svg = line_plot_svg(training_curves(), path=target, title="loss", xlabel="epoch",
                        ylabel="nats")
    assert target.read_text(encoding="utf-8") == svg
    assert [p.name for p in tmp_path.iterdir()] == ["curves.svg"]
    root = ET.fromstring(svg)
    paths = [p for p in root.iter(NS + "path") if p.get("class") == "series"]
    assert len(paths) == 3
    assert len({p.get("stroke") for p in paths}) == 3  # distinct colours
    assert [d.count("M") for d in (p.get("d") for p in paths)] == [1, 2, 1]  # NaN -> a gap
    legend = [g.find(NS + "text").text for g in root.iter(NS + "g") if g.get("class") == "legend"]
    assert legend == ["train", "valid <held-out> & co", "final"]
    assert len(list(root.iter(NS + "circle"))) == 1  # the single point is still visible
    assert {"loss", "epoch", "nats"} <= set(texts(root))


def test_line_plot_svg_ticks_are_round_and_cover_the_data():
    root = ET.fromstring(line_plot_svg({"a": ([0.3, 7.9], [0.013, 0.0871])}))
    numbers = sorted(float(t) for t in texts(root) if re.fullmatch(r"-?[\d.]+", t))
    assert numbers[0] <= 0.013 and numbers[-1] >= 7.9
    assert {0.0, 8.0} <= set(numbers)  # the x axis grows to the enclosing round ticks


@given(st.floats(-1e6, 1e6), st.floats(1e-3, 1e6), st.integers(2, 10))
def test_nice_ticks_are_evenly_spaced_round_and_enclose_the_range(lo, span, n):
    hi = lo + span
    lo2, hi2, ticks, _ = nice_ticks(lo, hi, n)
    step = ticks[1] - ticks[0]
    assert lo2 <= lo + 1e-9 * step and hi2 >= hi - 1e-9 * step  # snaps only float fuzz
    assert ticks[0] == lo2 and ticks[-1] == hi2
    assert np.allclose(np.diff(ticks), step)
    mantissa = step / 10 ** math.floor(math.log10(step))  # 10 when step is 10^k minus fuzz
    assert any(math.isclose(mantissa, m, rel_tol=1e-6) for m in (1, 2, 2.5, 5, 10))


@pytest.mark.parametrize("width, height", [(80, 20), (40, 12), (120, 40)])
def test_line_plot_text_has_the_requested_size(width, height):
    out = line_plot_text(training_curves(), width=width, height=height, title="loss",
                         xlabel="epoch", ylabel="nats")
    lines = out.splitlines()
    assert len(lines) == height
    assert all(len(line) <= width for line in lines), max(map(len, lines))
    assert lines[0] == "loss"
    for marker, name in (("*", "train"), ("o", "valid"), ("+", "final")):
        assert f"{marker} {name}" in out
        assert any(marker in line.split("│")[-1].split("┤")[-1] for line in lines[2:-4])


def test_line_plot_text_too_small_raises():
    with pytest.raises(ValueError, match="line_plot_text: width 80 x height 5"):
        line_plot_text(training_curves(), height=5)


def test_line_plot_svg_draws_right_series_on_a_second_axis():
    """A second y axis: its own ticks on the right, its series dashed (in the legend too)."""
    svg = line_plot_svg({"loss": ([0, 10], [0.0, 8.0])}, right={"acc": ([0, 10], [0.0, 1.0])},
                        right_label="accuracy", right_lim=(0.0, 1.0))
    root = ET.fromstring(svg)
    frame = next(r for r in root.iter(NS + "rect") if r.get("class") == "frame")
    top, height = float(frame.get("y")), float(frame.get("height"))
    paths = [p for p in root.iter(NS + "path") if p.get("class") == "series"]
    loss, acc = [[float(v) for v in p.get("d").split()[2::3]] for p in paths]  # the y of each point
    assert abs(loss[1] - top) < 1 and abs(acc[1] - top) < 1  # each top value at the top edge
    assert paths[1].get("stroke-dasharray") and not paths[0].get("stroke-dasharray")
    ticks = ["".join(g.itertext()) for g in root.iter(NS + "g") if g.get("class") == "right-axis"]
    assert ticks == ["0.0", "0.2", "0.4", "0.6", "0.8", "1.0"]
    assert ">accuracy</text>" in svg
    legend = [g for g in root.iter(NS + "g") if g.get("class") == "legend"]
    assert [next(g.iter(NS + "line")).get("stroke-dasharray") for g in legend] == [None, "6 3"]


def test_heatmaps_and_plots_show_themselves_in_jupyter():
    from minigrad.draw import heatmap_svg, heatmap_text
    w = np.array([[0.9, 0.1], [0.2, 0.8]])
    svg, text = heatmap_svg(w, ["a", "b"], ["x", "y"]), heatmap_text(w, ["a", "b"], ["x", "y"])
    assert svg._repr_svg_() == svg and svg._repr_html_() is None
    assert text._repr_svg_() is None and text._repr_html_().startswith("<pre>")
