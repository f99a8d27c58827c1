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


def models(*args):
    import subprocess
    import sys
    done = subprocess.run([sys.executable, "-m", "models", *args], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done


def shown_column(browser, table, k):
    """The numbers of a heatmap's k-th aid column (0: the row sums Σ, 1: the entropies H)."""
    return [float(x) for x in browser.eval(
        f"Array.from(document.querySelectorAll('#{table} tr'), r => r.querySelectorAll('th.aid')"
        f"[{k}]).slice(1).map(c => c.textContent)")]


def test_the_training_slider_replays_alpha_from_uniform_to_diagonal(browser, tmp_path):
    run = tmp_path / "copy"
    models("train", "--task", "copy", "--n-train", "1500", "--n-val", "100", "--max-len", "6",
           "--embed", "16", "--hidden", "32", "--dec-hidden", "32", "--attn", "32",
           "--batch-size", "32", "--epochs", "8", "--out", str(run))
    models("explore", str(run))
    url = (run / "explore.html").as_uri()
    browser.open(url)
    d = json.loads(browser.eval("document.getElementById('data').textContent"))
    tr, E = d["training"], len(d["training"]["history"])
    assert [e for e, _ in tr["alpha"]] == list(range(E + 1))     # epoch 0 (untrained) .. E
    assert browser.eval("document.querySelectorAll('#curves polyline').length") == 2
    assert browser.eval("document.querySelectorAll('#curves circle').length") == 2 * E
    slide = "{{ const s = document.getElementById('epoch'); s.value = {}; " \
            "s.dispatchEvent(new Event('input')) }}"
    colours = "Array.from(document.querySelectorAll('#train-att td'), c => c.style.background)"
    mark = "document.getElementById('epoch-mark').getAttribute('x1')"
    browser.eval("document.getElementById('training').scrollIntoView()")
    for e in (E, 0):
        browser.eval(slide.format(e))
        alpha = np.array(tr["alpha"][e][1])                                     # (T, S)
        H = -np.sum(np.where(alpha > 0, alpha * np.log(np.maximum(alpha, 1e-300)), 0), axis=1)
        assert shown_column(browser, "train-att", 1) == pytest.approx(H, abs=0.006)
        assert shown_column(browser, "train-att", 0) == [1.0] * len(alpha)    # Σ_j α_tj
        dots = browser.eval("Array.from(document.querySelectorAll('#train-att td.max'), "
                            "c => +c.getAttribute('data-col'))")
        assert dots == np.argmax(alpha, axis=1).tolist()
        label = text(browser, "#epoch-label")
        if e:
            loss, exact = tr["history"][e - 1][1:]
            assert label == f"epoch {e}: loss {loss:g}, held-out exact match {exact:g}"
            trained, x_trained = browser.eval(colours), float(browser.eval(mark))
            browser.screenshot(os.path.join(SHOTS, "minigrad-explore-training-last.png"))
    assert label.startswith("epoch 0: untrained")
    assert np.all(H > 0.9 * np.log(alpha.shape[1]))                 # near uniform untrained
    assert browser.eval(colours) != trained
    assert float(browser.eval(mark)) < x_trained                    # the curves' epoch marker
    assert "000 §4.3" in text(browser, "#training .source")
    browser.screenshot(os.path.join(SHOTS, "minigrad-explore-training-0.png"))
    clean(browser, url)


def test_the_reading_aids_equal_the_inspect_commands_numbers(browser, tmp_path):
    from models.app.checkpoint import load_checkpoint
    from models.app.data import make_task
    from models.app.diagnose import measure
    from models.app.train_config import TrainConfig, seeds
    run = tmp_path / "dates"
    models("train", "--task", "dates", "--n-train", "200", "--n-val", "20", "--epochs", "2",
           "--batch-size", "50", "--out", str(run))
    models("explore", str(run))
    url = (run / "explore.html").as_uri()
    browser.open(url)
    model, src_vocab, tgt_vocab, index = load_checkpoint(run)
    c = TrainConfig.from_dict(index["train"])
    pair = make_task(c.task, seeds(c.seed)[0], c.n_train, c.n_val, c.min_len, c.max_len).val[0]
    m = measure(model, src_vocab, tgt_vocab, [pair])                 # what `inspect` reports
    a = json.loads(browser.eval("document.getElementById('data').textContent"))["attention"]
    shown = lambda cls: text(browser, f"#attention .aids .{cls}")  # noqa: E731
    h, u = map(float, re.search(r"mean (\S+) nats; uniform ln S = (\S+),", shown("entropy"))
               .groups())
    assert h / u == pytest.approx(m["entropy"], abs=1e-3)         # H_t / ln S, as inspect's
    assert u == pytest.approx(np.log(m["S"][0]), abs=1e-3)
    assert float(re.search(r"step: (\S+) ", shown("eos")).group(1)) == pytest.approx(
        m["eos_mass"], abs=2e-3)
    lo, hi = map(float, re.search(r"α_tj: (\S+) … (\S+) ", shown("rowsum")).groups())
    assert 1 - 1e-4 <= lo <= hi <= 1 + 1e-4
    path = [a["src"][j] for j in np.argmax(m["alpha"][0], axis=1)]
    assert shown("path") == "argmax path (•): " + " ".join(path)
    assert "003 §6" in shown("source") and '"lazy"' in shown("source")
    browser.eval("document.getElementById('attention').scrollIntoView()")
    browser.screenshot(os.path.join(SHOTS, "minigrad-explore-aids.png"))
    clean(browser, url)


def test_a_run_without_epoch_history_says_so_in_either_language(browser, tmp_path):
    from minigrad import i18n
    from models.app.data import make_task
    from models.app.explore import explore_pair
    from models.seq2seq import ModelConfig, Seq2Seq
    task = make_task("copy", np.random.default_rng(0), 4, 2, 3, 5)
    model = Seq2Seq(ModelConfig(len(task.src_vocab), len(task.tgt_vocab), embed=8, hidden=8,
                                dec_hidden=8, attn=8), np.random.default_rng(1))
    for lang, words in (("en", "This run saved no epoch history."), ("zh", "这次运行没有保存")):
        i18n.set_language(lang)
        try:
            page = explore_pair(model, task.src_vocab, task.tgt_vocab, task.val[0], "<b>x</b>")
        finally:
            i18n.set_language("en")
        page.data["training"] = {"history": [], "alpha": [[0, page.data["attention"]["alpha"]]]}
        evil = page.data["attention"]["src"][0] = "<img src=x onerror=alert(1)>"  # a label
        url = show(browser, page, tmp_path, f"{lang}.html")
        assert browser.eval("document.querySelectorAll('img').length") == 0
        assert text(browser, '#train-att th[data-col="0"]') == evil
        assert text(browser, "#no-history").startswith(words)
        assert browser.eval("document.getElementById('no-align') !== null")
        assert browser.eval("document.querySelectorAll('#curves').length") == 0
        assert browser.eval("document.getElementById('epoch').max") == "0"
        if lang == "zh":
            assert text(browser, "#training h2").startswith("训练")
            assert "行和" in text(browser, "#attention .rowsum")
            browser.eval("document.getElementById('training').scrollIntoView()")
            browser.screenshot(os.path.join(SHOTS, "minigrad-explore-training-zh.png"))
        clean(browser, url)


def test_source_004s_page_links_each_weight_to_its_softmax_and_formula(browser, tmp_path):
    from attention.demos.explore_004 import page
    p = page()
    a = p.data["attention"]
    url = show(browser, p, tmp_path, "004.html")
    assert browser.eval("document.querySelectorAll('#att td').length") == 2 * 3
    for t, j in ((0, 1), (1, 2)):
        cell = f'#att td[data-row="{t}"][data-col="{j}"]'
        browser.mouse(cell)
        info = text(browser, "#att-info")
        assert info.startswith(f"step {t}: {a['tgt'][t]} ← {a['src'][j]}")
        engine = float(re.search(r"^the engine's ∂L/∂e = (\S+)$", info, re.M).group(1))
        formula = float(re.search(r"^∂L/∂e = α \(g·h_j − g·c_t\) = (\S+)$", info, re.M).group(1))
        assert engine == pytest.approx(a["steps"][t]["de"][j]) and formula == pytest.approx(
            engine, rel=1e-4)
        browser.mouse(cell, "click")
        assert text(browser, "#info").startswith(f"n{a['steps'][t]['node']} α = softmax")
    assert browser.eval("document.querySelectorAll('#att td.max').length") == 2  # argmax path
    assert text(browser, "#attention .path") == "argmax path (•): I cats"
    browser.screenshot(os.path.join(SHOTS, "minigrad-explore-004.png"))
    clean(browser, url)


def test_a_transformers_heads_are_shown_one_by_one_with_their_aids(browser, tmp_path):
    from test_explore_models import transformer_page
    page = transformer_page()[0]
    heads = page.data["attention"]["heads"]
    url = show(browser, page, tmp_path, "transformer.html")
    assert browser.eval("Array.from(document.getElementById('att-head').options, "
                        "o => o.textContent)")[1:] == [
        "α of layer 1, head 1", "α of layer 1, head 2", "α of layer 2, head 1",
        "α of layer 2, head 2"]
    for l, k, t, j in ((0, 1, 1, 2), (1, 0, 2, 1)):
        browser.eval(f"{{ const h = document.getElementById('att-head'); h.value = '{l} {k}'; "
                     f"h.dispatchEvent(new Event('change')) }}")
        alpha = np.array(heads[l][k])                                        # (T, S)
        H = -np.sum(alpha * np.log(alpha), axis=1)
        assert shown_column(browser, "att", 1) == pytest.approx(H, abs=0.006)
        browser.mouse(f'#att td[data-row="{t}"][data-col="{j}"]')
        assert f"α = {alpha[t, j]:.6g}" in text(browser, "#att-info")
    browser.screenshot(os.path.join(SHOTS, "minigrad-explore-heads.png"))
    clean(browser, url)



def data_in(browser):
    return json.loads(browser.eval("document.getElementById('data').textContent"))


def heat_colours(browser):
    return browser.eval("Array.from(document.querySelectorAll('#att td'), c => c.style.background)")


def pick(browser, select, value):
    browser.eval(f"{{ const s = document.getElementById({select!r}); s.value = {value!r}; "
                 f"s.dispatchEvent(new Event('change')) }}")


def test_a_local_p_weight_shows_its_gaussian_formula_and_jumps_to_its_softmax(browser, tmp_path):
    run = tmp_path / "local-p"
    models("train", "--task", "dates", "--decoder", "luong", "--score", "local-p", "--n-train",
           "200", "--n-val", "20", "--epochs", "1", "--batch-size", "50", "--out", str(run))
    models("explore", str(run))
    url = (run / "explore.html").as_uri()
    browser.open(url)
    d = data_in(browser)
    a, t = d["attention"], 3
    st = a["steps"][t]
    j = int(np.argmax(st["a"]))                                   # inside the window: α > 0
    browser.mouse(f'#att td[data-row="{t}"][data-col="{j}"]', "click")
    info = text(browser, "#att-info")
    alpha, G = map(float, re.search(r"softmax\(e_t\)_j = (\S+), G_tj = exp\(.*\) = (\S+)$",
                                    info, re.M).groups())
    assert (alpha, G) == (pytest.approx(st["a"][j], rel=1e-5), pytest.approx(st["G"][j], rel=1e-5))
    shown = float(re.search(r"^α = (\S+)$", info, re.M).group(1))       # the weight read: α G
    assert shown == pytest.approx(a["alpha"][t][j], rel=1e-5)
    assert shown == pytest.approx(alpha * G, rel=1e-4)
    engine = float(re.search(r"^the engine's ∂L/∂e = (\S+)$", info, re.M).group(1))
    formula = float(re.search(r"^∂L/∂e = α_tj \(G_tj g·h_j − g·c_t\) = (\S+)$", info,
                              re.M).group(1))
    assert engine == pytest.approx(st["de"][j], rel=1e-5)
    assert formula == pytest.approx(engine, rel=1e-3)
    assert browser.eval("Array.from(document.querySelectorAll('#graph .node.hit'), "
                        "g => g.id)") == [f"n{st['node']}"]
    assert text(browser, "#info").startswith(f"n{st['node']} softmax  (op)  decoder/step {t}/")
    assert browser.eval("document.querySelector('#att-mode option[value=dalpha]').textContent"
                        ) == "∂L/∂α_tj = G_tj g·h_j (red < 0 < blue)"
    alpha_colours = heat_colours(browser)
    pick(browser, "att-mode", "dalpha")                              # ∂L/∂α = G g·h_j, shaded
    dA = np.array([np.multiply(s["G"], s["gh"]) for s in a["steps"]])    # (T, S)
    signs = browser.eval("Array.from(document.querySelectorAll('#att td'), c => "
                         "c.style.background.startsWith('rgb(255,') ? -1 : 1)")
    assert heat_colours(browser) != alpha_colours
    clear = np.abs(dA.ravel()) > 0.05 * np.abs(dA).max()           # not rounded to white
    assert np.array(signs)[clear].tolist() == np.sign(dA.ravel()[clear]).tolist()
    browser.eval("document.getElementById('attention').scrollIntoView()")
    browser.screenshot(os.path.join(SHOTS, "minigrad-explore-local-p.png"))
    clean(browser, url)


def test_a_transformer_heads_weight_jumps_to_its_cross_read_with_the_heads_formula(browser,
                                                                                     tmp_path):
    run = tmp_path / "transformer"
    models("train", "--task", "dates", "--decoder", "transformer", "--n-train", "200",
           "--n-val", "20", "--epochs", "1", "--batch-size", "50", "--out", str(run))
    models("explore", str(run))
    models("explore", str(run), "--out", str(tmp_path / "again.html"))
    page = run / "explore.html"
    assert page.read_bytes() == (tmp_path / "again.html").read_bytes()   # deterministic
    assert len(page.read_bytes()) <= 1_000_000
    url = page.as_uri()
    browser.open(url)
    a = data_in(browser)["attention"]
    t, j = 2, 1
    browser.mouse(f'#att td[data-row="{t}"][data-col="{j}"]', "click")    # the heads' mean:
    assert browser.eval("document.querySelectorAll('#graph .node.hit').length") == 0  # no read
    assert "pick a head" in text(browser, "#att-info")
    assert browser.eval("document.querySelector('#att-mode option[value=dalpha]').disabled")
    for l, k in ((1, 2), (0, 1)):
        pick(browser, "att-head", f"{l} {k}")
        c = a["cross"][l]
        browser.mouse(f'#att td[data-row="{t}"][data-col="{j}"]', "click")
        info = text(browser, "#att-info")
        value = lambda label: float(re.search(  # noqa: E731
            "^" + label + r" = (\S+)$", info, re.M).group(1))
        assert f"layer {l + 1}, head {k + 1}: g = ∂L/∂c of the head's read" in info
        assert value("α") == pytest.approx(a["heads"][l][k][t][j], rel=1e-5)
        assert value("the engine's ∂L/∂e") == pytest.approx(c["de"][k][t][j], rel=1e-5)
        assert value(r"∂L/∂e = α \(g·v_j − g·c\)") == pytest.approx(c["de"][k][t][j], rel=1e-3)
        assert browser.eval("Array.from(document.querySelectorAll('#graph .node.hit'), "
                            "g => g.id)") == [f"n{c['node']}"]
        assert text(browser, "#info").startswith(f"n{c['node']} read  (op)  "
                                                 f"decoder/decoder.layers.{l}\n")
        assert not browser.eval("document.querySelector('#att-mode option[value=dalpha]')"
                                ".disabled")
    browser.eval("document.getElementById('attention').scrollIntoView()")
    browser.screenshot(os.path.join(SHOTS, "minigrad-explore-transformer-read.png"))
    clean(browser, url)

# ---- the formula playgrounds of source 004's page -------------------------------------------
def slide(browser, name, value):
    """Move playground ``name``'s slider to ``value`` (as dragging it does: an input event);
    returns its value as the page has it and the table's numbers, rows by columns."""
    at = browser.eval(f"(() => {{ const i = document.getElementById('play-{name}-x');"
                      f"i.value = {value!r}; i.dispatchEvent(new Event('input'));"
                      f"return i.value; }})()")
    table = browser.eval(f"[...document.querySelectorAll('#play-{name} tr')].slice(1).map("
                         f"r => [...r.querySelectorAll('td')].map(td => td.textContent))")
    return float(at), np.array(table, dtype=float).T, text(browser, f"#play-{name} .notes")


def shown(pattern, notes):
    return [float(x) for x in re.search(pattern, notes).groups()]


@pytest.fixture(scope="module")
def play_page(tmp_path_factory):
    from attention.demos.explore_004 import page
    return page()


def test_the_scorer_playground_recomputes_source_004s_read_for_any_state(browser, play_page,
                                                                         tmp_path):
    from attention.demos.source_004 import SOURCES, read_at
    from attention.read import score_grad
    url = show(browser, play_page, tmp_path, "004.html")
    assert text(browser, "#play-004 h3").startswith("Source 004 §6: e_j = vᵀtanh(W_s s")
    for s in (-1, 1, 0.37, -3, 2.5, 0):
        at, (e, alpha, de), notes = slide(browser, "004", s)
        assert at == s and text(browser, "#play-004 .at") == f"decoder state s = {s:g}"
        scores, weights, c = read_at([s])                                # (1, S), (1, S), (1, D)
        formula = score_grad(weights, SOURCES[None], c, np.array([[1.0, 0.5]]))[0]  # (S,)
        np.testing.assert_allclose(e, scores[0], atol=1e-6)
        np.testing.assert_allclose(alpha, weights[0], atol=1e-6)
        np.testing.assert_allclose(de, formula, atol=1e-6)
        np.testing.assert_allclose(shown(r"\(([-\d.]+), ([-\d.]+)\)", notes), c[0], atol=1e-6)
        if abs(s) == 1:                                                  # the article's table
            assert np.round(alpha, 4).tolist() == ([0.5414, 0.3095, 0.1491][::int(-s)])
    browser.eval("document.getElementById('play-004').scrollIntoView()")
    browser.screenshot(os.path.join(SHOTS, "minigrad-explore-play-004.png"))
    before = text(browser, "#at")                # a slider's arrow keys move it, not the stepper
    browser.eval("document.getElementById('play-004-x').focus()")
    for kind in ("keyDown", "keyUp"):
        browser.call("Input.dispatchKeyEvent", type=kind, key="ArrowRight", code="ArrowRight",
                     windowsVirtualKeyCode=39)
    assert browser.eval("document.getElementById('play-004-x').value") == "0.01"
    assert text(browser, "#at") == before and "s = 0.01" in text(browser, "#play-004 .at")
    clean(browser, url)


def test_the_temperature_playground_recomputes_softmax_e_over_T_and_its_entropy(browser,
                                                                               play_page,
                                                                               tmp_path):
    from attention.demos.source_004 import read_at
    from attention.demos.temperature import entropy
    from attention.masking import masked_softmax
    url = show(browser, play_page, tmp_path, "004.html")
    assert text(browser, "#play-003 h3").startswith("Source 003 §6: temperature")
    e = read_at([-1])[0]                                                 # (1, S): 003's scores
    last = None
    for x in (-2, -1, 0, 0.37, 2):                                       # T = 2^x: 0.25 … 4
        T = 2.0 ** x
        at, (shown_e, scaled, alpha), notes = slide(browser, "003", x)
        assert at == x and float(re.search(r"T = (\S+)", text(browser, "#play-003 .at"))
                                 .group(1)) == pytest.approx(T, abs=1e-6)
        weights = masked_softmax(e, temperature=T).data                  # (1, S)
        np.testing.assert_allclose(scaled, e[0] / T, atol=1e-6)
        np.testing.assert_allclose(alpha, weights[0], atol=1e-6)
        h, top = shown(r"H = −Σ_j α_j ln α_j = ([\d.]+) nats.*largest α = ([\d.]+)", notes)
        assert h == pytest.approx(entropy(weights)[0], abs=1e-6)
        assert top == pytest.approx(weights.max(), abs=1e-6)
        assert last is None or h > last                                  # higher T: flatter
        last = h
    browser.eval("document.getElementById('play-003').scrollIntoView()")
    browser.screenshot(os.path.join(SHOTS, "minigrad-explore-play-003.png"))
    clean(browser, url)


def test_the_scaling_playground_shows_raw_scores_saturating_softmax_as_d_grows(browser,
                                                                              play_page,
                                                                              tmp_path):
    from attention.demos.source_000 import scaling
    from attention.demos.temperature import entropy
    from attention.masking import masked_softmax
    from attention.scores import DotScore, ScaledDotScore
    url = show(browser, play_page, tmp_path, "004.html")
    assert text(browser, "#play-000 h3").startswith("Source 000 §2.3: for q, k ~ N(0, I_d)")
    rng = np.random.default_rng(0)                                       # the page's sample
    q, k = rng.standard_normal((1, 256)), rng.standard_normal((1, 8, 256))  # (1, d), (1, S, d)
    std = scaling().values["std"]
    for i, d in enumerate((4, 16, 64, 256)):
        at, (raw, alpha, scaled, beta), notes = slide(browser, "000", i)
        assert text(browser, "#play-000 .at") == f"d = {d}, √d = {np.sqrt(d):g}"
        e = DotScore()(q[:, :d], k[..., :d])                            # (1, S)
        sm, ssm = masked_softmax(e).data, masked_softmax(ScaledDotScore()(q[:, :d], k[..., :d]))
        np.testing.assert_allclose(raw, e.data[0], atol=1e-6)
        np.testing.assert_allclose(scaled, e.data[0] / np.sqrt(d), atol=1e-6)
        np.testing.assert_allclose(alpha, sm[0], atol=1e-6)
        np.testing.assert_allclose(beta, ssm.data[0], atol=1e-6)
        m, ms, h, hs = shown(r"largest α: ([\d.]+) unscaled, ([\d.]+) scaled; entropy: ([\d.]+) "
                             r"unscaled, ([\d.]+) scaled", notes)
        np.testing.assert_allclose([m, ms], [sm.max(), ssm.data.max()], atol=1e-6)
        np.testing.assert_allclose([h, hs], [entropy(sm)[0], entropy(ssm.data)[0]], atol=1e-6)
        np.testing.assert_allclose(shown(r"std\(q·k\) = ([\d.]+) .*std\(q·k/√d\) = ([\d.]+)",
                                         notes), std[d], rtol=1e-3)     # 000-scaling's numbers
    assert m > 0.99 and ms < 0.9                  # at d = 256 raw scores saturate; scaled do not
    browser.eval("document.getElementById('playgrounds').scrollIntoView()")
    browser.screenshot(os.path.join(SHOTS, "minigrad-explore-play-000.png"))
    clean(browser, url)


def test_the_playgrounds_speak_chinese(browser, tmp_path):
    from attention.demos.explore_004 import page
    from minigrad import i18n
    i18n.set_language("zh")
    try:
        url = show(browser, page(), tmp_path, "004-zh.html")
    finally:
        i18n.set_language("en")
    assert text(browser, "#playgrounds h2") == "公式实验：拖动滑块，页面重新计算公式"
    assert text(browser, "#play-004 h3").startswith("来源 004 §6：")
    assert text(browser, "#play-003 h3").startswith("来源 003 §6：温度")
    assert text(browser, "#play-000 h3").startswith("来源 000 §2.3：")
    slide(browser, "003", 2)
    assert text(browser, "#play-003 .at") == "温度 T = 4（T < 1 更尖锐，T > 1 更平缓）"
    assert text(browser, "#play-003 .notes").startswith("熵 H = ")
    browser.eval("document.getElementById('playgrounds').scrollIntoView()")
    browser.screenshot(os.path.join(SHOTS, "minigrad-explore-play-zh.png"))
    clean(browser, url)
