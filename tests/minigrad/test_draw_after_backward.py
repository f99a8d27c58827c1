"""Draw after backward, as micrograd users do: a small graph keeps its shape and every node's
gradient when ``backward()`` frees it; a large one is freed whole and the viewer says why."""
import gc
import re
import subprocess
import sys
import weakref

import numpy as np
import pytest

import minigrad as mg
from minigrad.viz.graph import KEEP_NODES, KEEP_NUMBERS, KEPT
from minigrad.engine import FREED
from minigrad.viz import draw_graph, trace


def neuron():
    """micrograd's first example: o = tanh(x1*w1 + x2*w2 + b)."""
    x1, x2 = mg.tensor(2.0, requires_grad=True), mg.tensor(0.0, requires_grad=True)
    w1, w2 = mg.tensor(-3.0, requires_grad=True), mg.tensor(1.0, requires_grad=True)
    b = mg.tensor(6.8813735870195432, requires_grad=True)
    n = x1 * w1 + x2 * w2 + b
    return mg.tanh(n), n, (x1, x2, w1, w2, b)


def rows(text):
    return [line.split() for line in text.splitlines()[1:]]


def test_micrograds_first_example_draws_every_node_with_its_value_and_gradient():
    o, _, (x1, x2, w1, w2, b) = neuron()
    before = draw_graph(o, "text")
    o.backward()
    after = draw_graph(o, "text")
    assert len(rows(after)) == len(rows(before)) == 10        # 5 inputs, 4 ops, the root
    assert "grad" not in before.split("root")[1]               # before backward: no gradient yet
    ops = {r[2]: r for r in rows(after) if r[1] in ("op", "root")}
    assert set(ops) == {"mul", "add", "tanh"}
    assert all("grad" in r for r in rows(after)), after        # every node shows its gradient
    # the numbers micrograd's README prints: o = 0.7071, dn = 1 - o^2 = 0.5, dx1 = w1 * 0.5
    assert "value 0.7071 | grad 1" in after
    assert after.count("grad 0.5") == 2 + 2 + 2                # x2, b; the two sums; both muls
    assert x1.grad == pytest.approx(-1.5) and w1.grad == pytest.approx(1.0)
    assert "grad -1.5" in after and re.search(r"value 1 \| grad 0$", after, re.M)  # w2: x2 = 0


def test_the_kept_gradients_are_the_ones_backward_computed():
    o, n, _ = neuron()
    o.backward()
    parents, g = KEPT[id(n)]
    assert g == pytest.approx(1 - np.tanh(n.data) ** 2)         # dL/dn = 1 - tanh(n)^2
    assert len(parents) == 2 and all(p._op in ("add", "leaf") for p in parents)
    assert n._parents == () and n._vjp is FREED                 # still freed: no second backward
    with pytest.raises(RuntimeError, match="a second time"):
        o.backward()


def test_drawing_a_middle_node_after_backward_draws_its_part_of_the_graph():
    o, n, _ = neuron()
    o.backward()
    text = draw_graph(n, "text")
    assert "tanh" not in text and len(rows(text)) == 9 and text.count("op ") + 1 == 4


def test_a_training_steps_graph_is_freed_whole():
    """Above the size limit nothing is kept: the graph goes when backward ends."""
    x = mg.tensor(np.ones((KEEP_NUMBERS // 10 + 1, 10)), requires_grad=True)
    h = mg.tanh(x)
    loss = (h * h).sum()
    ref = weakref.ref(h)
    del h
    loss.backward()
    gc.collect()
    assert ref() is None and id(loss) not in KEPT
    assert x.grad.shape == x.shape


def test_many_nodes_are_not_kept_either():
    x = mg.tensor(1.0, requires_grad=True)
    y = x
    for _ in range(KEEP_NODES):
        y = y * 1.0
    z = mg.tensor(1.0, requires_grad=True)
    for _ in range((KEEP_NODES - 1) // 2):  # x, then a constant and a product per step: 500 nodes
        z = z * 1.0
    z.backward()
    assert id(z) in KEPT  # exactly KEEP_NODES nodes: kept
    y.backward()
    assert id(y) not in KEPT and x.grad == 1.0
    with pytest.raises(RuntimeError, match="was freed by backward"):
        draw_graph(y)


def test_retain_graph_and_trace_still_draw_as_before():
    o, _, _ = neuron()
    o.backward(retain_graph=True)
    assert id(o) not in KEPT and "tanh" in draw_graph(o, "text")
    with trace() as tr:
        o, _, _ = neuron()
        o.backward()
    assert draw_graph(o, "text", trace=tr) == draw_graph(o, "text")


def test_a_second_graph_built_on_a_freed_node_refuses_as_before():
    o, _, _ = neuron()
    o.backward()
    with pytest.raises(RuntimeError, match="backward through op 'tanh' a second time"):
        (o * 2.0).backward()


def test_a_kept_node_with_many_elements_is_found_by_identity():
    x = mg.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    h = x * 2.0
    (h * h).sum().backward()
    parents, g = KEPT[id(h)]
    assert parents[0] is x and np.allclose(g, 2 * h.data) and id(h) in KEPT and id(x) not in KEPT


def test_the_drawn_svg_after_backward_has_every_node():
    o, _, _ = neuron()
    o.backward()
    svg = draw_graph(o, "svg")
    assert svg.count("grad ") >= 10 and "tanh" in svg


def test_without_the_viewer_backward_keeps_nothing_and_the_engine_knows_no_viewer():
    """Keeping a graph to draw is the viewer's business: a program that never imports it runs
    backward with no store (``engine.on_free`` is None), and Tensors have no slot for it."""
    code = ("import sys, minigrad as mg\n"
            "from minigrad import engine\n"
            "x = mg.tensor(2.0, requires_grad=True)\n"
            "mg.tanh(x * 3.0).backward()\n"
            "print(engine.on_free, 'minigrad.viz' in sys.modules, '_kept' in engine.Tensor.__slots__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["None", "False", "False"]


def test_the_kept_graph_goes_with_its_output():
    before = len(KEPT)
    o, n, _ = neuron()
    o.backward()
    assert id(n) in KEPT and id(o) in KEPT and len(KEPT) == before + 5    # 2 mul, 2 add, tanh
    ref = weakref.ref(n)
    del o, n
    gc.collect()
    assert ref() is None and len(KEPT) == before
