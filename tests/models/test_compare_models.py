"""``compare-models`` on a tiny budget: the table has every model and length (longer ones
starred), the per-head pictures are drawn in the terminal and as SVG files."""
from __future__ import annotations

import re

import numpy as np
import pytest

from models.app import cli
from models.app.compare_models import MODELS, ModelsConfig, long_pairs
from models.app.data import make_task
from models.seq2seq import ModelConfig, Seq2Seq


@pytest.mark.slow
def test_compare_models_prints_the_table_and_draws_the_heads(tmp_path, capsys):
    argv = ["compare-models", "--n-train", "200", "--n-val", "40", "--n-long", "20",
            "--epochs", "1", "--max-len", "6", "--long-len", "8", "--out", str(tmp_path)]
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    for name, _ in MODELS:
        assert re.search(rf"^{name} +\d{{2}},\d{{3}} ", out, re.M), name
    assert re.search(r"^ +3 +4 +5 +6 +7\* +8\*$", out, re.M)
    assert "Transformer head 4" in out and "encoder head 1" in out and "Bahdanau (additive)" in out
    cross = (tmp_path / "cross_attention_heads.svg").read_text()
    assert cross.count("<svg") == 1 + 1 + 4                             # page, Bahdanau, 4 heads
    assert (tmp_path / "encoder_self_attention.svg").read_text().count("<svg") == 1 + 4


def test_similar_parameter_counts_and_lengths_beyond_training():
    data = make_task("reverse", np.random.default_rng(0), 10, 0)
    params = [sum(p.size for p in Seq2Seq(ModelConfig(len(data.src_vocab), len(data.tgt_vocab),
                                                      **sizes)).parameters())
              for _, sizes in MODELS]
    assert max(params) / min(params) < 1.15
    long = long_pairs(ModelsConfig(max_len=5, long_len=7, n_long=30), np.random.default_rng(1))
    assert long and all(5 < len(s) <= 7 for s, _ in long)
