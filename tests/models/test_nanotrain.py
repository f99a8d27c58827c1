"""``models/app/nanotrain.py``, the one-file training loop: it runs as a program at a small
size and prints what it promises, it refuses a bad setting, and it stays within 100 lines."""
import math
import os
import re
import subprocess
import sys

import pytest

from models.app import nanotrain

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EPOCHS = 3
# 256 dates in batches of 32 with narrow layers: 24 steps, about a second. Each epoch's mean loss
# falls by about 0.13 here (seeds 0-5, float32 and float64), far above rounding differences.
SMALL = [f"--epochs={EPOCHS}", "--train_size=256", "--val_size=20", "--batch_size=32",
         "--embed=8", "--hidden=16", "--dec_hidden=16", "--attn=16"]
LINE = re.compile(r"epoch (\d+)/(\d+)  loss (\S+)  val exact (\S+)%")


@pytest.fixture(scope="module")
def run():
    """The script as a user runs it: ``python -m models.app.nanotrain --name=value ...``."""
    return subprocess.run([sys.executable, "-m", "models.app.nanotrain", *SMALL], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


def test_it_prints_one_line_per_epoch_and_the_loss_falls(run):
    assert run.returncode == 0, run.stderr
    reports = [LINE.match(line) for line in run.stdout.splitlines() if line.startswith("epoch")]
    assert all(reports), run.stdout
    assert [(int(m[1]), int(m[2])) for m in reports] == [(e, EPOCHS) for e in range(1, EPOCHS + 1)]
    losses = [float(m[3]) for m in reports]
    assert all(math.isfinite(x) and x > 0 for x in losses), losses
    assert losses[-1] < losses[0], losses
    assert all(0 <= float(m[4]) <= 100 for m in reports), run.stdout


def test_settings_are_overridden_by_name_and_keep_their_type():
    config = nanotrain.configure(["--lr=1", "--dtype=float64", "--epochs=7"])
    assert config["lr"] == 1.0 and type(config["lr"]) is float  # an int may stand for a float
    assert config["dtype"] == "float64" and config["epochs"] == 7
    assert config["hidden"] == nanotrain.hidden  # the rest keep their defaults
    assert nanotrain.configure([]) == nanotrain.SETTINGS


@pytest.mark.parametrize("arg, words", [("--epochs=2.5", "--epochs must be of type int"),
                                        ("--epoch=2", "is not --name=value"),
                                        ("epochs=2", "is not --name=value"),
                                        ("--epochs", "is not --name=value")])
def test_a_bad_setting_stops_with_a_one_line_reason(arg, words):
    with pytest.raises(SystemExit) as stop:
        nanotrain.configure([arg])
    assert words in str(stop.value) and "\n" not in str(stop.value)


def test_the_file_is_at_most_100_lines():
    with open(nanotrain.__file__, encoding="utf-8") as f:
        lines = f.read().splitlines()
    assert len(lines) <= 100, f"nanotrain.py has {len(lines)} lines; the budget is 100"
