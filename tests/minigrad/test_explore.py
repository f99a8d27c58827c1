"""The HTML explorer (``minigrad.viz.explore``), at the Python level: the embedded data's
schema, its values and gradients equal to the engine's, the backward steps in the engine's own
order, the naive order's mistake on a reused node, one self-contained file (no network
reference, a Content-Security-Policy that forbids fetching), the same bytes for the same graph,
hostile names made harmless, and user files never replaced. The browser tests are in
``test_explore_browser.py``."""
import base64
import hashlib
import html
import json
import re
from html.parser import HTMLParser

import numpy as np
import pytest

import minigrad as mg
from minigrad.engine import topological_order
from minigrad.viz import trace
from minigrad.viz.__main__ import main, neuron_graph, reused_graph
from minigrad.viz.explore import MARK, SMALL, explore
from minigrad.viz.graph import build

KEYS = {"t", "k", "s", "d", "sc", "x", "in", "v", "g"}


def data_of(page: str) -> dict:
    blob = re.search(r'<script type="application/json" id="data">(.*?)</script>', page, re.S)
    return json.loads(blob.group(1))


TAGS = ["html", "head", "meta", "meta", "title", "/title", "style", "/style", "/head", "body",
        "script", "/script", "script", "/script", "/body", "/html"]


def tags_of(page: str) -> list:
    tags, parser = [], HTMLParser()
    parser.handle_starttag = lambda tag, attrs: tags.append(tag)
    parser.handle_endtag = lambda tag: tags.append("/" + tag)
    parser.feed(page)
    parser.close()
    return tags


def close(shown, expected) -> bool:
    """An embedded array (whole, or min/mean/max) equals ``expected`` to its 6 digits."""
    a = np.asarray(expected, dtype=float)
    if isinstance(shown, dict):
        return np.allclose([shown["min"], shown["mean"], shown["max"]],
                           [a.min(), a.mean(), a.max()], rtol=1e-5, atol=1e-12)
    return np.allclose(np.asarray(shown, dtype=float), a.reshape(-1), rtol=1e-5, atol=1e-12)


def traced_mlp():
    """A small MLP with a reused hidden layer, matrices beyond SMALL numbers, in a scope."""
    rng = np.random.default_rng(0)
    x = mg.tensor(rng.standard_normal((3, 5)), requires_grad=True)
    w = mg.tensor(rng.standard_normal((5, 5)), requires_grad=True)
    with trace() as tr:
        from minigrad.viz import scope
        with scope("layer"):
            h = (x @ w).tanh()
        y = ((h @ w) * h).sum()
    return y, tr, {"x": x, "w": w, "h": h}


def test_the_data_holds_every_node_with_the_engines_values_and_gradients():
    for make in (neuron_graph, reused_graph, traced_mlp):
        root, tr, names, *_ = make()
        page = explore(root, tr, names).html
        d = data_of(page)
        assert d == explore(root, tr, names).data          # the page holds the data as built
        tensors = build(root, tr, names).tensors
        pos = {id(t): i for i, t in enumerate(tensors)}   # by identity: == is elementwise
        assert len(d["nodes"]) == len(tensors)
        assert d["order"] == [pos[id(t)] for t in topological_order([root])]
        root.backward()                                    # the engine's own gradients
        for n, t in zip(d["nodes"], tensors):
            assert set(n) == KEYS and n["s"] == list(t.data.shape) and n["d"] == str(t.dtype)
            assert close(n["v"], t.data)
            assert isinstance(n["v"], list) == (t.data.size <= SMALL)
            engine_grad = tr.grads[t] if n["in"] else t.grad
            assert close(n["g"], engine_grad), n["t"]
            assert all(0 <= p < pos[id(t)] for p in n["in"])          # inputs come first


def test_each_step_is_one_vjp_in_reverse_topological_order_with_running_sums():
    root, tr, names = traced_mlp()
    d = explore(root, tr, names).data
    tensors = build(root, tr, names).tensors
    root.backward()
    ops = [i for i in reversed(d["order"]) if d["nodes"][i]["in"]]
    assert [s["n"] for s in d["steps"]] == ops            # each op's VJP once, root first
    done = set()
    for s in d["steps"]:
        t = tensors[s["n"]]
        assert close(s["g"], tr.grads[t])                 # its gradient is complete: final
        readers = [r for r, n in enumerate(d["nodes"]) if s["n"] in n["in"]]
        assert all(r in done for r in readers)            # after every node that reads it
        done.add(s["n"])
        assert sorted(p for p, *_ in s["to"]) == sorted(d["nodes"][s["n"]]["in"])
    w = names["w"]  # read twice (x @ w and h @ w): its running sum ends at the engine's grad
    w_to = [to for s in d["steps"] for to in s["to"] if tensors[to[0]] is w]
    assert [len(to) for to in w_to] == [2, 3]             # a first share; then share and sum
    assert close(w_to[1][2], w.grad) and not close(w_to[0][1], w.grad)


def test_the_naive_recursion_double_counts_the_reused_value():
    """micrograd #64: a = 1; b = a + a; c = b + b gives dc/da = 4; visiting b once per read
    runs its VJP twice and gives 8."""
    c, tr, names, _ = reused_graph()
    d = explore(c, tr, names).data
    a = names["a"]
    c.backward()
    assert a.grad == 4 and d["nodes"][0]["g"] == [4.0]
    assert [s["n"] for s in d["steps"]] == [2, 1]
    assert [s["n"] for s in d["naive"]] == [2, 1, 1]
    assert [s["wrong"] for s in d["naive"]] == ["", "", "again"]
    assert d["naive"][-1]["to"][-1] == [0, [2.0], [8.0]]  # a: its last share makes 8, not 4
    neuron = explore(*neuron_graph()).data                # a tree: the naive order is right
    assert not any(s["wrong"] for s in neuron["naive"])
    x = mg.tensor(0.5, requires_grad=True)                 # a read on two paths of two lengths:
    a = x.tanh()                                           # c = a + 2a visits a first with 1,
    c = a + a * 2.0                                        # before b's share 2 has come
    naive = explore(c).data["naive"]
    assert [(s["n"], s["wrong"], s["g"]) for s in naive] == [(4, "", [1.0]), (1, "early", [1.0]),
                                                            (3, "", [1.0]), (1, "again", [3.0])]


def test_one_file_with_nothing_to_fetch_and_a_policy_that_forbids_it():
    page = explore(*neuron_graph()).html
    assert page.startswith("<!DOCTYPE html>" + MARK)
    assert not re.search(r"(?i)(https?|wss?|ftp):|src=|href=|@import|fetch\(|XMLHttp|"
                         r"WebSocket|import\(|url\((?!#)", page)
    csp = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)">', page)
    policy = dict(p.strip().split(" ", 1) for p in csp.group(1).split(";"))
    assert policy["default-src"] == "'none'" and policy["base-uri"] == "'none'"
    scripts = re.findall(r"<script>(.*?)</script>", page, re.S)
    styles = re.findall(r"<style>(.*?)</style>", page, re.S)
    sha = lambda s: "'sha256-" + base64.b64encode(hashlib.sha256(s.encode()).digest()).decode()
    assert [policy["script-src"], policy["style-src"]] == [sha(scripts[0]) + "'",
                                                             sha(styles[0]) + "'"]
    assert len(page.encode()) < 40_000
    assert tags_of(page) == TAGS                          # it parses, every element closed


def test_the_same_graph_gives_the_same_bytes():
    assert explore(*neuron_graph()).html == explore(*neuron_graph()).html
    assert explore(*traced_mlp()).html == explore(*traced_mlp()).html


HOSTILE = ["</script><script>alert(1)</script>", "q\"'&<b>", "esc\x1b[31m\x00nul",
           "rtl\u202eevil\u2066", "zw\u200b\u200d\ufeff", "line\u2028break", "--></style>"]


def test_hostile_names_cannot_break_the_page_or_run_script():
    xs = [mg.tensor(float(i + 1), requires_grad=True) for i in range(len(HOSTILE))]
    with trace() as tr:
        from minigrad.viz import scope
        with scope(HOSTILE[0]), scope(HOSTILE[3]):
            y = sum(xs[1:], xs[0] * 2.0)
    page = explore(y, tr, dict(zip(HOSTILE, xs)), title=HOSTILE[0] + HOSTILE[3]).html
    assert page.count("<script") == 2 and page.count("</script") == 2 and tags_of(page) == TAGS
    assert page.count("<style") == 1 and "<b>" not in page and "-->" not in page[len(MARK) + 15:]
    assert not re.search("[\x00-\x09\x0b-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2066-\u2069"
                         "\ufeff]", page)
    d = data_of(page)
    titles = [n["t"] for n in d["nodes"]]
    assert HOSTILE[0] in titles and "q\"'&<b>" in titles  # shown as text, literally
    assert "esc␛[31m␀nul" in titles and "rtl\\u202eevil\\u2066" in titles
    assert d["nodes"][-1]["sc"] == [HOSTILE[0], "rtl\\u202eevil\\u2066"]


def test_refusals_are_one_line_and_name_the_problem():
    x = mg.tensor(2.0, requires_grad=True)
    with pytest.raises(TypeError, match="explore: root must be a minigrad Tensor, got float"):
        explore(2.0)
    with pytest.raises(ValueError, match=r"explore: .*\(op 'leaf'\) is empty \(a leaf\)"):
        explore(x)
    y = (x * x).tanh()
    y.backward()
    with pytest.raises(ValueError, match=r"\(op 'tanh'\) is freed; call explore before "
                                         r"backward\(\), or use backward\(retain_graph=True\)"):
        explore(y)
    h = x * x
    h.backward()                                          # a part freed, the rest alive
    with pytest.raises(ValueError, match=r"explore: op 'mul' in this graph was freed by "
                                         r"backward\(\)"):
        explore(h.tanh())
    x = mg.tensor(2.0, requires_grad=True)
    z = (x * x).tanh()
    z.backward(retain_graph=True)
    assert explore(z).data["nodes"][0]["g"] == [pytest.approx(float(x.grad), rel=1e-5)]


def test_save_never_replaces_a_users_file_and_jupyter_shows_a_sandboxed_frame(tmp_path):
    page = explore(*reused_graph())
    mine, theirs = tmp_path / "e.html", tmp_path / "notes.html"
    theirs.write_text("my notes")
    page.save(mine)
    page.save(mine)                                       # its own page: replaced
    assert mine.read_text(encoding="utf-8") == page.html
    with pytest.raises(FileExistsError, match="notes.html exists and is not an explorer page"):
        page.save(theirs)
    assert theirs.read_text() == "my notes"
    frame = page._repr_html_()
    assert frame.startswith('<iframe sandbox="allow-scripts"') and '"' not in frame[
        frame.index('srcdoc="') + 8:-len('"></iframe>')]
    assert html.unescape(frame[frame.index('srcdoc="') + 8:-len('"></iframe>')]) == page.html


def test_the_command_writes_the_page_and_refuses_a_users_file(tmp_path, capsys):
    out = tmp_path / "reused.html"
    assert main(["explore", "--example", "reused", "--out", str(out)]) == 0
    assert capsys.readouterr().out == f"wrote {out}\n"
    assert data_of(out.read_text(encoding="utf-8"))["title"] == "a = 1; b = a + a; c = b + b"
    user = tmp_path / "user.html"
    user.write_text("mine")
    assert main(["explore", "--out", str(user)]) == 1
    err = capsys.readouterr().err
    assert err == (f"python -m minigrad.viz explore: {user} exists and is not an explorer page; "
                   f"it is not replaced: choose another path\n")
    assert user.read_text() == "mine"
    assert main(["explore", "--out", str(tmp_path / "no" / "x.html")]) == 1
    assert capsys.readouterr().err == (f"python -m minigrad.viz explore: cannot write "
                                       f"{tmp_path / 'no' / 'x.html'}: No such file or directory\n")


def test_every_word_of_the_page_has_a_chinese_translation_with_its_fields(tmp_path):
    import string
    from minigrad import i18n, i18n_build
    from minigrad.viz.explore import HERE
    english = json.loads((HERE / "explore.json").read_text(encoding="utf-8"))
    catalog = i18n_build.messages("minigrad")
    fields = lambda t: sorted(f for _, f, _, _ in string.Formatter().parse(t) if f)  # noqa
    for text in english.values():
        assert catalog.get(text) and fields(catalog[text]) == fields(text), text
    try:
        assert main(["explore", "--lang", "zh", "--out", str(tmp_path / "zh.html")]) == 0
    finally:
        i18n.set_language("en")
    page = (tmp_path / "zh.html").read_text(encoding="utf-8")
    d = data_of(page)
    assert '<html lang="zh">' in page and d["lang"] == "zh"
    assert d["strings"]["step"] == "第 {k} 步，共 {n} 步" and d["title"].startswith("micrograd 的")
    assert data_of(explore(*neuron_graph()).html)["strings"] == english


def test_source_004s_example_page_holds_the_articles_numbers(tmp_path, capsys):
    from attention.__main__ import main as attention
    from attention.demos import graph_004
    from attention.demos.explore_004 import page
    from attention.demos.source_004 import SOURCES
    from attention.read import score_grad
    d, g = page().data, np.array([1.0, 0.5])
    a = d["attention"]
    assert a["src"] == ["I", "like", "cats"] and a["tgt"] == ["s = -1", "s = 1"]
    t = graph_004.traced()[3]                                  # the 004-graph demo: state A
    np.testing.assert_allclose(a["alpha"][0], t["alpha"].data[0], rtol=1e-5)
    for b, st in enumerate(a["steps"]):                        # ∂L/∂e = α_j g·(h_j − c), §7
        alpha = np.array(a["alpha"][b:b + 1])                                     # (1, S)
        formula = score_grad(alpha, SOURCES[None], alpha @ SOURCES, g[None])[0]   # (S,)
        np.testing.assert_allclose(st["de"], formula, rtol=1e-4, atol=1e-9)
        assert d["nodes"][st["node"]]["t"] == "α = softmax"    # a click goes to the softmax
    np.testing.assert_allclose(a["steps"][0]["de"], graph_004.graph().values["on_node"], rtol=1e-5)
    assert attention(["004-explore", "--out", str(tmp_path)]) == 0
    first = (tmp_path / "004_explore.html").read_bytes()
    assert attention(["004-explore", "--out", str(tmp_path)]) == 0       # its own page again:
    assert (tmp_path / "004_explore.html").read_bytes() == first          # the same bytes
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "004_explore.html").write_text("notes")
    assert attention(["004-explore", "--out", str(mine)]) == 0
    assert "004_explore.html exists and is not an explorer page" in capsys.readouterr().out
    assert (mine / "004_explore.html").read_text() == "notes"


def test_the_playgrounds_embed_the_librarys_numbers_and_the_articles_scorer():
    from attention.demos.explore_004 import page, playgrounds
    from attention.demos.source_000 import scaling
    from attention.demos.source_004 import read_at
    from attention.scores import DotScore
    d = playgrounds()
    A = {k: np.array(v) for k, v in d["scorer"].items() if k != "tokens"}
    assert A["W_s"].tolist() == [[1], [1]] and A["W_h"].tolist() == [[1, 0], [0, 1]]  # §6's
    assert A["v"].tolist() == [1, -1] and A["b"].tolist() == [0, 0] and A["g"].tolist() == [1, .5]
    for s, article in ((-1, [0.5414, 0.3095, 0.1491]), (1, [0.1491, 0.3095, 0.5414])):
        e = np.tanh(A["W_s"][:, 0] * s + A["h"] @ A["W_h"].T + A["b"]) @ A["v"]   # (S,)
        alpha = np.exp(e) / np.exp(e).sum()                                     # (S,)
        assert np.round(alpha, 4).tolist() == article                           # the table
        np.testing.assert_allclose(alpha, read_at([s])[1][0], rtol=1e-12)
    c_A = read_at([-1])[1][0] @ A["h"]
    assert np.round(c_A, 6).tolist() == [1.392334, -0.607666]                   # c_A of §6
    assert d["temperature"]["e"] == read_at([-1])[0][0].tolist()   # 003-temperature's scores
    rng = np.random.default_rng(d["scaling"]["seed"])
    q, k = rng.standard_normal(256), rng.standard_normal((8, 256))              # (d,), (S, d)
    std = scaling().values["std"]
    assert [r["d"] for r in d["scaling"]["rows"]] == list(std) == [4, 16, 64, 256]
    for r in d["scaling"]["rows"]:
        np.testing.assert_allclose(r["e"], k[:, :r["d"]] @ q[:r["d"]], rtol=1e-12)
        assert r["std"] == list(std[r["d"]]) and abs(r["std"][0] / np.sqrt(r["d"]) - 1) < .02
    assert page().data["playgrounds"] == d
    assert json.loads(json.dumps(d)) == d                                       # exact floats
