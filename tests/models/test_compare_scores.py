"""python -m models compare-scores: four scores, one budget (sources 000 §2.3 and 003 §3.1)."""
import re

import pytest

from minigrad.runtime import blas
from models.app.cli import main
from models.app.compare import SCORE_RUNS, ScoresConfig, compare_scores, scores_table

TINY = dict(n_train=200, n_val=40, epochs=1, embed=8, hidden=8, attn=8, max_len=6)


@pytest.mark.slow
def test_every_score_gets_the_same_steps_and_is_reported():
    with blas.threads(1):
        results = compare_scores(ScoresConfig(**TINY), log=lambda line: None)
    assert list(results) == [name for name, _, _ in SCORE_RUNS]
    assert len({r["steps"] for r in results.values()}) == 1          # one budget
    assert len({r["params"] for r in results.values()}) == 4         # four different models
    for r in results.values():
        assert 0 <= r["exact"] <= 1 and 0 <= r["token_acc"] <= 1
        assert r["seconds"] > 0
    table = scores_table(results)
    for name in results:
        assert re.search(re.escape(name) + r" +\d+\.\d% +\d+\.\d% +\d+ +\d+\.\ds", table)


@pytest.mark.slow
def test_cli_prints_the_table(capsys):
    args = ["compare-scores"] + [f"--{k.replace('_', '-')}={v}" for k, v in TINY.items()]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "dot (Luong)" in out and "additive (Bahdanau)" in out and "exact match" in out


def test_the_table_reports_the_weights_kept_not_the_last_epoch(monkeypatch):
    """A run that got worse ends with its best epoch's weights: the figures are that epoch's."""
    import models.app.compare as compare

    class Worse(compare.Trainer):
        def run(self, log=print, **kw):
            self.state.history = [
                {"epoch": 1, "step": 5, "val_exact": 0.756, "val_token_acc": 0.9},
                {"epoch": 2, "step": 10, "val_exact": 0.526, "val_token_acc": 0.8}]
            self.state.best, self.state.step = {"epoch": 1, "val_exact": 0.756}, 10
            return self.state

    monkeypatch.setattr(compare, "Trainer", Worse)
    results = compare_scores(ScoresConfig(**TINY), runs=SCORE_RUNS[:1])
    r = results["dot (Luong)"]
    assert (r["exact"], r["token_acc"], r["epoch"]) == (0.756, 0.9, 1)
    row = scores_table(results).splitlines()[1].split()
    assert row[2:5] == ["75.6%", "90.0%", "1"]
