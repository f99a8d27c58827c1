"""The command line: train, translate (bad input included), compare-length, and the main demo."""
import json
import os
import re
import shutil

import pytest

from minigrad.runtime import blas
from models.app.cli import main
from models.app.options import build_parser

TINY = ["--embed", "8", "--hidden", "16", "--dec-hidden", "16", "--attn", "16"]


@pytest.fixture(autouse=True, scope="module")
def one_blas_thread():
    with blas.threads(1):
        yield


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    out = tmp_path_factory.mktemp("copy")
    code = main(["train", "--task", "copy", "--n-train", "2000", "--n-val", "200", "--epochs",
                 "12", "--batch-size", "32", "--dtype", "float64", "--out", str(out),
                 "--schedule", "constant"] + TINY)  # a run this short wants the full step
    assert code == 0
    return out


@pytest.mark.parametrize("command", [["demo"], ["train"], ["translate", "ckpt", "abc"],
                                     ["compare-length"]])
def test_threads_goes_before_or_after_the_subcommand(command):
    parse = build_parser().parse_args
    assert parse(command).threads == 1
    assert parse(["--threads", "3"] + command).threads == 3
    assert parse(command + ["--threads", "3"]).threads == 3


def test_help_lists_the_translate_options(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "translate CHECKPOINT TEXT... [--beam K] [--svg DIR] [--no-heatmap]" in \
        capsys.readouterr().out


@pytest.mark.slow
def test_train_writes_a_checkpoint_and_a_loss_curve(checkpoint, capsys):
    files = os.listdir(checkpoint)
    assert "checkpoint.json" in files and "training.svg" in files
    with open(checkpoint / "checkpoint.json") as f:
        state = json.load(f)["state"]
    assert state["done"] and state["history"][-1]["val_exact"] >= 0.9
    assert open(checkpoint / "training.svg").read().startswith("<svg")


@pytest.mark.slow
def test_translate_prints_the_output_and_a_heatmap(checkpoint, capsys, tmp_path):
    assert main(["translate", str(checkpoint), "abc12", "9f", "--svg", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "'abc12' -> 'abc12'" in out and "'9f' -> '9f'" in out
    assert "│" in out and "scale 0-1" in out  # the terminal heatmap
    assert sorted(os.listdir(tmp_path)) == ["alignment-1.svg", "alignment-2.svg"]
    assert main(["translate", str(checkpoint), "abc12", "--beam", "3", "--no-heatmap"]) == 0
    assert "'abc12' -> 'abc12'" in capsys.readouterr().out


@pytest.mark.slow
def test_translate_bad_input(checkpoint, capsys, tmp_path):
    assert main(["translate", str(checkpoint), "abc", "ab%c"]) == 0  # unknown: <unk>, warned
    lines = capsys.readouterr().out.splitlines()  # ... beside its text, not before them all
    at = next(k for k, line in enumerate(lines) if line.startswith("'ab%c' -> "))
    assert lines[at + 1] == "  warning: unknown character(s) '%' read as <unk>", lines
    assert sum("unknown character" in line for line in lines) == 1
    assert main(["translate", str(checkpoint), ""]) == 2
    assert "empty" in capsys.readouterr().err
    assert main(["translate", str(tmp_path / "missing"), "abc"]) == 2
    assert "not found" in capsys.readouterr().err
    assert main(["translate", str(checkpoint), "abc", "--beam", "100000"]) == 2
    assert "translate: --beam must be 0..1000, got 100000" in capsys.readouterr().err
    (tmp_path / "checkpoint.json").write_text("[]")
    assert main(["translate", str(tmp_path), "abc"]) == 2
    assert "error: checkpoint" in capsys.readouterr().err


@pytest.mark.slow
def test_resume_flag(tmp_path, capsys):
    args = ["train", "--task", "reverse", "--n-train", "300", "--n-val", "20", "--epochs", "2",
            "--target", "2", "--out", str(tmp_path)] + TINY
    assert main(args + ["--time-limit", "0"]) == 0  # stops at once, after checkpointing
    assert "resume with --resume" in capsys.readouterr().out
    assert main(["train", "--resume", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "resuming" in out and "epoch   2/2" in out


@pytest.mark.slow
def test_compare_length_prints_a_table_and_writes_a_plot(tmp_path, capsys):
    (tmp_path / "exact_vs_length.svg").write_text("an earlier plot")  # is kept
    assert main(["compare-length", "--max-len", "8", "--n-train", "300", "--n-val", "60",
                 "--epochs", "1", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "no attention" in out and "exact match vs source length" in out
    assert (tmp_path / "exact_vs_length.svg").read_text() == "an earlier plot"
    assert (tmp_path / "exact_vs_length-2.svg").read_text().startswith("<svg")


@pytest.mark.slow
def test_main_demo(tmp_path, capsys, checkpoint):
    """No arguments runs this: train on dates (here a small run), print held-out and wild exact
    match, then translate hand-written dates with heatmaps (terminal and SVG). Run again, it
    keeps the earlier run's folder as it was and writes into DIR-2. (The full demo's figures,
    >= 99% held-out and >= 95% wild, are measured by python -m benchmarks.readme_figures.)"""
    earlier, out_dir = tmp_path / "dates", tmp_path / "dates-2"
    shutil.copytree(checkpoint, earlier)  # an earlier run, with its checkpoint and pictures
    (earlier / "alignment-1.svg").write_text("an earlier heatmap")
    before = {f: (earlier / f).read_bytes() for f in os.listdir(earlier)}
    assert main(["demo", "--out", str(earlier), "--n-train", "2000", "--epochs", "2"]) == 0
    out = capsys.readouterr().out
    assert f"{earlier} already holds an earlier run (kept); this run writes into {out_dir}" in out
    assert {f: (earlier / f).read_bytes() for f in os.listdir(earlier)} == before
    with open(out_dir / "checkpoint.json") as f:
        state = json.load(f)["state"]
    assert len(state["history"]) == 2 and state["best"]["epoch"] in (1, 2)
    assert re.search(r"exact match: \d+\.\d% on 1000 held-out generated dates, \d+\.\d% on "
                     r"\d+ hand-written \"wild\" dates", out)
    assert out.count("scale 0-1") == 4 and "<eos>" in out
    assert len([f for f in os.listdir(out_dir) if f.startswith("alignment-")]) == 4
    assert f"python -m models translate {out_dir} " in out
    for extra, reading in (([], "read day first as 2020-04-03"),
                           (["--month-first", "--beam", "3"], "read month first as 2020-03-04")):
        assert main(["translate", str(out_dir), " 03/04/2020", "--no-heatmap"] + extra) == 0
        out = capsys.readouterr().out
        assert reading in out and "normalised to '03/04/2020'" in out


def test_translate_help_lists_the_date_forms_and_conventions(capsys):
    with pytest.raises(SystemExit):
        main(["translate", "--help"])
    out = capsys.readouterr().out
    assert "--month-first" in out and "20200304" in out and "50-99 -> 19yy" in out
    assert "DAY FIRST" in out and "1000-9999" in out


def test_month_first_needs_a_dates_checkpoint(checkpoint, capsys):
    assert main(["translate", str(checkpoint), "abc", "--month-first"]) == 2
    assert "--month-first is for a dates checkpoint" in capsys.readouterr().err
