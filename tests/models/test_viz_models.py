"""minigrad.viz on the seq2seq model: parameters named by attribute path, a gradient on every
node, one group per Module call and decoder step (the viewer finds both itself: the models do
not import it), and collapsing/expanding that keeps every edge between groups."""
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from minigrad.viz import draw_graph, graph_of, trace
from model_helpers import random_batch, tiny_model


@pytest.fixture(scope="module")
def traced():
    model = tiny_model(0)
    rng = np.random.default_rng(1)
    src, src_mask = random_batch(rng, [4, 3], 9)
    tgt, tgt_mask = random_batch(rng, [3, 2], 8)
    with trace(model) as tr:
        loss = model.loss(src, tgt, src_mask, tgt_mask)
        loss.backward()
    return model, loss, tr


def test_parameters_are_named_and_every_node_has_its_gradient(traced):
    model, loss, tr = traced
    graph = graph_of(loss, trace=tr)
    titles = {n.title for n in graph.nodes if n.kind == "param"}
    assert {"encoder.forward_cell.weight_ih", "decoder.attention.score.W_q"} <= titles
    assert titles <= {name for name, _ in model.named_parameters()}
    for node in graph.nodes:
        assert node.kind == "const" or node.lines[-1].startswith("grad "), node.title
    w = model.decoder.out.weight
    out_w = next(n for n in graph.nodes if n.title == "decoder.out.weight")
    assert out_w.lines[-1] == f"grad min {w.grad.min():.4g} mean {w.grad.mean():.4g} max {w.grad.max():.4g}"
    scopes = {n.scope for n in graph.nodes}
    assert ("decoder", "step 2", "decoder.attention") in scopes     # the decoder's step calls
    assert ("decoder", "step 2", "decoder.cell") in scopes
    calls = [""] + [f"#{k}" for k in range(1, 4)]                   # S = 4 calls of each cell
    assert {("encoder", f"encoder.{cell}{k}") for cell in ("forward_cell", "backward_cell")
            for k in calls} <= scopes
    assert not any("step" in vars(m) for m in model.modules())      # the trace has left


@pytest.mark.parametrize("depth, expand", [(1, ()), (1, ["decoder"]), (2, ()),
                                           (1, ["decoder", "decoder/step 1", "encoder"])])
def test_collapse_and_expand_keep_the_edges_between_groups(traced, depth, expand):
    _, loss, tr = traced
    full = graph_of(loss, trace=tr)
    small = graph_of(loss, trace=tr, collapse=depth, expand=expand)
    box_of = {}
    for k, node in enumerate(small.nodes):
        for i in node.members:
            assert i not in box_of
            box_of[i] = k
    assert sorted(box_of) == list(range(len(full.nodes)))
    between = {(box_of[a], box_of[b]) for a, b in full.edges if box_of[a] != box_of[b]}
    assert set(small.edges) == between and len(small.edges) == len(between)
    groups = [n for n in small.nodes if n.kind == "group"]
    assert groups and all(n.lines[0].startswith(f"{len(n.members)} nodes") for n in groups)
    svg = draw_graph(loss, trace=tr, collapse=depth, expand=expand)
    assert len([g for g in ET.fromstring(svg).iter("{http://www.w3.org/2000/svg}g")
                if "node" in g.get("class", "").split()]) == len(small.nodes)


def test_collapsed_names_the_groups(traced):
    _, loss, tr = traced
    top = graph_of(loss, trace=tr, collapse=1)
    assert [n.title for n in top.nodes if n.kind == "group"] == ["encoder", "decoder"]
    steps = graph_of(loss, trace=tr, collapse=1, expand=["decoder"])
    names = [n.title for n in steps.nodes if n.kind == "group"]
    assert [f"step {t}" for t in range(3)] == [n for n in names if n.startswith("step")]


def test_python_dash_m_models_graph_draws_a_gru_step_and_a_collapsed_loss(tmp_path, capsys):
    from models.app.cli import main
    assert main(["graph", "--out", str(tmp_path), "--batch", "4", "--length", "5",
                 "--vocab", "9"]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gru_step.svg", "seq2seq_loss.svg"]
    for p in tmp_path.iterdir():
        ET.parse(p)
    out = capsys.readouterr().out
    assert "▸ encoder" in out and "▸ decoder" in out and "cross_entropy" in out


def test_the_gru_step_is_drawn_expanded_with_every_gradient():
    from models.app.graphs import gru_step
    text = gru_step("text")
    for op in ("linear", "sigmoid", "tanh", "h' = add", "weight_hh", "bias_ih"):
        assert op in text
    body = [l for l in text.splitlines() if l[2:3] == "n"]
    assert len(body) > 15 and all("grad" in l for l in body)


def test_the_models_do_not_import_the_viewer():
    """Scopes come from Module calls, recorded by minigrad.viz itself (only models/app draws)."""
    import pathlib
    import models
    for path in pathlib.Path(models.__file__).parent.glob("*.py"):
        assert "minigrad.viz" not in path.read_text(), path.name
