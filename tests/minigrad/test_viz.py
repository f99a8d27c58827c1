"""minigrad.viz: the drawing has one box per node, no overlaps, edges that join their boxes,
DOT/Mermaid listing every node and edge, gradients on every node under trace, byte-identical
output, and highlights on the op that went wrong."""
import io
import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from hypothesis import given, strategies as st

import minigrad as mg
from minigrad.viz.graph import KEEP_NUMBERS
from minigrad import nn
from minigrad.gradcheck import GradcheckError, gradcheck
from minigrad.tensor import Tensor
from minigrad.viz import (draw_anomaly, draw_graph, draw_gradcheck, find_bad_op, graph_of,
                          scope, trace)
from minigrad.viz.layout import layout

SVG = "{http://www.w3.org/2000/svg}"


def neuron():
    """micrograd's single neuron, traced: o = tanh(x1 w1 + x2 w2 + b)."""
    leaves = {k: mg.tensor(v, requires_grad=True) for k, v in
              dict(x1=2.0, x2=0.0, w1=-3.0, w2=1.0, b=6.8813735870195432).items()}
    with trace() as tr:
        n = leaves["x1"] * leaves["w1"] + leaves["x2"] * leaves["w2"] + leaves["b"]
        o = mg.tanh(n)
        o.backward()
    return o, tr, {**leaves, "n": n, "o": o}


def svg_parts(text):
    """({node id: (x, y, w, h)}, [(from, to, points)]) read back from an SVG drawing."""
    root = ET.fromstring(text)
    boxes = {}
    for g in root.iter(SVG + "g"):
        if "node" in g.get("class", "").split():
            rects = [r for r in g.iter(SVG + "rect") if r.get("class") == "box"]
            assert len(rects) == 1, g.get("id")
            r = rects[0]
            boxes[g.get("id")] = tuple(float(r.get(k)) for k in ("x", "y", "width", "height"))
    edges = []
    for g in root.iter(SVG + "g"):
        if g.get("class") == "edge":
            nums = [float(v) for v in re.findall(r"-?\d+\.?\d*", g.find(SVG + "path").get("d"))]
            edges.append((g.get("data-from"), g.get("data-to"), list(zip(nums[::2], nums[1::2]))))
    return boxes, edges


def check_drawing(graph, text):
    boxes, edges = svg_parts(text)
    assert sorted(boxes) == sorted(f"n{i}" for i in range(len(graph.nodes)))
    items = sorted(boxes.values())
    for i, (x, y, w, h) in enumerate(items):  # no two boxes overlap
        for x2, y2, w2, h2 in items[i + 1:]:
            assert x + w <= x2 or x2 + w2 <= x or y + h <= y2 or y2 + h2 <= y
    assert sorted((a, b) for a, b, _ in edges) == sorted((f"n{a}", f"n{b}") for a, b in graph.edges)
    for a, b, pts in edges:  # starts on the bottom side of its source, ends on the top of its target
        (x, y, w, h), (x2, y2, w2, h2) = boxes[a], boxes[b]
        assert x < pts[0][0] < x + w and pts[0][1] == pytest.approx(y + h, abs=0.06)
        assert x2 < pts[-1][0] < x2 + w2 and pts[-1][1] == pytest.approx(y2, abs=0.06)
        assert all(q[1] >= p[1] - 1e-9 for p, q in zip(pts, pts[1:]))  # data flows down


def test_neuron_values_and_gradients_on_every_node():
    o, tr, names = neuron()
    graph = graph_of(o, trace=tr, names=names)
    by_title = {n.title: n for n in graph.nodes}
    assert by_title["x1"].lines[1:] == ["value 2", "grad -1.5"]  # micrograd's numbers
    assert by_title["w1"].lines[2] == "grad 1"
    assert by_title["n = add"].lines[1:] == ["value 0.8814", "grad 0.5"]  # an intermediate
    assert by_title["o = tanh"].kind == "root"
    kinds = {n.title: n.kind for n in graph.nodes}
    assert kinds["x1"] == "leaf" and kinds["n = add"] == "op"
    check_drawing(graph, draw_graph(o, trace=tr, names=names))


def test_without_trace_only_leaves_have_gradients_and_the_graph_is_read_live():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    graph = graph_of(y, names={"x": x})
    assert [n.title for n in graph.nodes] == ["x", "mul", "sum"]
    assert graph.nodes[0].lines[-1] == "grad [2 4]" and graph.edges == [(0, 1), (1, 2)]
    assert not any(l.startswith("grad") for n in graph.nodes[1:] for l in n.lines)


def test_values_summary_beyond_four_and_parameters_by_attribute_path():
    class Net(nn.Module):
        def __init__(self):
            self.fc = nn.Linear(5, 3, rng=np.random.default_rng(0))

        def forward(self, x):
            return self.fc(x).sum()
    net = Net()
    out = net(mg.tensor(np.arange(10.0).reshape(2, 5)))
    graph = graph_of(out, module=net)
    titles = {n.title: n for n in graph.nodes}
    assert titles["fc.weight"].kind == "param" and titles["fc.bias"].kind == "param"
    w = net.fc.weight.data
    assert titles["fc.weight"].lines[1] == (f"value min {w.min():.4g} mean {w.mean():.4g} "
                                            f"max {w.max():.4g}")
    assert titles["constant"].kind == "const"


def test_dot_and_mermaid_list_every_node_and_edge():
    o, tr, names = neuron()
    graph = graph_of(o, trace=tr, names=names)
    want_nodes = {f"n{i}" for i in range(len(graph.nodes))}
    want_edges = {(f"n{a}", f"n{b}") for a, b in graph.edges}
    dot = draw_graph(o, "dot", trace=tr, names=names)
    assert set(re.findall(r"^  (n\d+) \[label=", dot, re.M)) == want_nodes
    assert set(re.findall(r"^  (n\d+) -> (n\d+);", dot, re.M)) == want_edges
    assert 'label="x1\\n() float64\\nvalue 2\\ngrad -1.5"' in dot
    mermaid = draw_graph(o, "mermaid", trace=tr, names=names)
    assert set(re.findall(r"^  (n\d+)\[\"", mermaid, re.M)) == want_nodes
    assert set(re.findall(r"^  (n\d+) --> (n\d+)$", mermaid, re.M)) == want_edges
    text = draw_graph(o, "text", trace=tr, names=names)
    assert len(re.findall(r"^..n\d+ ", text, re.M)) == len(graph.nodes)


def test_labels_are_escaped_in_every_format():
    x = mg.tensor([1.0], requires_grad=True)
    y = x * 2.0
    names = {'a<b>&"c"\n': x}
    svg = draw_graph(y, names=names)
    ET.fromstring(svg)  # parses: <, &, " escaped; the newline is shown as ␊
    assert "a&lt;b&gt;&amp;&quot;c&quot;␊" in svg
    assert 'a<b>&\\"c\\"␊' in draw_graph(y, "dot", names=names)
    assert "a#lt;b#gt;#amp;#quot;c#quot;␊" in draw_graph(y, "mermaid", names=names)


def test_the_same_graph_gives_the_same_bytes_and_writes_its_file(tmp_path):
    o1, tr1, _ = neuron()
    first = draw_graph(o1, trace=tr1)
    o, tr, _ = neuron()  # a new graph of the same computation
    path = tmp_path / "neuron.svg"
    assert draw_graph(o, trace=tr, path=path) == first == path.read_text(encoding="utf-8")
    assert draw_graph(o, "dot", trace=tr) == draw_graph(o, "dot", trace=tr)


def test_bad_arguments_are_named():
    o = neuron()[0]
    with pytest.raises(ValueError, match="fmt must be one of"):
        draw_graph(o, "png")
    with pytest.raises(TypeError, match="root must be a minigrad Tensor"):
        draw_graph(np.ones(2))


def test_trace_restores_the_classes_and_does_not_nest():
    op, call = Tensor.__dict__["_from_op"], nn.Module.__call__
    with pytest.raises(RuntimeError, match="do not nest"):
        with trace():
            with trace():
                pass
    with pytest.raises(KeyError):
        with trace():
            raise KeyError("inside")
    assert Tensor.__dict__["_from_op"] is op and nn.Module.__call__ is call
    with scope("outside a trace"):  # a no-op
        assert (mg.tensor(1.0) + 1.0).item() == 2.0


def test_scopes_group_nodes_and_collapse_keeps_edges_between_groups():
    class Double(nn.Module):
        def forward(self, x):
            return (x * 2.0).tanh()
    net = Double()
    x = mg.tensor([0.1, 0.2], requires_grad=True)
    with trace(net) as tr:
        h = x
        for t in range(3):
            with scope(f"step {t}"):
                h = net(h) + h
        out = h.sum()
    full = graph_of(out, trace=tr)
    assert {n.scope for n in full.nodes if n.kind == "op"} >= {("step 0", "Double"), ("step 2",)}
    steps = graph_of(out, trace=tr, collapse=1)
    assert [n.title for n in steps.nodes] == ["input", "step 0", "step 1", "step 2", "sum"]
    assert steps.edges == [(0, 1), (1, 2), (2, 3), (3, 4)]
    assert steps.nodes[2].lines[0] == "4 nodes, 1 in, 1 out"  # mul, its constant 2.0, tanh, add
    opened = graph_of(out, trace=tr, collapse=1, expand=["step 1"])
    assert [n.title for n in opened.nodes][2:5] == ["Double", "add", "step 2"]
    check_drawing(opened, draw_graph(out, trace=tr, collapse=1, expand=["step 1"]))


def test_anomaly_highlights_the_op_that_made_inf():
    x = mg.tensor([1.0, 0.0, 2.0], requires_grad=True)
    with pytest.raises(FloatingPointError) as forward:
        with mg.detect_anomaly(), np.errstate(divide="ignore"):
            mg.exp(mg.log(x * 2.0)).sum()
    assert forward.value.op == "log" and forward.value.where == "forward"
    graph = graph_of(forward.value.node, trace=None, highlight=[forward.value.node])
    assert [n.title for n in graph.nodes if n.highlight] == ["log"]
    text = draw_anomaly(forward.value, "text")
    assert re.search(r"^!!n\d+ +root +log ", text, re.M) and text.count("!!") == 1
    with pytest.raises(FloatingPointError) as backward:
        with mg.detect_anomaly(), np.errstate(divide="ignore"):
            (mg.sqrt(x * 1.0) * 3.0).sum().backward()
    assert backward.value.where == "backward"
    svg = draw_anomaly(backward.value)
    hot = [g for g in ET.fromstring(svg).iter(SVG + "g") if "highlight" in g.get("class", "")]
    assert len(hot) == 1 and "sqrt" in hot[0].find(SVG + "title").text


def _bad_square(a):
    """a², with a VJP that is wrong (3a instead of 2a)."""
    return Tensor._from_op(a.data ** 2, (a,), lambda xp, g, out, a: (g * 3.0 * a,), "bad_square")


def test_gradcheck_failure_points_at_the_op_with_the_wrong_vjp():
    f = lambda a, b: mg.tanh(_bad_square(a * b) + b).sum()  # noqa: E731
    a, b = np.array([0.3, -0.2, 0.7]), np.array([[0.5, 0.1, -0.4]])
    with pytest.raises(GradcheckError, match=r"viz.draw_gradcheck\(fn, inputs"):
        gradcheck(f, [a, b])
    assert find_bad_op(f, [a, b])[2]._op == "bad_square"
    text = draw_gradcheck(f, [a, b], "text")
    assert re.search(r"^!!n\d+ +op +bad_square ", text, re.M) and text.count("!!") == 1
    good = lambda a, b: mg.tanh(a * b + b).mean()  # noqa: E731  (broadcast b: unbroadcast used)
    assert find_bad_op(good, [a, b])[2] is None
    assert "no single op" in draw_gradcheck(good, [a, b], "text")


@st.composite
def dags(draw):
    """Random DAGs: node i reads 1-3 earlier nodes; boxes of random sizes."""
    n = draw(st.integers(1, 18))
    edges = set()
    for i in range(1, n):
        for j in draw(st.lists(st.integers(0, i - 1), min_size=0, max_size=3)):
            edges.add((j, i))
    sizes = [(draw(st.integers(20, 160)), draw(st.integers(20, 70))) for _ in range(n)]
    return sizes, sorted(edges)


@given(dags())
def test_layout_never_overlaps_and_routes_join_their_boxes(dag):
    sizes, edges = dag
    boxes, routes = layout(sizes, edges)
    assert [(w, h) for _, _, w, h in boxes] == [tuple(s) for s in sizes]
    for i, (x, y, w, h) in enumerate(boxes):
        for x2, y2, w2, h2 in boxes[i + 1:]:
            assert x + w <= x2 or x2 + w2 <= x or y + h <= y2 or y2 + h2 <= y
    for (a, b), pts in zip(edges, routes):
        assert pts[0][1] == boxes[a][1] + boxes[a][3] and pts[-1][1] == boxes[b][1]
        assert boxes[a][0] < pts[0][0] < boxes[a][0] + boxes[a][2]
        assert boxes[b][0] < pts[-1][0] < boxes[b][0] + boxes[b][2]
    assert layout(sizes, edges) == (boxes, routes)  # deterministic


def test_layout_reduces_crossings():
    # two chains whose sources are given crossed: the ordering must uncross them
    edges = [(0, 3), (1, 2), (2, 5), (3, 4)]
    boxes, _ = layout([(40, 20)] * 6, edges)
    left_of = lambda a, b: boxes[a][0] < boxes[b][0]  # noqa: E731
    assert left_of(0, 1) == left_of(3, 2) == left_of(4, 5)


def test_the_neuron_demo_prints_micrograds_numbers(capsys, tmp_path):
    from minigrad.viz.__main__ import main
    assert main(["--fmt", "svg", "--out", str(tmp_path)]) == 0
    ET.parse(tmp_path / "neuron.svg")
    assert main([]) == 0
    text = capsys.readouterr().out
    assert re.search(r"x1 +\(\) float64 \| value 2 \| grad -1\.5", text)
    assert re.search(r"o = tanh +\(\) float64 \| value 0\.7071 \| grad 1", text)


def test_trace_keeps_on_every_node_the_gradient_the_engine_computes():
    rng = np.random.default_rng(0)
    x = mg.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    w = mg.tensor(rng.standard_normal((4, 2)), requires_grad=True)
    with trace() as tr:
        h = mg.tanh(x @ w)                                       # reused twice: a diamond
        out = (h * h + mg.sigmoid(h)).sum(axis=0).mean()
    nodes = list(tr.nodes)
    want = mg.grad(out, nodes, retain_graph=True)
    out.backward()
    assert len(nodes) == 7 and set(tr.grads) == set(nodes)
    for node, g in zip(nodes, want):
        np.testing.assert_allclose(tr.grads[node], g, rtol=1e-12, atol=1e-15)


def test_a_drawing_shows_itself_in_jupyter():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    svg, text = draw_graph(y, "svg"), draw_graph(y, "text")
    assert isinstance(svg, str) and svg._repr_svg_() == svg and svg._repr_html_() is None
    assert text._repr_svg_() is None and text._repr_html_().startswith("<pre>")
    assert "<" not in text._repr_html_()[5:-6]


def test_drawing_a_large_graph_that_backward_freed_says_why_and_what_to_do():
    x = mg.tensor(np.ones(KEEP_NUMBERS + 1), requires_grad=True)
    o = mg.tanh(x * 3.0).sum()
    o.backward()
    with pytest.raises(RuntimeError, match=r"op 'sum'\) was freed by backward\(\) \(graphs of at "
                                           r"most 500 nodes.*import minigrad.viz before it.*"
                                           r"retain_graph=True.*trace"):
        draw_graph(o)
    x = mg.tensor(2.0, requires_grad=True)
    o = mg.tanh(x * 3.0)
    o.backward(retain_graph=True)
    assert "tanh" in draw_graph(o, "text")                   # a retained graph draws


class FullDisk(io.StringIO):
    """A stdout on a full disk (``> /dev/full``): every write fails with ENOSPC."""

    def write(self, text):
        raise OSError(28, "No space left on device")


def test_an_output_that_cannot_be_written_is_one_line_not_a_traceback(monkeypatch, capsys):
    from minigrad.viz.__main__ import main
    monkeypatch.setattr("sys.stdout", FullDisk())
    assert main([]) == 1
    assert capsys.readouterr().err == ("error: the output could not be written: No space left "
                                       "on device\n")
    monkeypatch.setattr("sys.stdout", None)                   # started with stdout closed
    assert main([]) == 0


@pytest.mark.slow
@pytest.mark.parametrize("redirect", ["> /dev/full", ">&-"])
def test_the_command_on_dev_full_or_a_closed_stdout(redirect, tmp_path):
    import subprocess
    import sys
    for args in ("", f"explore --out {tmp_path / 'e.html'}"):
        run = subprocess.run(f"{sys.executable} -m minigrad.viz {args} {redirect}", shell=True,
                             capture_output=True, text=True, cwd=tmp_path)
        assert "Traceback" not in run.stderr and run.stderr.count("\n") <= 1, run.stderr
        assert run.returncode == (1 if "full" in redirect else 0)
