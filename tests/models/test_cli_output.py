"""What the command lines print, wherever it goes: a pipe that closes early, an encoding
without "≤" or "░", `train --help` with its defaults, a bare `train`'s first line, and an
honest last line when nothing was drawn."""
import io
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from minigrad.draw.console import tolerant_output
from minigrad.runtime import blas
from models.app import cli
from models.app.cli import estimate_seconds, main, plan_line
from models.app.train import Trainer, TrainConfig

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TINY = ["--task", "copy", "--epochs", "1", "--n-train", "200", "--n-val", "20"]


def python(args, tmp_path, reader_gone=False, **env):
    """Run ``python -m args`` in ``tmp_path``; with ``reader_gone`` its stdout is a pipe
    closed before it writes. Returns (exit status, stdout, stderr)."""
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""), **env)
    run = subprocess.Popen([sys.executable, "-m"] + args, cwd=tmp_path, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if reader_gone:
        run.stdout.close()
    out, err = run.communicate(timeout=300)
    return run.returncode, (out or b"").decode("utf-8", "replace"), err.decode("utf-8", "replace")


@pytest.mark.parametrize("args", [["minigrad.gradcheck"], ["minigrad.viz"],
                                  ["minigrad.higher", "--no-svg"], ["attention", "--list"],
                                  ["models", "train", "--help"], ["models", "--help"]])
def test_a_reader_that_stops_early_ends_the_program_quietly(args, tmp_path):
    code, _, err = python(args, tmp_path, reader_gone=True)
    assert "Traceback" not in err and "BrokenPipeError" not in err and "error" not in err, err
    assert code == 0


def test_what_an_encoding_cannot_write_comes_out_as_ascii():
    raw = io.BytesIO()
    out = io.TextIOWrapper(raw, encoding="ascii")
    tolerant_output(out)
    out.write("ETA ≤0:03 │░▒▓█│ α·x → ✓ ‽\n")
    out.flush()
    assert raw.getvalue() == b"ETA <=0:03 |.:x#| a*x -> ok ?\n"
    utf8 = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    tolerant_output(utf8)
    utf8.write("≤░")  # nothing to replace: written as it is
    utf8.flush()
    assert utf8.buffer.getvalue() == "≤░".encode()


@pytest.mark.slow
@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
def test_train_translate_and_inspect_run_under_any_encoding(encoding, tmp_path):
    out = tmp_path / "run"
    code, text, err = python(["models", "train"] + TINY + ["--out", str(out)], tmp_path,
                             PYTHONIOENCODING=encoding)
    assert code == 0 and "Traceback" not in err, err
    assert "ETA <=" in text and (out / "checkpoint.json").exists()
    code, text, err = python(["models", "translate", str(out), "abc"], tmp_path,
                             PYTHONIOENCODING=encoding)
    assert code == 0 and "Traceback" not in err, err
    assert "+---" in text and "|" in text  # the heatmap's box, in ASCII
    code, text, err = python(["models", "inspect", str(out), "--no-svg", "--n", "20"], tmp_path,
                             PYTHONIOENCODING=encoding)
    assert code == 0 and "Traceback" not in err and "verdict" in text, err


def test_train_help_shows_the_defaults(capsys):
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for option, default in [("--n-train N_TRAIN training pairs", "20000"),
                            ("--epochs EPOCHS at most this many epochs", "20"),
                            ("--lr LR Adam's step size (its peak, cosine)", "0.003"),
                            ("--seed SEED seeds the data, the weights and training", "0"),
                            ("--decoder {bahdanau,luong,plain,transformer} the decoder", "bahdanau")]:
        assert f"{option} (default: {default})" in text, option
    assert "(default: None)" not in text and "(default: False)" not in text
    assert "(default 0.99) (default" not in text  # said once


def test_a_time_limit_of_0_says_no_curve_was_drawn(tmp_path, capsys):
    with blas.threads(1):
        assert main(["train"] + TINY + ["--out", str(tmp_path / "r"), "--time-limit", "0"]) == 0
    last = capsys.readouterr().out.splitlines()[-1]
    assert last.startswith(f"checkpoint: {tmp_path / 'r'}  (no loss curve")
    assert "training.svg" not in last and not (tmp_path / "r" / "training.svg").exists()


def test_a_bare_train_says_first_what_it_does_and_how_long(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(cli, "_train", lambda trainer, out, time_limit=None: None)
    monkeypatch.setattr(cli, "estimate_seconds", lambda trainer: 150.0)
    with blas.threads(1):
        assert main(["train", "--out", str(tmp_path / "r")]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first == ("training bahdanau on dates: 20 epochs of 20000 pairs, about 2 minutes on "
                     "this machine (measured on a few batches, or less: it stops at 99% held-out "
                     "exact match); Ctrl-C stops and keeps the checkpoint")
    with blas.threads(1):  # with options, no estimate (it would be measured for nothing)
        assert main(["train"] + TINY + ["--out", str(tmp_path / "s"), "--time-limit", "0"]) == 0
    assert not capsys.readouterr().out.startswith("training ")


def test_the_estimate_is_measured_and_leaves_the_run_as_it_was():
    cfg = TrainConfig(task="copy", n_train=640, n_val=50, epochs=3, batch_size=32)
    trainer = Trainer.create(cfg, dict(embed=8, hidden=8, dec_hidden=8, attn=8))
    before = ({k: v.copy() for k, v in trainer.model.state_dict().items()},
              trainer.rng.bit_generator.state)
    with blas.threads(1):
        seconds = estimate_seconds(trainer)
    assert 0 < seconds < 120
    weights, rng = before
    assert all(np.array_equal(v, trainer.model.state_dict()[k]) for k, v in weights.items())
    assert trainer.rng.bit_generator.state == rng and trainer.model.training
    assert re.search(r"about 1 minute on this machine", plan_line(trainer, 20.0))
