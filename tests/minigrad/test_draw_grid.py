"""grid_svg and side_by_side: several pictures put together, each kept whole."""
import re

import numpy as np
import pytest

from minigrad.draw import grid_svg, heatmap_svg, heatmap_text, side_by_side


def test_grid_svg_places_every_document_once_in_rows_of_columns():
    docs = [heatmap_svg(np.eye(k + 2), list("abcdef")[:k + 2], list("uvwxyz")[:k + 2], title=f"p{k}")
            for k in range(5)]
    page = grid_svg(docs, columns=2, title="grid")
    nested = re.findall(r'<svg x="(\d+)" y="(\d+)"', page)
    assert len(nested) == 5 and page.count("<svg") == 6
    xs, ys = zip(*((int(x), int(y)) for x, y in nested))
    assert xs[0] == xs[2] == xs[4] < xs[1] == xs[3]                     # two columns
    assert ys[0] == ys[1] < ys[2] == ys[3] < ys[4]                      # three rows
    width, height = map(int, re.match(r'<svg [^>]*width="(\d+)" height="(\d+)"', page).groups())
    assert height > ys[4] and width > xs[1]
    with pytest.raises(ValueError, match="grid_svg: document 0 is not one of ours"):
        grid_svg(["<g/>"], 1)


def test_side_by_side_keeps_each_block_in_its_own_columns():
    a, b = heatmap_text(np.eye(2), ["r", "s"], ["x", "y"]), "one\ntwo\nthree"
    lines = side_by_side([a, b], gap=2).split("\n")
    width = max(len(line) for line in a.split("\n"))
    assert len(lines) == max(a.count("\n"), b.count("\n")) + 1
    assert [line[width + 2:] for line in lines[:3]] == ["one", "two", "three"]
    assert all(line[:width].rstrip() == row.rstrip() for line, row in zip(lines, a.split("\n")))
