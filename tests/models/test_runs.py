"""Nothing a user saved is lost: fresh run folders, refusing to overwrite a checkpoint unless
told (--resume / --overwrite), new names for pictures, Ctrl-C and divergence without a
traceback, and settings that would train nothing or never stop are refused up front."""
import hashlib
import os
import warnings

import numpy as np
import pytest

from minigrad.runtime import blas
from models.app.cli import main
from models.app.runs import free_name, fresh_folder, holds_checkpoint, writable_folder
from models.app.train import Trainer, TrainConfig

TINY = ["--task", "copy", "--n-train", "100", "--n-val", "10", "--epochs", "1", "--embed", "8",
        "--hidden", "8", "--dec-hidden", "8", "--attn", "8"]


@pytest.fixture(autouse=True, scope="module")
def one_blas_thread():
    with blas.threads(1):
        yield


def digests(folder) -> dict:
    """{file name: SHA-256} of every file in ``folder``: equal dicts = nothing was touched."""
    return {f: hashlib.sha256((folder / f).read_bytes()).hexdigest() for f in os.listdir(folder)}


# ---------------------------------------------------------------- the helpers

def test_fresh_folder_claims_a_folder_it_creates(tmp_path):
    base = tmp_path / "runs" / "dates"
    assert fresh_folder(base) == str(base) and base.is_dir()   # created
    assert fresh_folder(base) == str(base) + "-2"               # empty, but not ours: never reused
    (tmp_path / "runs" / "dates-3").write_text("a file, not a folder")
    assert fresh_folder(str(base) + "/") == str(tmp_path / "runs" / "dates-4")


def test_free_name_and_writable_folder(tmp_path):
    assert free_name(tmp_path, "plot", "svg") == str(tmp_path / "plot.svg")
    (tmp_path / "plot.svg").write_text("x")
    (tmp_path / "plot-2.svg").write_text("x")
    assert free_name(tmp_path, "plot", "svg") == str(tmp_path / "plot-3.svg")
    with pytest.raises(ValueError, match="is a file, not a folder"):
        writable_folder(tmp_path / "plot.svg")
    assert writable_folder(tmp_path / "new" / "deep") == str(tmp_path / "new" / "deep")


# ---------------------------------------------------------------- train --out / --resume

def test_train_refuses_a_folder_holding_a_checkpoint(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["train", *TINY, "--out", str(out)]) == 0
    before = digests(out)
    assert main(["train", *TINY, "--seed", "1", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "already holds a checkpoint" in err and f"--resume {out}" in err and "--overwrite" in err
    assert digests(out) == before                                # nothing was touched
    assert main(["train", *TINY, "--seed", "1", "--out", str(out), "--overwrite"]) == 0
    after = digests(out)
    assert after["checkpoint.json"] != before["checkpoint.json"]
    assert sorted(after) == sorted(os.listdir(out)) and len(after) == 4  # old arrays removed


@pytest.mark.parametrize("text", ["{not json", '{"format": "another-tool/2"}'])
def test_a_checkpoint_json_this_program_did_not_write_is_not_replaced(tmp_path, capsys, text):
    """Even with --overwrite: a foreign or unreadable checkpoint.json makes no run folder."""
    out = tmp_path / "run"
    out.mkdir()
    (out / "checkpoint.json").write_text(text)
    (out / "weights-0000001.npz").write_text("theirs")
    before = digests(out)
    assert main(["train", *TINY, "--out", str(out), "--overwrite"]) == 2
    assert "holds no checkpoint index that this program wrote, so it is not a run folder" in \
        capsys.readouterr().err
    assert digests(out) == before


def test_train_without_out_picks_a_fresh_folder(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["train", *TINY]) == 0
    first = digests(tmp_path / "runs" / "copy")
    assert main(["train", *TINY]) == 0
    out = capsys.readouterr().out
    assert "runs/copy already holds an earlier run (kept); this run writes into runs/copy-2" in out
    assert digests(tmp_path / "runs" / "copy") == first and holds_checkpoint("runs/copy-2")
    assert main(["train", *TINY, "--overwrite"]) == 2              # replace what? name it
    assert "--out DIR: name it" in capsys.readouterr().err


@pytest.mark.parametrize("extra, message", [
    (["--epochs", "5"], "--epochs would be ignored"),
    (["--lr", "0.1", "--decoder", "luong"], "--decoder, --lr would be ignored"),
    (["--overwrite"], "drop --overwrite"),
    (["--out", "elsewhere"], "drop --out elsewhere"),
])
def test_resume_refuses_options_it_would_ignore(tmp_path, capsys, extra, message):
    out = tmp_path / "run"
    assert main(["train", *TINY, "--epochs", "2", "--out", str(out), "--time-limit", "0"]) == 0
    before = digests(out)
    assert main(["train", "--resume", str(out), *extra]) == 2
    assert message in capsys.readouterr().err
    assert digests(out) == before


def test_resuming_a_finished_run_says_so_and_changes_nothing(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["train", *TINY, "--out", str(out)]) == 0
    before = digests(out)
    assert main(["train", "--resume", str(out), "--time-limit", "60"]) == 0
    assert "holds a finished run (after epoch 1" in capsys.readouterr().out
    assert digests(out) == before


def test_an_unusable_out_folder_is_refused_before_training(tmp_path, capsys):
    (tmp_path / "afile").write_text("not a folder")
    assert main(["train", *TINY, "--out", str(tmp_path / "afile")]) == 2
    captured = capsys.readouterr()
    assert "is a file, not a folder" in captured.err and "epoch" not in captured.out


# ---------------------------------------------------------------- pictures are not replaced

def test_translate_svgs_continue_the_numbering(tmp_path, capsys):
    out, svg = tmp_path / "run", tmp_path / "svg"
    assert main(["train", *TINY, "--out", str(out)]) == 0
    assert main(["translate", str(out), "ab", "12", "--svg", str(svg), "--no-heatmap"]) == 0
    first = digests(svg)
    assert main(["translate", str(out), "9", "--svg", str(svg), "--no-heatmap"]) == 0
    assert "alignment-3.svg" in capsys.readouterr().out
    now = digests(svg)
    assert sorted(now) == ["alignment-1.svg", "alignment-2.svg", "alignment-3.svg"]
    assert {k: now[k] for k in first} == first


# ---------------------------------------------------------------- Ctrl-C, divergence, settings

def test_a_second_ctrl_c_aborts_without_a_traceback(tmp_path, capsys, monkeypatch):
    def interrupted(self, idx):
        raise KeyboardInterrupt  # what the handler raises on the second Ctrl-C
    monkeypatch.setattr(Trainer, "train_step", interrupted)
    assert main(["train", *TINY, "--out", str(tmp_path / "run")]) == 130
    err = capsys.readouterr().err
    assert "aborted before the first checkpoint: nothing was saved" in err
    assert "Traceback" not in err


def test_divergence_stops_with_a_clear_error_and_saves_nothing(tmp_path):
    trainer = Trainer.create(TrainConfig(task="copy", n_train=50, n_val=5, epochs=1),
                             dict(embed=4, hidden=4, dec_hidden=4, attn=4))
    trainer.model.decoder.out.bias.data[0] = np.nan  # the first step's gradients are NaN
    with pytest.raises(FloatingPointError, match=r"diverged at epoch 1, step 1 .*smaller --lr"):
        trainer.run(log=lambda line: None, folder=tmp_path)
    assert not holds_checkpoint(tmp_path)


def test_divergence_leaks_no_numpy_warning(tmp_path):
    """Weights blown up to inf make NaN in the forward pass (0 · inf in the GRU's matmul); the
    divergence error reports it, so NumPy's "invalid value encountered" must not come first."""
    trainer = Trainer.create(TrainConfig(task="copy", n_train=50, n_val=5, epochs=1),
                             dict(embed=4, hidden=4, dec_hidden=4, attn=4))
    trainer.model.encoder.forward_cell.weight_hh.data[:] = np.inf  # h_0 = 0: 0 · inf = NaN
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        with pytest.raises(FloatingPointError, match="diverged at epoch 1, step 1"):
            trainer.run(log=lambda line: None, folder=tmp_path)


@pytest.mark.parametrize("field, value", [
    ("n_train", 0), ("n_val", 0), ("batch_size", 0), ("epochs", 0), ("seed", -1),
    ("lr", float("nan")), ("lr", 0.0), ("clip", 0.0), ("teacher_forcing", 1.5),
    ("teacher_forcing", float("nan")), ("target", float("nan")), ("min_epochs", -1),
])
def test_train_config_refuses_settings_that_cannot_work(field, value):
    with pytest.raises(ValueError, match=f"TrainConfig: {field} "):
        TrainConfig(**{field: value})


def test_cli_errors_for_bad_training_settings(capsys):
    assert main(["train", *TINY, "--n-train", "0"]) == 2  # was a KeyError traceback
    assert "train: --n-train must be at least 1, got 0" in capsys.readouterr().err
    assert main(["train", *TINY, "--time-limit", "-1"]) == 2
    assert "train: --time-limit must be at least 0, got -1.0" in capsys.readouterr().err
