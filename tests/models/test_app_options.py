"""Every number a user gives that sets memory or time is capped, and nothing is accepted
silently (issue 23, items 3 and 7): a value past its limit, a zero or negative size, a float
that is not finite, an option the chosen decoder does not read -- each is refused before any
work, in one line naming the option and the limit, exit status 2; a non-finite log p is never
printed as a result."""
import math

import pytest

from models.app import options
from models.app.checkpoint import save_checkpoint
from models.app.cli import main
from models.app.translate import show
from models.decoding import Translation
from models.vocab import Vocab
from model_helpers import tiny_model

BASE = ["--task", "copy", "--n-train", "64", "--n-val", "8", "--epochs", "1"]
TRANSFORMER = ["--decoder", "transformer"]
LONG = "x" * 601

# (command line, what the one-line error must say: the option and its limit)
REFUSED = [
    # ---- train: sizes and time
    (["train", "--epochs", "100001"], "train: --epochs must be 1..100000, got 100001"),
    (["train", "--batch-size", "4097"], "train: --batch-size must be 1..4096, got 4097"),
    (["train", "--embed", "1025"], "train: --embed must be 1..1024, got 1025"),
    (["train", "--hidden", "1025"], "train: --hidden must be 1..1024, got 1025"),
    (["train", "--dec-hidden", "1025"], "train: --dec-hidden must be 1..1024, got 1025"),
    (["train", "--attn", "1025"], "train: --attn must be 1..1024, got 1025"),
    (["train", "--window", "1025"], "train: --window must be 0..1024, got 1025"),
    (["train", *TRANSFORMER, "--d-model", "1025"], "train: --d-model must be 1..1024, got 1025"),
    (["train", *TRANSFORMER, "--heads", "1025"], "train: --heads must be 1..1024, got 1025"),
    (["train", *TRANSFORMER, "--ff", "4097"], "train: --ff must be 1..4096, got 4097"),
    (["train", *TRANSFORMER, "--layers", "49"], "train: --layers must be 1..48, got 49"),
    (["train", "--task", "copy", "--max-len", "1001"], "max_len must be <= 1000, got 1001"),
    (["train", "--n-train", str(10 ** 12)], "examples need about"),
    (["train", "--threads", "257"], "train: --threads must be 1..256, got 257"),
    (["--threads", "0", "train"], "train: --threads must be 1..256, got 0"),
    # ---- train: zero or negative sizes (--dec-hidden 0 was replaced by the default)
    (["train", "--dec-hidden", "0"], "train: --dec-hidden must be 1..1024, got 0"),
    (["train", "--hidden", "-1"], "train: --hidden must be 1..1024, got -1"),
    (["train", "--n-val", "0"], "train: --n-val must be at least 1, got 0"),
    (["train", "--min-len", "0"], "train: --min-len must be at least 1, got 0"),
    (["train", "--window", "-1"], "train: --window must be 0..1024, got -1"),
    (["train", *TRANSFORMER, "--heads", "0"], "train: --heads must be 1..1024, got 0"),
    (["train", *TRANSFORMER, "--ff", "0"], "train: --ff must be 1..4096, got 0"),
    (["train", "--seed", "-1"], "train: --seed must be at least 0, got -1"),
    # ---- train: floats that must be finite
    (["train", "--target", "inf"], "train: --target must be a finite number, got inf"),
    (["train", "--target", "nan"], "train: --target must be a finite number, got nan"),
    (["train", "--lr", "nan"], "train: --lr must be a finite number, got nan"),
    (["train", "--attn-dropout", "nan"], "train: --attn-dropout must be a finite number, got nan"),
    (["train", "--clip=-inf"], "train: --clip must be a finite number, got -inf"),
    (["train", "--time-limit", "-1"], "train: --time-limit must be at least 0, got -1.0"),
    # ---- translate (checked before the checkpoint is read: it does not exist here)
    (["translate", "nowhere", "abc", "--beam", "1001"], "translate: --beam must be 0..1000, got 1001"),
    (["translate", "nowhere", "abc", "--max-len", "1001"], "translate: --max-len must be 1..1000"),
    (["translate", "nowhere", "abc", "--max-len", "0"], "translate: --max-len must be 1..1000, got 0"),
    (["translate", "nowhere", "abc", "--length-penalty", "11"],
     "translate: --length-penalty must be 0..10, got 11.0"),
    (["translate", "nowhere", "abc", "--length-penalty", "nan"],
     "translate: --length-penalty must be a finite number, got nan"),
    (["translate", "nowhere", "x" * 1001], "translate: a text may have at most 1000 characters, "
                                            "got one of 1001"),
    (["translate", "nowhere", *["x"] * 1001], "translate: at most 1000 texts at once, got 1001"),
    (["translate", "nowhere", LONG, "--beam", "200"],
     "translate: --beam × the longest text must be at most 100,000, got 200 × 601 = 120,200"),
    # ---- graph: a traced graph grows with all three
    (["graph", "--length", "51"], "graph: --length must be 4..50, got 51"),
    (["graph", "--length", "3"], "graph: --length must be 4..50, got 3"),
    (["graph", "--batch", "129"], "graph: --batch must be 1..128, got 129"),
    (["graph", "--batch", "0"], "graph: --batch must be 1..128, got 0"),
    (["graph", "--vocab", "501"], "graph: --vocab must be 2..500, got 501"),
    (["graph", "--vocab", "1"], "graph: --vocab must be 2..500, got 1"),
    # ---- the comparisons and inspect
    (["compare-models", "--long-len", "2"], "compare-models: --long-len must be more than "
                                            "--max-len (10)"),
    (["compare-models", "--long-len", "1001"], "compare-models: --long-len must be 1..1000"),
    (["compare-models", "--n-long", "0"], "compare-models: --n-long must be 1..100000, got 0"),
    (["compare-models", "--target", "nan"], "compare-models: --target must be a finite number"),
    (["compare-models", "--target", "1.5"], "compare-models: --target must be 0..1, got 1.5"),
    (["compare-models", "--epochs", "0"], "compare-models: --epochs must be 1..100000, got 0"),
    (["compare-length", "--hidden", "0"], "compare-length: --hidden must be 1..1024, got 0"),
    (["compare-length", "--batch-size", "5000"], "compare-length: --batch-size must be 1..4096"),
    (["compare-length", "--lr", "inf"], "compare-length: --lr must be a finite number, got inf"),
    (["compare-scores", "--n-train", "0"], "compare-scores: --n-train must be at least 1, got 0"),
    (["compare-scores", "--embed", "2000"], "compare-scores: --embed must be 1..1024, got 2000"),
    (["inspect", "nowhere", "--n", "0"], "inspect: --n must be 1..100000, got 0"),
    (["demo", "--epochs", "0"], "demo: --epochs must be 1..100000, got 0"),
    (["demo", "--n-train", "-5"], "demo: --n-train must be at least 1, got -5"),
    # ---- options the chosen decoder does not read (they were ignored)
    (["train", "--cell", "lstm"], "train: --cell applies to the luong decoder, not to --decoder "
                                  "bahdanau: drop it"),
    (["train", "--input-feeding"], "train: --input-feeding applies to the luong decoder"),
    (["train", "--combine", "gate"], "train: --combine applies to the luong decoder"),
    (["train", "--heads", "2"], "train: --heads applies to the transformer decoder, not to "
                                "--decoder bahdanau"),
    (["train", "--decoder", "luong", "--layers", "1"], "train: --layers applies to the "
                                                       "transformer decoder, not to --decoder luong"),
    (["train", "--d-model", "32"], "train: --d-model applies to the transformer decoder"),
    (["train", "--activation", "gelu"], "train: --activation applies to the transformer decoder"),
    (["train", "--positions", "learned"], "train: --positions applies to the transformer decoder"),
    (["train", *TRANSFORMER, "--hidden", "8"], "train: --hidden applies to the bahdanau, luong "
                                               "and plain decoders, not to --decoder transformer"),
    (["train", *TRANSFORMER, "--reset-before"], "train: --reset-before applies to the bahdanau"),
    (["train", "--decoder", "plain", "--score", "dot"], "train: --score applies to the bahdanau "
                                                        "and luong decoders, not to --decoder plain"),
    (["train", "--decoder", "plain", "--attn", "8"], "train: --attn applies to the bahdanau"),
]


@pytest.fixture
def no_work(monkeypatch):
    """Anything past the checks fails the test: no training, drawing or loading starts."""
    def started(*args, **kwargs):
        raise AssertionError("work started before the options were checked")
    for target in ("models.app.train.Trainer.run", "models.app.cli.Trainer.create",
                   "models.app.graphs.gru_step", "models.app.translate.load_checkpoint",
                   "models.app.diagnose.load_checkpoint"):
        monkeypatch.setattr(target, started)


@pytest.mark.parametrize("argv, message", REFUSED, ids=[" ".join(a)[:60] for a, _ in REFUSED])
def test_a_value_past_its_limit_is_refused_in_one_line(argv, message, no_work, tmp_path, capsys):
    out = ["--out", str(tmp_path / "o")] if argv[0] == "train" else []
    assert main(argv + out) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1, err


def test_every_limit_names_an_option_that_exists():
    """The tables are not dead letters: each name is a destination of some command's parser."""
    parser = options.build_parser()
    dests = set()
    for command in parser._subparsers._group_actions[0].choices.values():
        dests |= {a.dest for a in command._actions}
    names = set(options.LIMITS) | set(options.APPLIES) | options.INF_OK
    for command, table in options.COMMAND_LIMITS.items():
        if command == "nanotrain":  # no parser: its settings are the file's SETTINGS
            from models.app import nanotrain
            assert set(table) <= set(nanotrain.SETTINGS), sorted(set(table) - set(nanotrain.SETTINGS))
        else:
            names |= set(table)
    assert names <= dests, sorted(names - dests)


@pytest.mark.parametrize("argv", [
    ["--decoder", "luong", "--cell", "lstm", "--input-feeding", "--combine", "gate", "--embed", "8"],
    [*TRANSFORMER, "--heads", "2", "--layers", "1", "--d-model", "16", "--ff", "32"],
    ["--window", "0", "--dec-hidden", "16", "--hidden", "8", "--attn", "8", "--reset-before"],
])
def test_options_that_apply_are_accepted(argv, tmp_path, capsys):
    assert main(["train", *BASE, *argv, "--time-limit", "0", "--out", str(tmp_path / "o")]) == 0, \
        capsys.readouterr().err


def test_a_non_finite_log_p_is_never_printed_as_a_result(tmp_path, capsys, monkeypatch):
    src, tgt = Vocab("abcde"), Vocab("wxyz")
    save_checkpoint(tmp_path, tiny_model(seed=1), src, tgt, {"task": "copy"})
    assert main(["translate", str(tmp_path), "abc", "--no-heatmap"]) == 0
    assert "log p = -" in capsys.readouterr().out          # a real translation prints one
    monkeypatch.setattr("models.app.translate.translate_texts",
                        lambda model, s, t, texts, *a: [(x, Translation([4], None, math.nan))
                                                        for x in texts])
    assert main(["translate", str(tmp_path), "abc", "--no-heatmap"]) == 2
    captured = capsys.readouterr()
    assert "nan" not in captured.out and "log p" not in captured.out
    assert "translate: decoding 'abc' gave log p = nan" in captured.err
    with pytest.raises(ValueError, match="gave log p = -inf"):
        show([("abc", Translation([4], None, -math.inf))], src, tgt)


@pytest.mark.parametrize("temperature", ["1e-300", "1e300", "0.0009"])
def test_translate_refuses_a_temperature_that_would_overflow(temperature, tmp_path, capsys):
    save_checkpoint(tmp_path, tiny_model(seed=1), Vocab("abcde"), Vocab("wxyz"), {"task": "copy"})
    assert main(["translate", str(tmp_path), "abc", "--temperature", temperature]) == 2
    err = capsys.readouterr().err.strip()
    assert f"translate: --temperature must be 0.001..1000, got {float(temperature)!r}" in err, err
    assert main(["translate", str(tmp_path), "abc", "--temperature", "0.001", "--no-heatmap"]) == 0
    assert "log p = -" in capsys.readouterr().out
