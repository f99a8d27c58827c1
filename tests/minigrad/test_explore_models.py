"""``python -m models explore RUN``: a trained run's explorer page, with its attention panel.
The fast test builds the page of an untrained model; the slow ones train a tiny run on the
command line and write its page into the run (``test_explore_browser.py`` clicks on it)."""
import json
import re
import subprocess
import sys

import numpy as np
import pytest

from models.app.data import make_task
from models.app.explore import explore_pair
from models.seq2seq import ModelConfig, Seq2Seq


def data_of(page: str) -> dict:
    return json.loads(re.search(r'id="data">(.*?)</script>', page, re.S).group(1))


def test_the_attention_panel_holds_alpha_and_the_read_formula_with_the_engines_numbers():
    task = make_task("dates", np.random.default_rng(0), 4, 2, 3, 10)
    model = Seq2Seq(ModelConfig(len(task.src_vocab), len(task.tgt_vocab), embed=8, hidden=8,
                                dec_hidden=8, attn=8), np.random.default_rng(1))
    pair = task.val[0]
    page = explore_pair(model, task.src_vocab, task.tgt_vocab, pair, "t")
    d = page.data
    a = d["attention"]
    T, S = len(pair[1]) + 1, len(pair[0]) + 1                     # + <eos>
    assert np.shape(a["alpha"]) == (T, S) and len(a["steps"]) == T
    assert a["src"][-1] == a["tgt"][-1] == "<eos>" and "".join(a["tgt"][:-1]) == pair[1]
    np.testing.assert_allclose(np.sum(a["alpha"], axis=1), 1, rtol=1e-5)
    for t, st in enumerate(a["steps"]):
        node = d["nodes"][st["node"]]
        assert node["t"] == "read" and node["sc"][:2] == ["decoder", f"step {t}"]
        formula = np.array(a["alpha"][t]) * (np.array(st["gh"]) - st["gc"][0])
        np.testing.assert_allclose(formula, st["de"], rtol=1e-4, atol=1e-9)  # α g·(h − c)
        assert abs(sum(st["de"])) <= 1e-5 * sum(map(abs, st["de"]))  # Σ_j ∂L/∂e_j = 0
    assert data_of(page.html)["attention"] == a


def run(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "models", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=300)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    out = tmp_path_factory.mktemp("runs") / "dates"
    done = run("train", "--task", "dates", "--n-train", "200", "--n-val", "20", "--epochs", "1",
               "--batch-size", "50", "--out", str(out))
    assert done.returncode == 0, done.stderr
    return out


@pytest.mark.slow
def test_the_page_goes_into_the_run_and_never_over_a_users_file(trained):
    first, second = run("explore", str(trained)), run("explore", str(trained), "--lang", "zh")
    assert first.returncode == second.returncode == 0, first.stderr + second.stderr
    assert first.stdout == f"wrote {trained / 'explore.html'}\n"
    assert second.stdout == f"已写入 {trained / 'explore-2.html'}\n"       # a new name, in Chinese
    page = (trained / "explore.html").read_text(encoding="utf-8")
    assert len(page.encode()) <= 1_000_000 and len(data_of(page)["nodes"]) > 900
    again = trained.parent / "again.html"                     # the same run: the same bytes
    assert run("explore", str(trained), "--out", str(again)).returncode == 0
    assert again.read_bytes() == (trained / "explore.html").read_bytes()
    user = trained / "notes.html"
    user.write_text("mine")
    refused = run("explore", str(trained), "--out", str(user))
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1
    assert "notes.html exists and is not an explorer page" in refused.stderr
    assert user.read_text() == "mine"
    missing = run("explore", str(trained / "nothing"))
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1, missing.stderr



@pytest.mark.slow
def test_a_1200_node_seq2seq_loss_fits_in_one_megabyte():
    from minigrad.viz import explore, trace
    from models.app.graphs import demo_batch
    rng = np.random.default_rng(0)
    model = Seq2Seq(ModelConfig(20, 20, dtype="float32"), rng)
    src, src_mask, tgt, tgt_mask = demo_batch(rng, 32, 20, 20)            # (B, S), (B, T)
    with trace(model) as tr:
        loss = model.loss(src, tgt, src_mask, tgt_mask)
    page = explore(loss, tr)
    assert len(page.data["nodes"]) >= 1200 and len(page.html.encode()) <= 1_000_000
    assert page.data["naive"] == []                                       # too big to replay
