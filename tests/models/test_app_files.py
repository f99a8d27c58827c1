"""The application's files (issue 23, items 2 and 4): every checkpoint file it reads is read
within bounds; a run writes only into an empty folder or its own run folder, and inside it
replaces or removes only its own files; the arrays of an interrupted save are cleaned up."""
import hashlib
import io
import json
import os
import zipfile

import numpy as np
import pytest

import minigrad as mg
from minigrad.files import TMP_PREFIX
from minigrad.runtime import blas
from models.app import checkpoint as ckpt
from models.app.checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from models.app.cli import main
from models.app.runs import run_lock
from models.vocab import Vocab
from model_helpers import tiny_model

SRC, TGT = Vocab("abcde"), Vocab("wxyz")
TINY = ["--task", "copy", "--n-train", "64", "--n-val", "8", "--epochs", "1", "--embed", "8",
        "--hidden", "8", "--dec-hidden", "8", "--attn", "8"]


@pytest.fixture(autouse=True, scope="module")
def one_blas_thread():
    with blas.threads(1):
        yield


@pytest.fixture
def saved(tmp_path):
    save_checkpoint(tmp_path / "run", tiny_model(seed=3), SRC, TGT, {"note": "test"})
    return tmp_path / "run"


def index(folder) -> dict:
    return json.loads((folder / "checkpoint.json").read_text())


def digests(folder) -> dict:
    """{name: SHA-256 or 'folder' or the link target}: equal dicts = nothing was touched."""
    out = {}
    for name in os.listdir(folder):
        path = folder / name
        out[name] = (f"-> {os.readlink(path)}" if path.is_symlink() else "folder" if path.is_dir()
                     else hashlib.sha256(path.read_bytes()).hexdigest())
    return out


# ---- item 2: checkpoint files are read within bounds ------------------------------------

def replace_with(kind):
    def make(folder, path):
        path.unlink()
        if kind == "fifo":
            os.mkfifo(path)
        elif kind == "folder":
            path.mkdir()
        else:
            os.symlink(kind, path)
    return make


@pytest.mark.parametrize("kind, message", [("/dev/zero", "is a device, not a regular file"),
                                           ("/dev/urandom", "is a device, not a regular file"),
                                           ("fifo", "is a pipe (FIFO), not a regular file"),
                                           ("folder", "is a folder, not a regular file")])
@pytest.mark.parametrize("which", ["checkpoint.json", "weights"])
def test_a_checkpoint_file_that_never_ends_is_refused(saved, kind, message, which, capsys):
    if kind.startswith("/dev") and not os.path.exists(kind):
        pytest.skip(f"no {kind} here")
    path = saved / (which if which == "checkpoint.json" else index(saved)["weights"])
    replace_with(kind)(saved, path)
    with pytest.raises(CheckpointError) as e:
        load_checkpoint(saved)
    assert message in str(e.value) and str(path) in str(e.value) and "\n" not in str(e.value)
    assert main(["translate", str(saved), "abc"]) == 2      # the CLI: one line, status 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1


def rewrite(folder, kind, raw: bytes) -> None:
    """Put ``raw`` in the checkpoint's ``kind`` file and update its digest."""
    idx = index(folder)
    (folder / idx[kind]).write_bytes(raw)
    idx[kind + "_sha256"] = hashlib.sha256(raw).hexdigest()
    (folder / "checkpoint.json").write_text(json.dumps(idx))


def zip_bytes(members: dict) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, raw in members.items():
            z.writestr(name, raw)
    return buf.getvalue()


def npy(array) -> bytes:
    buf = io.BytesIO()
    np.save(buf, array)
    return buf.getvalue()


def test_a_small_weights_file_inflating_past_the_model_is_refused_from_its_headers(saved):
    """12 members of zeros, each larger than the whole model (2.8 KB), deflated to a small
    file: refused from the zip headers, before any member is inflated."""
    assert 8 * sum(p.size for p in load_checkpoint(saved)[0].parameters()) < 8 << 10
    members = {f"m{i}.npy": npy(np.zeros(8 << 10)) for i in range(12)}   # 64 KiB each
    rewrite(saved, "weights", zip_bytes(members))
    assert (saved / index(saved)["weights"]).stat().st_size < 20_000
    with pytest.raises(CheckpointError, match="members inflate to .* bytes, above the limit"):
        load_checkpoint(saved)


def test_an_index_above_its_cap_is_refused_unread(saved, monkeypatch):
    monkeypatch.setattr(ckpt, "MAX_INDEX_BYTES", 100)
    with pytest.raises(CheckpointError, match=r"checkpoint.json is [\d,]+ bytes, above the limit "
                                              r"of 100 bytes"):
        load_checkpoint(saved)


def test_the_cap_on_a_weights_file_is_what_the_model_needs(saved, monkeypatch):
    """A real checkpoint loads; the same file refused by a cap one byte below its arrays."""
    model = load_checkpoint(saved)[0]
    need = 8 * sum(p.size for p in model.parameters())       # float64, as tiny_model saves
    real = ckpt.load_npz
    monkeypatch.setattr(ckpt, "load_npz", lambda path, max_bytes, check_headers:
                        real(path, max_bytes - 1, check_headers))
    assert need == 8 * sum(int(np.prod(v.shape)) for v in model.state_dict().values())
    with pytest.raises(CheckpointError, match=f"its arrays hold {need:,} bytes together"):
        load_checkpoint(saved)


# ---- item 4: a run folder is the run's --------------------------------------------------

USER_FILES = ["training.svg", "alignment-1.svg", ".minigrad-tmp-abc.npz", ".tmp-x",
              "weights-0000007.npz", ".lock", "best-weights.npz", "checkpoint.json", "notes.txt",
              "sub/", "link"]


def user_folder(tmp_path, name: str):
    out = tmp_path / "mine"
    out.mkdir()
    if name.endswith("/"):
        (out / name).mkdir()
        (out / name / "inside").write_text("mine")
    elif name == "link":
        (tmp_path / "elsewhere").write_text("mine")
        os.symlink(tmp_path / "elsewhere", out / ".lock")   # a .lock that points at a user's file
    else:
        (out / name).write_bytes(b"the user's own " + name.encode())
    return out


@pytest.mark.parametrize("name", USER_FILES)
@pytest.mark.parametrize("how", ["--out", "--resume"])
def test_a_folder_that_is_not_a_run_folder_is_refused_and_left_as_it_was(tmp_path, capsys, name,
                                                                          how):
    out = user_folder(tmp_path, name)
    before = digests(out), (tmp_path / "elsewhere").read_text() if name == "link" else None
    argv = ["train", *TINY, "--out", str(out)] if how == "--out" else ["train", "--resume", str(out)]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(out) in err, err
    assert "not a run folder" in err or "run's lock" in err, err
    assert (digests(out), (tmp_path / "elsewhere").read_text() if name == "link" else None) == before


def test_an_empty_folder_is_used(tmp_path):
    (tmp_path / "empty").mkdir()
    assert main(["train", *TINY, "--out", str(tmp_path / "empty"), "--time-limit", "0"]) == 0
    assert (tmp_path / "empty" / "checkpoint.json").exists()


def interrupted_save(folder, monkeypatch, at: int) -> None:
    """Save a checkpoint over ``folder``'s, stopped (as by a second Ctrl-C) when ``mg.save``
    is called the ``at``-th time: the array files saved before stay as strays."""
    calls, real = [], mg.save

    def save(arrays, path):
        calls.append(path)
        if len(calls) == at:
            raise KeyboardInterrupt
        real(arrays, path)
    monkeypatch.setattr(ckpt.mg, "save", save)
    with pytest.raises(KeyboardInterrupt):
        save_checkpoint(folder, tiny_model(seed=4), SRC, TGT, optimizer=mg.optim.Adam(
            tiny_model(seed=4).parameters()), step=9)
    monkeypatch.setattr(ckpt.mg, "save", real)


def test_the_arrays_of_an_interrupted_save_are_removed_by_the_next_save(saved, monkeypatch):
    (saved / "weights-0000099.npz").write_bytes(b"the user's, not in any journal")
    committed = index(saved)["weights"]
    interrupted_save(saved, monkeypatch, at=2)            # weights written, optimizer not
    assert "weights-0000009.npz" in os.listdir(saved)     # a stray: no index commits it
    assert index(saved)["weights"] == committed and load_checkpoint(saved)  # the old one, intact
    save_checkpoint(saved, tiny_model(seed=5), SRC, TGT, step=12)
    names = sorted(os.listdir(saved))
    assert names == ["checkpoint.json", "weights-0000012.npz", "weights-0000099.npz"], names
    assert (saved / "weights-0000099.npz").read_bytes() == b"the user's, not in any journal"


def test_taking_the_lock_for_resume_removes_strays_and_temporary_files(saved, monkeypatch):
    interrupted_save(saved, monkeypatch, at=2)
    (saved / (TMP_PREFIX + "killed.npz")).write_bytes(b"half")
    (saved / ".tmp-users-own").write_bytes(b"mine")       # not this project's prefix: kept
    with run_lock(saved):
        names = sorted(os.listdir(saved))
    assert names == [".lock", ".tmp-users-own", "checkpoint.json", index(saved)["weights"]], names
    load_checkpoint(saved)


def test_a_journal_naming_files_that_are_not_a_runs_arrays_removes_nothing(saved):
    idx = index(saved)
    (saved / "notes.txt").write_text("mine")
    (saved.parent / "outside.npz").write_text("mine")
    idx[ckpt.PENDING] = ["notes.txt", "../outside.npz", idx["weights"], 7, "weights-x/../../a.npz"]
    (saved / "checkpoint.json").write_text(json.dumps(idx))
    ckpt.remove_strays(saved)
    assert (saved / "notes.txt").exists() and (saved.parent / "outside.npz").exists()
    load_checkpoint(saved)


def test_graph_never_replaces_a_file_in_its_folder(tmp_path, capsys):
    (tmp_path / "gru_step.svg").write_text("the user's own")
    assert main(["graph", "--out", str(tmp_path), "--batch", "2", "--length", "4",
                 "--vocab", "5"]) == 0
    assert (tmp_path / "gru_step.svg").read_text() == "the user's own"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gru_step-2.svg", "gru_step.svg",
                                                          "seq2seq_loss.svg"]
    assert f"wrote {tmp_path / 'gru_step-2.svg'}" in capsys.readouterr().out
