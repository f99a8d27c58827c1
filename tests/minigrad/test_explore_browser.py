"""The HTML explorer in a real browser: headless Chromium from Debian (``apt-get install
chromium``), driven over its DevTools pipe by ``tests/browser.py``. Each page is opened from
``file://`` with every host blocked; it must make no network request and log no error.

Without Chromium these tests skip, naming the install command; under CI=true (``.ci/run``
installs it) they fail instead. Screenshots go to the temporary folder, to be looked at."""
import json
import os
import re
import tempfile

import numpy as np
import pytest

import minigrad as mg
from browser import INSTALL, Browser
from minigrad.viz import scope, trace
from minigrad.viz.__main__ import neuron_graph, reused_graph
from minigrad.viz.explore import explore
from minigrad.viz.graph import build

pytestmark = pytest.mark.slow
SHOTS = tempfile.gettempdir()
NODES = "document.querySelectorAll('#graph .node').length"


@pytest.fixture(scope="module")
def browser():
    try:
        b = Browser.start()
    except Exception as e:  # no binary, or it did not start
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true needs the browser tests, but no Chromium started ({e}): "
                        f"{INSTALL}", pytrace=False)
        pytest.skip(f"no headless Chromium ({e}): {INSTALL}")
    with b:
        yield b


def show(browser, page, tmp_path, name="page.html"):
    path = tmp_path / name
    page.save(path)
    browser.open(path.as_uri())
    return path.as_uri()


def text(browser, selector):
    return browser.eval(f"document.querySelector({selector!r}).textContent")


def clean(browser, url):
    assert browser.requests() == [url]   # the file itself, nothing else
    assert browser.errors() == []         # a CSP violation, an exception, console.error


def layers():
    """Two scoped layers, a reused matrix, arrays beyond SMALL numbers: L = Σ tanh(h W2)."""
    rng = np.random.default_rng(1)
    x, w1, w2 = (mg.tensor(rng.standard_normal(s), requires_grad=True)
                 for s in ((4, 5), (5, 5), (5, 3)))
    with trace() as tr:
        with scope("layer1"):
            h = (x @ w1).tanh()
        with scope("layer2"):
            y = (h @ w2).tanh()
        loss = y.sum()
    return loss, tr, {"x": x, "W1": w1, "W2": w2, "L": loss}


def test_a_group_opens_and_closes_on_a_click(browser, tmp_path):
    url = show(browser, explore(*layers()), tmp_path)
    closed = browser.eval(NODES)
    members = int(browser.eval("document.querySelector('[data-group=\"layer1\"]')"
                               ".getAttribute('data-members')"))
    assert members == 2                                        # matmul, tanh
    browser.mouse('[data-group="layer1"]', "click")
    assert browser.eval(NODES) == closed - 1 + members         # the box became its nodes
    browser.screenshot(os.path.join(SHOTS, "minigrad-explore-open-group.png"))
    browser.mouse('.frame[data-open="layer1"] text', "click")
    assert browser.eval(NODES) == closed
    browser.type("#search", "tanh")                            # found inside closed groups:
    assert browser.eval("document.querySelectorAll('#graph .node.hit').length") == 2
    assert text(browser, "#hits") == "2 found" and browser.eval(NODES) == closed + 2
    clean(browser, url)


def test_hovering_a_node_shows_its_value_and_gradient(browser, tmp_path):
    root, tr, names, title = neuron_graph()
    url = show(browser, explore(root, tr, names, title), tmp_path)
    root.backward()
    for i, name in ((0, "x1"), (1, "w1"), (7, "b")):
        browser.mouse(f"#n{i}")
        shown = text(browser, "#info")
        value, grad = re.search(r"value\n(\S+)\n\ndL/dnode\n(\S+)", shown).groups()
        assert shown.startswith(f"n{i} {name}")
        assert float(value) == pytest.approx(float(names[name].data), rel=1e-6)
        assert float(grad) == pytest.approx(float(names[name].grad), rel=1e-5)
    loss, tr, names = layers()
    show(browser, explore(loss, tr, names), tmp_path, "layers.html")
    browser.mouse("#n1")                                       # W1, 25 numbers: a summary
    assert re.search(r"dL/dnode\nmin \S+  mean \S+  max \S+\n[▁▂▃▄▅▆▇█]{8}",
                     text(browser, "#info"))
    clean(browser, url.replace("page.html", "layers.html"))


def test_the_stepper_shows_the_engines_gradient_at_each_step(browser, tmp_path):
    root, tr, names, title = neuron_graph()
    page = explore(root, tr, names, title)
    url = show(browser, page, tmp_path)
    tensors = build(root, tr, names).tensors
    root.backward()                                            # the engine, on its own
    engine = {i: float(tr.grads[t] if n["in"] else t.grad)
              for i, (n, t) in enumerate(zip(page.data["nodes"], tensors))}
    browser.screenshot(os.path.join(SHOTS, "minigrad-explore-neuron-start.png"))
    steps = len(page.data["steps"])
    for k in range(1, steps + 1):
        browser.mouse("#forward", "click")
        assert text(browser, "#at") == f"step {k} of {steps}"
        node, g = re.search(r"VJP of n(\d+) .* = (\S+)$", text(browser, "#step-info .vjp")).groups()
        assert float(g) == pytest.approx(engine[int(node)], rel=1e-5)  # complete: final
        if k == 2:
            browser.screenshot(os.path.join(SHOTS, "minigrad-explore-neuron-step2.png"))
    for i, grad in engine.items():                              # every node's Σ, at the end
        shown = text(browser, f"#n{i} text.sum")
        assert float(shown.split(" ")[1]) == pytest.approx(grad, rel=1e-3, abs=1e-9), i
    assert "Done" in text(browser, "#step-info")
    browser.mouse("#back", "click")
    assert text(browser, "#at") == f"step {steps - 1} of {steps}"
    clean(browser, url)


def test_the_naive_order_shows_where_it_goes_wrong_on_a_reused_value(browser, tmp_path):
    c, tr, names, title = reused_graph()
    url = show(browser, explore(c, tr, names, title), tmp_path)
    browser.eval("const m = document.getElementById('mode'); m.value = 'naive';"
                 "m.dispatchEvent(new Event('change'))")
    sums = []
    for _ in range(3):
        browser.mouse("#forward", "click")
        sums += [float(s) for s in re.findall(r"sum so far (\S+)", text(browser, "#step-info"))]
    assert sums == [1, 2, 2, 4, 6, 8]                          # b: 1, 2; a: 2, 4; then 6, 8
    info = text(browser, "#step-info")
    assert "n1 b = add runs its VJP a second time" in info
    assert "naive: n0 a gets 8, the engine 4: wrong" in info
    browser.screenshot(os.path.join(SHOTS, "minigrad-explore-naive.png"))
    c.backward()
    assert float(names["a"].grad) == 4
    clean(browser, url)


def test_hostile_names_show_as_text_and_run_nothing(browser, tmp_path):
    evil = ["</script><script>alert(1)</script>", "<img src=x onerror=alert(2)>",
            "q\"'&\x1b[31m", "rtl\u202eevil"]
    xs = [mg.tensor(float(i + 1), requires_grad=True) for i in range(len(evil))]
    with trace() as tr:
        with scope(evil[1]):
            y = sum(xs[1:], xs[0] * 2.0)
    url = show(browser, explore(y, tr, dict(zip(evil, xs)), title=evil[0]), tmp_path)
    assert browser.eval("document.scripts.length") == 2
    assert browser.eval("document.querySelectorAll('img').length") == 0
    assert text(browser, "h1") == evil[0]
    titles = browser.eval("Array.from(document.querySelectorAll('#graph text.title'), "
                          "t => t.textContent.replace(/^n\\d+ /, ''))")
    assert sorted(titles) == sorted(evil[:2] + ["q\"'&␛[31m", "rtl\\u202eevil", "▸ " + evil[1]])
    assert browser.eval(NODES) == 5                            # 4 inputs, 1 group
    clean(browser, url)


def test_the_chinese_page_speaks_chinese(browser, tmp_path):
    from minigrad import i18n
    i18n.set_language("zh")
    try:
        page = explore(*reused_graph())
    finally:
        i18n.set_language("en")
    url = show(browser, page, tmp_path)
    assert text(browser, "#at") == "第 0 步，共 2 步"
    browser.mouse("#forward", "click")
    assert text(browser, "#step-info .vjp") == "n2 c = add 的 VJP，g = dL/dn2 = 1"
    assert browser.eval("document.documentElement.lang") == "zh"
    browser.screenshot(os.path.join(SHOTS, "minigrad-explore-zh.png"))
    clean(browser, url)


def test_clicking_an_attention_weight_shows_its_read_and_the_formulas_numbers(browser, tmp_path):
    import subprocess
    import sys
    run = tmp_path / "dates"
    for args in (["train", "--task", "dates", "--n-train", "200", "--n-val", "20", "--epochs",
                  "1", "--batch-size", "50", "--out", str(run)], ["explore", str(run)]):
        done = subprocess.run([sys.executable, "-m", "models", *args], capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 0, done.stderr
    url = (run / "explore.html").as_uri()
    browser.open(url)
    a = json.loads(browser.eval("document.getElementById('data').textContent"))["attention"]
    T, S = np.shape(a["alpha"])
    browser.mouse('[data-group="decoder"]', "click")          # its T steps: one "× T" box
    steps, shown = '[data-group="decoder/step ×"]', browser.eval(NODES)
    assert text(browser, steps + " text.title") == f"▸ step × {T}"
    browser.mouse(steps, "click")                              # then one box per step
    assert browser.eval(NODES) == shown - 1 + T
    assert browser.eval("document.querySelectorAll('[data-group^=\"decoder/step \"]').length") == T
    assert browser.eval("document.querySelectorAll('#att td').length") == T * S
    t, j = 3, 2
    browser.mouse(f'#att td[data-row="{t}"][data-col="{j}"]')
    info = text(browser, "#att-info")
    value = lambda label: float(re.search("^" + label + r" = (\S+)$", info, re.M).group(1))  # noqa
    st = a["steps"][t]
    assert value("α") == pytest.approx(a["alpha"][t][j], rel=1e-5)
    assert value("the engine's ∂L/∂e") == pytest.approx(st["de"][j], rel=1e-5)
    assert value(r"∂L/∂e = α \(g·h_j − g·c_t\)") == pytest.approx(st["de"][j], rel=1e-3)
    assert browser.eval("document.querySelectorAll('#att td.lit').length") == T + S - 1
    browser.mouse(f'#att td[data-row="{t}"][data-col="{j}"]', "click")   # to its read
    assert browser.eval("Array.from(document.querySelectorAll('#graph .node.hit'), "
                        "g => g.id)") == [f"n{st['node']}"]
    assert text(browser, "#info").startswith(f"n{st['node']} read  (op)  decoder/step {t}/")
    browser.screenshot(os.path.join(SHOTS, "minigrad-explore-run.png"))
    clean(browser, url)
