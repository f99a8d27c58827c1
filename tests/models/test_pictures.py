"""Pictures of alignments and of accuracy by length; the BLAS thread switch."""
import re
import xml.etree.ElementTree as ET
from types import SimpleNamespace

import numpy as np

from minigrad.runtime import blas
from models.vocab import Vocab
from models.decoding import Translation
from models.app.pictures import (alignment_svg, alignment_text, by_length_svg, by_length_table,
                             by_length_text, curves_svg, diagonality)

SRC, TGT = Vocab("abc"), Vocab("xyz")
NS = "{http://www.w3.org/2000/svg}"


def series_points(svg: str) -> tuple:
    """The plot frame's (top, bottom) and each series' points [(x, y), ...], in px."""
    root = ET.fromstring(svg)
    frame = next(r for r in root.iter(NS + "rect") if r.get("class") == "frame")
    top = float(frame.get("y"))
    paths = [p.get("d") for p in root.iter(NS + "path") if p.get("class") == "series"]
    points = [[tuple(map(float, xy)) for xy in re.findall(r"([\d.]+) ([\d.]+)", d)]
              for d in paths]
    return (top, top + float(frame.get("height"))), points


def translation():
    weights = np.array([[0.0, 0.1, 0.9, 0.0], [0.0, 0.8, 0.2, 0.0], [0.9, 0.1, 0.0, 0.0],
                        [0.0, 0.0, 0.0, 1.0]])  # (T_out, S): "cba" reversed into "zyx" + EOS
    return Translation(TGT.encode("zyx"), weights, -0.5)


def test_alignment_text_labels_both_axes_and_fits_100_columns():
    text = alignment_text(translation(), "cb?", SRC, TGT)
    lines = text.splitlines()
    assert all(len(line) <= 100 for line in lines)
    # "?" is unknown to the vocabulary; <eos> is longer than a cell, so it reads downwards
    assert lines[0].split() == ["c", "b", "?", "<"]
    assert [line.strip() for line in lines[1:5]] == list("eos>")
    assert [line.split("│")[0].strip() for line in lines[6:10]] == ["z", "y", "x", "<eos>"]
    assert "█" in lines[6] and "scale 0-1" in text


def test_alignment_without_attention():
    plain = Translation(TGT.encode("zyx"), None, -0.5)
    assert "no attention" in alignment_text(plain, "cba", SRC, TGT)
    assert alignment_svg(plain, "cba", SRC, TGT, None) is None


def test_alignment_svg_is_a_standalone_file(tmp_path):
    path = tmp_path / "a.svg"
    svg = alignment_svg(translation(), "cba", SRC, TGT, path)
    assert path.read_text() == svg and svg.startswith("<svg") and "cba → zyx" in svg
    assert svg.count('class="cell"') == 16
    for words in (">output</text>", ">input</text>", ">attention weight</text>"):
        assert words in svg


def test_end_of_sequence_label_has_a_glyph_in_common_fonts(tmp_path):
    """"␄" (U+2404) has no glyph in DejaVu and most fonts: it drew as a box. Both axes of
    both pictures now say <eos>, written with characters every font has."""
    svg = alignment_svg(translation(), "cba", SRC, TGT, tmp_path / "a.svg")
    labels = [line for line in svg.splitlines() if "&lt;eos&gt;</text>" in line]
    assert len(labels) == 2  # the row and the column label
    text = alignment_text(translation(), "cba", SRC, TGT)
    assert "␄" not in svg and "␄" not in text
    assert all(ord(c) < 0x2400 or c in "│┌┐└┘─░▒▓█␣→" for c in svg + text)


def test_by_length_outputs(tmp_path):
    results = {"no attention": {4: 0.9, 8: 0.1}, "attention": {4: 1.0, 8: 0.95, 12: 0.9}}
    table = by_length_table(results)
    assert table.splitlines()[1].split() == ["4", "90.0%", "100.0%"]
    assert table.splitlines()[3].split() == ["12", "-", "90.0%"]
    assert "exact match vs source length" in by_length_text(results)
    by_length_svg(results, tmp_path / "p.svg")
    assert (tmp_path / "p.svg").read_text().count('class="series"') == 2
    (top, bottom), (_, attention) = series_points((tmp_path / "p.svg").read_text())
    assert attention[0][1] > top + 3  # exact match 1.0 shows above the frame, not on it


def test_training_curves_say_what_each_line_is_and_keep_1_0_off_the_frame(tmp_path):
    state = SimpleNamespace(curve=[(25 * k, 2.0 / k) for k in range(1, 26)],
                            history=[{"step": 313, "val_exact": 1.0},
                                     {"step": 626, "val_exact": 1.0}])
    svg = curves_svg(state, tmp_path / "training.svg")
    for words in ("training: loss and held-out exact match", "loss per token",
                  "held-out exact match (fraction)", "step"):
        assert f">{words}</text>" in svg
    (top, bottom), (loss, exact) = series_points(svg)
    assert all(top < y < bottom for _, y in exact)  # not hidden in the frame line
    low = SimpleNamespace(curve=[(1, 0.5), (2, 0.2)], history=[{"step": 2, "val_exact": 1.0}])
    (top, _), (_, exact) = series_points(curves_svg(low, tmp_path / "low.svg"))
    assert exact[0][1] > top + 3  # with every loss below 1, 1.0 is still inside


def test_exact_match_has_its_own_axis_whatever_the_loss(tmp_path):
    """Accuracy 1.0 sits near the top on the right axis (0..1.05), not squashed under a loss
    of 8 as on one shared axis; the right axis has its ticks, and a run too short for a point
    of the loss curve still draws its exact match."""
    state = SimpleNamespace(curve=[(25 * k, 8.0 / k) for k in range(1, 26)],
                            history=[{"step": 313, "val_exact": 0.5}, {"step": 626, "val_exact": 1.0}])
    svg = curves_svg(state, tmp_path / "training.svg")
    (top, bottom), (loss, exact) = series_points(svg)
    height = bottom - top
    assert abs(exact[1][1] - (top + height * 0.05 / 1.05)) < 1   # 1.0 on the 0..1.05 axis
    assert abs(exact[0][1] - (top + height * 0.55 / 1.05)) < 1   # 0.5 half-way up
    root = ET.fromstring(svg)
    right = ["".join(g.itertext()) for g in root.iter(NS + "g") if g.get("class") == "right-axis"]
    assert right == ["0.00", "0.25", "0.50", "0.75", "1.00"]
    short = SimpleNamespace(curve=[], history=[{"step": 3, "val_exact": 0.25}])
    assert series_points(curves_svg(short, tmp_path / "short.svg"))[1][0]  # one point, drawn


def test_diagonality():
    eye = np.eye(4)
    assert diagonality(eye) == 1.0 and diagonality(eye[::-1], anti=True) == 1.0
    assert diagonality(eye[::-1]) == 0.0


def test_blas_threads_round_trip():
    before = blas.get_threads()
    with blas.threads(1):
        assert blas.get_threads() in (1, None)
    assert blas.get_threads() == before
