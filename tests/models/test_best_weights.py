"""The best held-out epoch's weights of an unfinished run are a checkpoint file like the others:
saved with a SHA-256 digest in the index, and on ``--resume`` checked digest first, then names,
shapes and dtypes against the model, so a tampered, truncated or mis-shaped file (a run folder
may come from anyone) gives one line naming it; a normal resume still keeps them."""
import hashlib
import json
import shutil

import numpy as np
import pytest

import minigrad as mg
from models.app.checkpoint import CheckpointError
from models.app.train import Trainer, TrainConfig

SMALL = dict(embed=8, hidden=8, dec_hidden=8, attn=8)


def read_index(folder):
    return json.loads((folder / "checkpoint.json").read_text())


def write_index(folder, index):
    (folder / "checkpoint.json").write_text(json.dumps(index))


@pytest.fixture(scope="module")
def stopped(tmp_path_factory):
    """A run stopped inside epoch 2 (2 batches an epoch), so epoch 1's weights are its best,
    and those weights."""
    folder = tmp_path_factory.mktemp("run")
    config = TrainConfig(task="copy", n_train=64, n_val=10, min_len=3, max_len=5, batch_size=32,
                         epochs=3, target=2.0, seed=0)
    trainer = Trainer.create(config, SMALL)
    trainer.run(log=lambda line: None, folder=folder, max_steps=3)
    assert trainer.state.best["epoch"] == 1 and not trainer.state.done
    return folder, {k: v.copy() for k, v in trainer.best.weights.items()}


@pytest.fixture
def run(stopped, tmp_path):
    folder, best = stopped
    shutil.copytree(folder, tmp_path / "run")
    folder = tmp_path / "run"
    return folder, folder / read_index(folder)["best_weights"], best


def refused(folder, match):
    with pytest.raises(CheckpointError, match=match) as e:
        Trainer.resume(folder)
    assert "\n" not in str(e.value)
    return str(e.value)


def redigest(folder, path):
    index = read_index(folder)
    index["best_weights_sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
    write_index(folder, index)


def test_a_normal_resume_keeps_the_best_weights_and_a_finished_run_drops_them(run):
    folder, path, best = run
    assert path.name == "best-weights-0000003.npz"  # saved with every checkpoint, like the weights
    assert read_index(folder)["best_weights_sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    trainer = Trainer.resume(folder)
    assert (trainer.best.epoch, trainer.best.weights.keys()) == (1, best.keys())
    for k, v in best.items():
        np.testing.assert_array_equal(trainer.best.weights[k], v, err_msg=k)
    trainer.run(log=lambda line: None, folder=folder)
    assert trainer.state.done and not list(folder.glob("best-weights*"))
    assert "best_weights" not in read_index(folder)
    assert Trainer.resume(folder).state.done


def test_a_tampered_file_fails_its_digest(run):
    folder, path, _ = run
    raw = bytearray(path.read_bytes())
    raw[len(raw) // 2] ^= 1
    path.write_bytes(bytes(raw))
    assert path.name in refused(folder, "does not match the digest")


@pytest.mark.parametrize("fix_digest, match", [(False, "does not match the digest"),
                                               (True, "not an .npz archive")])
def test_a_truncated_file_is_refused(run, fix_digest, match):
    folder, path, _ = run
    path.write_bytes(path.read_bytes()[:200])
    if fix_digest:  # past the digest: the content itself is refused
        redigest(folder, path)
    assert path.name in refused(folder, match)


@pytest.mark.parametrize("change, match", [
    (lambda a: a.__setitem__("decoder.out.bias", np.zeros(99)), r"decoder.out.bias: checkpoint \(99,\)"),
    (lambda a: a.pop("decoder.out.bias"), "missing: decoder.out.bias"),
    (lambda a: a.__setitem__("extra", np.zeros(2)), "unexpected: extra"),
    (lambda a: a.__setitem__("decoder.out.bias", np.zeros(a["decoder.out.bias"].shape, int)),
     "non-float array decoder.out.bias"),
    (lambda a: a["decoder.out.bias"].__setitem__(0, np.inf), "non-finite"),
])
def test_arrays_that_do_not_fit_the_model_are_refused(run, change, match):
    folder, path, _ = run
    arrays = mg.load(path)
    change(arrays)
    mg.save(arrays, path)
    redigest(folder, path)
    assert path.name in refused(folder, match)


def test_an_old_run_folder_without_the_digest_is_refused(run):
    folder, path, _ = run
    index = read_index(folder)
    del index["best_weights"], index["best_weights_sha256"]
    write_index(folder, index)
    path.rename(folder / "best-weights.npz")  # as older versions saved it
    assert "best-weights.npz has no digest in checkpoint.json" in refused(folder, "cannot be resumed")
    (folder / "best-weights.npz").unlink()
    refused(folder, "records a best epoch but no best_weights file")


def test_a_missing_digest_or_a_foreign_name_is_refused(run):
    folder, path, _ = run
    index = read_index(folder)
    del index["best_weights_sha256"]
    write_index(folder, index)
    refused(folder, "no best_weights_sha256 digest")
    index["best_weights"] = "../" + path.name
    write_index(folder, index)
    refused(folder, "bad best_weights entry")


@pytest.mark.parametrize("best", [{"epoch": 5, "val_exact": 0.5}, {"epoch": 1, "val_exact": "hi"},
                                  {"epoch": 1}, [1, 0.5]])
def test_a_bad_best_entry_in_the_state_is_refused(run, best):
    folder, _, _ = run
    index = read_index(folder)
    index["state"]["best"] = best
    write_index(folder, index)
    refused(folder, "bad training state.*best must be")
