"""Names with control characters (NUL, ESC, the other C0 ones, DEL; also C1 and lone
surrogates) never reach a drawing raw: every SVG parses as XML, terminal text holds no ESC
(nor any control character but the line breaks), DOT and Mermaid labels stay one quoted line."""
import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import minigrad as mg
from minigrad import nn
from minigrad.draw import common
from minigrad.draw.svg import grid_svg, heatmap_svg, line_plot_svg
from minigrad.draw.terminal import heatmap_text, line_plot_text, side_by_side
from minigrad.viz import draw_graph, trace

CONTROLS = [chr(i) for i in range(32)] + ["\x7f"]
RAW = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f]")  # anything a terminal may act on, but "\n"


def evil(c: str) -> str:
    return f"a{c}b\x1b[31m<&\"'>\x00"


def graph_and_names(c):
    x = mg.tensor(np.array([[1.0, -2.0]]), requires_grad=True)
    lin = nn.Linear(2, 2, rng=np.random.default_rng(0))
    setattr(lin, f"w{c}", lin.weight)             # an attribute name with the control char
    with trace() as tr:
        y = (lin(x).tanh() * x).sum()
        y.backward()
    return y, tr, {evil(c): x}, lin


def check_terminal(text: str) -> None:
    assert "\x1b" not in text and not RAW.search(text), repr(RAW.search(text))


@pytest.mark.parametrize("c", CONTROLS, ids=lambda c: f"U+{ord(c):04X}")
def test_graph_drawings_escape_control_characters(c):
    y, tr, names, lin = graph_and_names(c)
    for kwargs in ({"trace": tr, "names": names}, {"trace": tr, "module": lin}):
        svg = draw_graph(y, "svg", title=evil(c), **kwargs)
        root = ET.fromstring(svg)                     # well-formed XML
        texts = " ".join(t for t in root.itertext())
        assert "\x1b" not in texts and "␛" in texts
        check_terminal(draw_graph(y, "text", title=evil(c), **kwargs))
        for fmt in ("dot", "mermaid"):
            out = draw_graph(y, fmt, title=evil(c), **kwargs)
            check_terminal(out)
        dot = draw_graph(y, "dot", title=evil(c), **kwargs)
        for line in dot.splitlines():               # each quoted string closes on its line
            assert len(re.findall(r'(?<!\\)"', line)) % 2 == 0, line


@pytest.mark.parametrize("c", CONTROLS, ids=lambda c: f"U+{ord(c):04X}")
def test_plots_escape_control_characters(c):
    w = np.array([[0.7, 0.3], [0.2, 0.8]])
    labels = [evil(c), f"x{c}"]
    series = {evil(c): ([0, 1, 2], [1.0, 0.5, 0.2]), "plain": ([0, 1], [0.3, 0.4])}
    svgs = [heatmap_svg(w, labels, labels, title=evil(c), row_title=evil(c), col_title=evil(c),
                        scale_label=evil(c)),
            line_plot_svg(series, title=evil(c), xlabel=evil(c), ylabel=evil(c),
                          right={f"r{c}": ([0, 1], [2.0, 3.0])}, right_label=evil(c))]
    svgs.append(grid_svg(svgs, 2, title=evil(c)))
    for svg in svgs:
        ET.fromstring(svg)
        assert "\x1b" not in svg
    texts = [heatmap_text(w, labels, labels, title=evil(c)),
             line_plot_text(series, title=evil(c), xlabel=evil(c), ylabel=evil(c))]
    for text in texts + [side_by_side(texts)]:
        check_terminal(text)


@pytest.mark.parametrize("ch", ["\x9b", "\x85", "\ud800", "\ufffe"], ids=["CSI", "NEL", "surrogate", "FFFE"])
def test_c1_and_what_xml_cannot_hold(ch, tmp_path):
    y, tr, names, _ = graph_and_names("\x01")
    names = {f"n{ch}": next(iter(names.values()))}
    svg = draw_graph(y, "svg", trace=tr, names=names, title=f"t{ch}", path=tmp_path / "g.svg")
    ET.fromstring(svg)
    ET.parse(tmp_path / "g.svg")                  # written as UTF-8 and parsed back
    check_terminal(draw_graph(y, "text", trace=tr, names=names, title=f"t{ch}"))


def test_printable_shows_each_control_character_as_its_picture():
    assert common.printable("a\x00b\x1b[0m\x7f\t\n") == "a␀b␛[0m␡␉␊"
    assert common.printable("\x9b") == "\\x9b" and common.printable("ok é ✓") == "ok é ✓"
    assert common.token("a b\x1b", 10) == "a␣b␛"


INVISIBLE = ["\u202e", "\u2066", "\u200b", "\u200d", "\u200f", "\ufeff", "\u2028", "\u061c"]


@pytest.mark.parametrize("ch", INVISIBLE, ids=lambda c: f"U+{ord(c):04X}")
def test_bidi_and_zero_width_characters_are_shown_not_obeyed(ch):
    """A right-to-left override or a zero-width space in a name would reorder or hide the
    text around it; every drawing shows it as its code (``\\u202e``) instead."""
    y, tr, names, lin = graph_and_names("\x01")
    names = {f"ab{ch}cd": next(iter(names.values()))}
    for fmt in ("svg", "text", "dot", "mermaid"):
        out = draw_graph(y, fmt, trace=tr, names=names, title=f"t{ch}")
        shown = f"ab\\u{ord(ch):04x}cd"
        assert ch not in out and (shown.replace("\\", "\\\\") if fmt == "dot" else shown) in out
    assert common.printable(f"x{ch}") == f"x\\u{ord(ch):04x}"
