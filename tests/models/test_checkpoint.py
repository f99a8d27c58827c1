"""Checkpoints: the round trip gives identical outputs; bad files give clear errors; nothing is
ever unpickled."""
import hashlib
import json
import os

import numpy as np
import pytest

import minigrad as mg
from minigrad import optim
from models.app.checkpoint import (CheckpointError, load_checkpoint, load_optimizer_state,
                               save_checkpoint)
from models.kernels import use_kernels
from models.vocab import Vocab
from model_helpers import random_batch, tiny_model

SRC, TGT = Vocab("abcde"), Vocab("wxyz")  # 9 and 8 ids, as tiny_model expects


@pytest.fixture
def saved(tmp_path):
    # with the kernels, as the application trains and loads it (models/app/build.py): the
    # round trip is then bit for bit (the core model agrees to rounding)
    model = use_kernels(tiny_model(seed=7, decoder="luong", score="general"))
    save_checkpoint(tmp_path, model, SRC, TGT, {"note": "test"})
    return tmp_path, model


def index(folder):
    with open(os.path.join(folder, "checkpoint.json")) as f:
        return json.load(f)


def rewrite_weights(folder, arrays=None, raw: bytes | None = None):
    """Replace the weights file's content and update its digest, so that the loader gets past
    the digest check to the content checks."""
    idx = index(folder)
    path = os.path.join(folder, idx["weights"])
    if raw is not None:
        with open(path, "wb") as f:
            f.write(raw)
    else:
        np.savez(path, **arrays)  # np.savez, not mg.save: it can also write object arrays
    with open(path, "rb") as f:
        idx["weights_sha256"] = hashlib.sha256(f.read()).hexdigest()
    with open(os.path.join(folder, "checkpoint.json"), "w") as f:
        json.dump(idx, f)


def test_round_trip_gives_identical_outputs(saved):
    folder, model = saved
    loaded, src_vocab, tgt_vocab, idx = load_checkpoint(folder)
    assert (src_vocab, tgt_vocab) == (SRC, TGT) and idx["note"] == "test"
    assert loaded.config == model.config
    src, mask = random_batch(np.random.default_rng(0), [5, 2], 9)
    for a, b in zip(model.greedy(src, 6, mask), loaded.greedy(src, 6, mask)):
        assert a.tokens == b.tokens and a.score == b.score
        np.testing.assert_array_equal(a.weights, b.weights)
    for path in (folder / "checkpoint.json", folder / idx["weights"]):  # index or weights file
        assert load_checkpoint(path)[0].config == model.config


def test_saving_again_replaces_the_files_atomically(saved):
    folder, model = saved
    first = index(folder)["weights"]
    opt = optim.Adam(model.parameters())
    save_checkpoint(folder, model, SRC, TGT, optimizer=opt, step=5)
    idx = index(folder)
    assert idx["weights"] != first and not (folder / first).exists()
    assert sorted(os.listdir(folder)) == sorted(["checkpoint.json", idx["weights"], idx["optimizer"]])
    assert set(load_optimizer_state(folder, opt)) == set(opt.state_dict())
    save_checkpoint(folder, model, SRC, TGT, optimizer=opt, step=5)  # the same step twice
    assert load_checkpoint(folder)[0].config == model.config


def test_saving_over_a_foreign_index_removes_only_its_own_kind_of_file(saved):
    """The replaced index may be anyone's: its entries never name a file to remove outside
    the checkpoint's own array files."""
    folder, model = saved
    (folder / "notes.npz").write_bytes(b"mine")
    (folder.parent / "outside-weights.npz").write_bytes(b"mine too")
    idx = index(folder)
    idx["weights"], idx["optimizer"] = "notes.npz", "../outside-weights.npz"
    idx["best_weights"] = "checkpoint.json"
    (folder / "checkpoint.json").write_text(json.dumps(idx))
    save_checkpoint(folder, model, SRC, TGT, step=9)
    assert (folder / "notes.npz").read_bytes() == b"mine"
    assert (folder.parent / "outside-weights.npz").read_bytes() == b"mine too"
    assert load_checkpoint(folder)[0].config == model.config


@pytest.mark.parametrize("change, message", [
    (lambda a: a.pop("decoder.out.bias"), "missing: decoder.out.bias"),
    (lambda a: a.__setitem__("decoder.extra", np.zeros(3)), "unexpected: decoder.extra"),
    (lambda a: a.__setitem__("decoder.out.bias", np.zeros(99)), r"decoder.out.bias: checkpoint \(99,\)"),
    (lambda a: a.__setitem__("decoder.out.bias", np.zeros(8, dtype=np.int64)), "non-float"),
    (lambda a: a.__setitem__("decoder.out.bias", np.full(8, np.nan)),  # would decode garbage
     r"non-finite values \(NaN or inf\) in \['decoder.out.bias'\]"),
])
def test_bad_arrays_are_named(saved, change, message):
    folder, _ = saved
    arrays = mg.load(folder / index(folder)["weights"])
    change(arrays)
    rewrite_weights(folder, arrays)
    with pytest.raises(CheckpointError, match=message):
        load_checkpoint(folder)


def test_not_an_npz(saved):
    folder, _ = saved
    rewrite_weights(folder, raw=b"this is not a zip archive")
    with pytest.raises(CheckpointError, match="not an .npz"):
        load_checkpoint(folder)


UNPICKLED = []


class Trap:
    """Unpickling this appends to UNPICKLED: the test proves it never happens."""

    def __reduce__(self):
        return UNPICKLED.append, ("unpickled!",)


def test_object_arrays_are_never_unpickled(saved):
    folder, _ = saved
    arrays = mg.load(folder / index(folder)["weights"])
    arrays["decoder.out.bias"] = np.array([Trap()], dtype=object)
    rewrite_weights(folder, arrays)
    with pytest.raises(CheckpointError, match="pickle"):
        load_checkpoint(folder)
    assert UNPICKLED == []


def test_changed_weights_file_fails_its_digest(saved):
    folder, _ = saved
    path = folder / index(folder)["weights"]
    arrays = mg.load(path)
    arrays["decoder.out.bias"] = arrays["decoder.out.bias"] + 1
    mg.save(arrays, path)
    with pytest.raises(CheckpointError, match="digest"):
        load_checkpoint(folder)


def test_bad_index_files(tmp_path, saved):
    folder, _ = saved
    with pytest.raises(CheckpointError, match="not found"):
        load_checkpoint(tmp_path / "nowhere")
    (folder / "checkpoint.json").write_text("{not json")
    with pytest.raises(CheckpointError, match="not valid JSON"):
        load_checkpoint(folder)
    (folder / "checkpoint.json").write_text(json.dumps({"format": "something else"}))
    with pytest.raises(CheckpointError, match="format"):
        load_checkpoint(folder)


def test_paths_that_are_not_checkpoints(saved):
    """A pickle, a lone .npz, an empty folder, a folder named checkpoint.json: each error says
    what was found and what a checkpoint is."""
    folder, _ = saved
    tmp_path = folder / "elsewhere"
    tmp_path.mkdir()
    (tmp_path / "model.pkl").write_bytes(b"\x80\x04\x95 a pickle")
    (tmp_path / "lone.npz").write_bytes((folder / index(folder)["weights"]).read_bytes())
    (tmp_path / "empty").mkdir()
    (tmp_path / "odd" / "checkpoint.json").mkdir(parents=True)
    for path, message in [("model.pkl", "model.pkl is not valid JSON"),
                          ("lone.npz", "lone.npz has no checkpoint.json next to it"),
                          ("empty", "empty holds no checkpoint.json"),
                          ("odd", "checkpoint.json is a folder, not a regular file")]:
        with pytest.raises(CheckpointError, match=message) as e:
            load_checkpoint(tmp_path / path)
        assert "expected a checkpoint folder" in str(e.value)


def test_saving_over_an_unreadable_index_replaces_it(saved):
    folder, model = saved
    (folder / "checkpoint.json").write_text("{broken")
    save_checkpoint(folder, model, SRC, TGT, step=3)
    assert load_checkpoint(folder)[0].config == model.config


def test_a_checkpoint_saved_before_local_window_was_named_so_loads(saved):
    """Its index calls local attention's half-width D ``window``, as ModelConfig did."""
    folder, model = saved
    idx = index(folder)
    idx["model"]["window"] = idx["model"].pop("local_window")
    (folder / "checkpoint.json").write_text(json.dumps(idx))
    assert load_checkpoint(folder)[0].config == model.config


def test_bad_model_entries(saved):
    folder, _ = saved
    idx = index(folder)
    idx["model"]["decoder"] = "rnn-transformer"
    (folder / "checkpoint.json").write_text(json.dumps(idx))
    with pytest.raises(CheckpointError, match="bad model"):
        load_checkpoint(folder)
    idx = index(folder)
    idx["model"]["decoder"], idx["weights"] = "luong", "../elsewhere.npz"
    (folder / "checkpoint.json").write_text(json.dumps(idx))
    with pytest.raises(CheckpointError, match="bad weights entry"):
        load_checkpoint(folder)


def test_model_only_checkpoint_cannot_be_resumed(saved):
    folder, _ = saved
    with pytest.raises(CheckpointError, match="no optimizer state"):
        load_optimizer_state(folder, optim.Adam(tiny_model().parameters()))


def test_a_model_only_checkpoint_or_a_bad_state_cannot_be_resumed(saved):
    from models.app.train import Trainer
    folder, _ = saved
    with pytest.raises(CheckpointError, match="no training state"):
        Trainer.resume(folder)
    idx = index(folder)
    idx["train"], idx["state"] = {"task": "copy"}, {"epoch": 1, "surprise": True}
    (folder / "checkpoint.json").write_text(json.dumps(idx))
    with pytest.raises(CheckpointError, match="bad training state"):
        Trainer.resume(folder)
