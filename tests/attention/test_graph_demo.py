"""The 004-graph demo: source 004's example as a graph whose scores' box carries the §7
gradient, equal to the 004-gradient demo's formula."""
import numpy as np

from attention.demos import DEMOS
from attention.demos.source_004 import gradient


def test_the_scores_box_carries_the_gradient_of_the_004_gradient_demo(tmp_path):
    result = DEMOS["004-graph"][0](out_dir=tmp_path)
    np.testing.assert_allclose(result.values["on_node"], gradient().values["A"]["formula"],
                               rtol=1e-12, atol=1e-15)
    assert "e (scores) = matmul" in result.text and "α (weights) = softmax" in result.text
    assert f"grad [{result.values['on_node'][0]:.4g} " in result.text
    assert [p.endswith("004_graph.svg") for p in result.files] == [True]


def test_the_title_names_the_weights_its_boxes_name(tmp_path):
    text = DEMOS["004-graph"][0](out_dir=tmp_path).text
    title, boxes = text.splitlines()[0], text.splitlines()[1:]
    for name in ("W_q", "W_k"):
        assert name in title and any(f" {name} " in line for line in boxes), name
