"""Bad input, answered in one line: one table of (case, what to do, expected message fragment).

Each case does one thing a hostile or careless user does -- tampers with a checkpoint, passes
a nonsense optimizer argument, feeds attention an empty source, asks the CLI for unbounded
work -- and must raise (or, for the CLI, print) exactly one line that contains the fragment:
no traceback, no NaN, no ``AttributeError`` from deep inside.
"""
from __future__ import annotations

import contextlib
import hashlib
import io
import json
import math
import shutil
import zipfile

import numpy as np
import pytest

import minigrad as mg
from minigrad import functional as F
from minigrad import optim
from attention import Attention, DotScore, MultiHeadAttention, read, scaled_dot_product_attention
from models.app import bounded
from models.app.checkpoint import load_checkpoint
from models.app.train import TrainConfig, Trainer

TINY = dict(embed=4, hidden=4, dec_hidden=4, attn=4)
TINY_RUN = TrainConfig(task="copy", n_train=64, n_val=8, batch_size=16, epochs=2, min_len=3,
                       max_len=5)


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory):
    """A run stopped after 2 of 4 batches of its first epoch (so it has running sums)."""
    folder = tmp_path_factory.mktemp("run") / "run"
    Trainer.create(TINY_RUN, TINY).run(log=lambda s: None, folder=folder, max_steps=2)
    return folder


# ---- helpers that tamper with a checkpoint ------------------------------------------------

def read_index(folder) -> dict:
    return json.loads((folder / "checkpoint.json").read_text())


def write_index(folder, index) -> None:
    (folder / "checkpoint.json").write_text(json.dumps(index))


def edit(section, **changes):
    """A case that sets fields of one section of checkpoint.json and resumes."""
    def case(folder):
        index = read_index(folder)
        index[section].update(changes)
        write_index(folder, index)
        Trainer.resume(folder)
    return case


def set_entry(key, value):
    def case(folder):
        index = read_index(folder)
        index[key] = value
        write_index(folder, index)
        Trainer.resume(folder)
    return case


def npy_bytes(array=None, header: dict | None = None, data: bytes = b"") -> bytes:
    """A .npy member: a real array, or a forged header followed by ``data``."""
    f = io.BytesIO()
    if array is not None:
        np.save(f, array)
        return f.getvalue()
    np.lib.format.write_array_header_1_0(f, header)
    return f.getvalue() + data


def rewrite_npz(folder, kind: str, change) -> None:
    """Rewrite ``kind``'s npz through ``change(members: {filename: bytes})`` and fix its
    digest, so that the loader gets past the digest to the content checks."""
    index = read_index(folder)
    path = folder / index[kind]
    with zipfile.ZipFile(path) as z:
        members = {n: z.read(n) for n in z.namelist()}
    change(members)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, raw in members.items():
            z.writestr(name, raw)
    index[kind + "_sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
    write_index(folder, index)


def npz_case(kind, change, loader="resume"):
    def case(folder):
        rewrite_npz(folder, kind, change)
        Trainer.resume(folder) if loader == "resume" else load_checkpoint(folder)
    return case


def drop_digest(folder):
    index = read_index(folder)
    del index["weights_sha256"]
    write_index(folder, index)
    load_checkpoint(folder)


def deep_json(folder):
    (folder / "checkpoint.json").write_text("[" * 200_000 + "]" * 200_000)
    load_checkpoint(folder)


def not_a_zip(folder):
    index = read_index(folder)
    (folder / index["weights"]).write_bytes(b"\x80\x04 not a zip, maybe a pickle")
    index["weights_sha256"] = hashlib.sha256(b"\x80\x04 not a zip, maybe a pickle").hexdigest()
    write_index(folder, index)
    load_checkpoint(folder)


def load_npz(tmp, members: dict, max_bytes: int = 1 << 20):
    """The application's reader of untrusted .npz files (``models/app/bounded.py``)."""
    path = tmp / "x.npz"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, raw in members.items():
            z.writestr(name, raw)
    bounded.load_npz(path, max_bytes)


BIG_HEADER = {"descr": "<f8", "fortran_order": False, "shape": (10 ** 12,)}
INFLATES = {"descr": "<f8", "fortran_order": False, "shape": (8 << 20,)}  # 64 MiB of zeros
first_weight = lambda m: next(n for n in m if n.endswith(".npy"))
t_member = lambda value: lambda m: m.__setitem__("t.npy", npy_bytes(np.array(value)))
p = lambda *shape: mg.tensor(np.ones(shape), requires_grad=True)


def cli(*argv):
    """``python -m models ARGV`` in this process: its stderr as the exception, if it failed."""
    from models.app.cli import main
    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        code = main([str(a) for a in argv])
    if code != 0:
        raise ValueError(err.getvalue().strip())


def exercise(name, source):
    """A learner's file checked by ``check_file``: its one-line problem as the exception."""
    from minigrad.exercises import check_file, find, report

    def case(tmp):
        e = find(name)
        (tmp / e.file).write_text(source)
        rep = check_file(e, tmp)
        if rep.status != "done":
            raise ValueError(report.first_problem(rep))
    return case


def exercises_cli(*argv):
    from minigrad.exercises.__main__ import main
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main([str(a) for a in argv])
    if code != 0:
        raise ValueError(err.getvalue().strip())


def held(*argv):
    """``python -m models ARGV`` while this process holds the run folder's lock."""
    from models.app.runs import run_lock

    def case(folder):
        with run_lock(folder):
            cli(*[folder if a == "FOLDER" else a for a in argv])
    return case


def translate(*extra):
    return lambda folder: cli("translate", folder, "123", "--no-heatmap", *extra)


def local_m(position):
    from attention import DotScore, LocalAttention
    return LocalAttention(DotScore(), window=1)(p(2, 4), p(2, 5, 4), position=position)


def with_grad(x, g):
    x.grad = np.asarray(g, dtype=float)
    return [x]


CASES = [
    # ---- 1. exercises: a learner's file fails in one line, whatever it does ----------------
    ("exercise: os._exit(0) at import", exercise("mul", "import os\nos._exit(0)\n"),
     "ended the process (exit status 0"),
    ("exercise: KeyboardInterrupt at import", exercise("mul", "raise KeyboardInterrupt\n"),
     "KeyboardInterrupt"),
    ("exercise: complex gradient", exercise("tanh", "def tanh_vjp(g, x):\n    return g + 1j\n"),
     "complex128"),
    ("exercise: patched checker", exercise("tanh", "import minigrad.exercises.diagnose as d\n"
                                           "d.TOL = 1e300\ndef tanh_vjp(g, x):\n    return g\n"),
     "input 1, dx"),
    ("exercises start into a file", lambda tmp: (tmp / "f").write_text("x") and exercises_cli(
        "start", tmp / "f"), "is a file, not a folder"),
    ("exercises start into a non-empty folder", lambda tmp: (tmp / "f").write_text("x") and
     exercises_cli("start", tmp), "already holds other files (f, run)"),
    # ---- 2. runs: never lost, never overwritten -------------------------------------------
    ("train into a held folder", held("train", "--task", "copy", "--n-train", 100, "--n-val", 10, "--out", "FOLDER",
                                      "--overwrite"),
     "is in use by another run (pid"),
    ("resume a held folder", held("train", "--resume", "FOLDER"), "is in use by another run"),
    ("train --out with the user's files", lambda tmp: (tmp / "run" / "notes.txt").write_text("x")
     and cli("train", "--task", "copy", "--n-train", 100, "--n-val", 10, "--out", tmp / "run",
             "--overwrite"),
     "holds files a run does not write (notes.txt)"),
    # ---- 3. checkpoints ------------------------------------------------------------------
    ("digest removed", drop_digest, "no weights_sha256 digest"),
    ("non-array npz member", npz_case("weights", lambda m: m.__setitem__("note.txt", b"hi"),
                                      "load"), "'note.txt' is not an array"),
    ("header claims 1e12 elements", npz_case("weights", lambda m: m.__setitem__(
        first_weight(m), npy_bytes(header=BIG_HEADER)), "load"), "above the limit"),
    ("hidden 200000", edit("model", hidden=200_000), "hidden must be a positive int (at most 1024)"),
    ("hidden true", edit("model", hidden=True), "ModelConfig: hidden must be a positive int, got True"),
    ("model is a list", set_entry("model", [1, 2]), "expected a dict of fields, got list"),
    ("vocab is a list", set_entry("src_vocab", ["a"]), "Vocab.from_dict: expected"),
    ("deeply nested JSON", deep_json, "nested too deeply"),
    ("reset_after []", edit("model", reset_after=[]), "reset_after must be true or false"),
    ("input_feeding 'no'", edit("model", input_feeding="no"), "input_feeding must be true or false"),
    ("state batch 1e9", edit("state", batch=10 ** 9), "batch must be an int in 0..4"),
    ("state epoch -5", edit("state", epoch=-5), "epoch must be an int in 0..2"),
    ("state sums missing", edit("state", sums={}), "needs epoch_rng and sums"),
    ("state rng garbage", edit("state", rng={"bit_generator": "nope"}), "bad training state"),
    ("train config a list", set_entry("train", []), "expected a dict of settings"),
    ("train lr 'fast'", edit("train", lr="fast"), "lr must be a finite number > 0"),
    ("optimizer step -5", npz_case("optimizer", t_member(-5)), "step count t must be an int >= 0"),
    ("optimizer step float", npz_case("optimizer", t_member(2.5)),
     "array t has dtype float64, expected an integer"),
    ("not an npz (no allow_pickle hint)", not_a_zip, "not a zip file"),
    ("load_npz: non-array member", lambda tmp: load_npz(tmp, {"a.npy": npy_bytes(np.ones(2)),
                                                                 "b": b"x"}), "'b' is not an array"),
    ("load_npz: size limit", lambda tmp: load_npz(tmp, {"a.npy": npy_bytes(np.ones(300))},
                                                       max_bytes=1000), "above the limit"),
    ("load_npz: inflates past the limit", lambda tmp: load_npz(
        tmp, {"a.npy": npy_bytes(header=INFLATES, data=bytes(8 << 20))}, max_bytes=1 << 20),
     "above the limit"),
    # ---- 4. complex, bool, int-only linear, optimizer arguments -------------------------
    ("complex tensor", lambda tmp: mg.tensor(np.ones(2, complex)), "complex"),
    ("complex operand", lambda tmp: p(2) * np.array([1 + 1j, 2]), "complex values are not supported"),
    ("bool + bool", lambda tmp: mg.tensor([True]) + mg.tensor([False]), "add: arithmetic on bool"),
    ("bool - bool", lambda tmp: mg.tensor([True]) - mg.tensor([False]), "sub: arithmetic on bool"),
    ("-bool", lambda tmp: -mg.tensor([True]), "neg: arithmetic on bool"),
    ("int-only linear", lambda tmp: F.linear(np.ones((2, 3), int), np.ones((4, 3), int)),
     "linear: weight must be a float tensor"),
    ("clip max_norm -1", lambda tmp: optim.clip_grad_norm_(with_grad(p(2), [3, 4]), -1.0), "max_norm"),
    ("clip max_norm nan", lambda tmp: optim.clip_grad_norm_(with_grad(p(2), [3, 4]), math.nan),
     "max_norm"),
    ("SGD lr nan", lambda tmp: optim.SGD([p(2)], lr=math.nan), "lr must be a number"),
    ("SGD lr -1", lambda tmp: optim.SGD([p(2)], lr=-1.0), "lr must be a number"),
    ("Adam lr inf", lambda tmp: optim.Adam([p(2)], lr=math.inf), "lr must be a number"),
    ("Adam eps 0", lambda tmp: optim.Adam([p(2)], eps=0.0), "eps must be a number in (0"),
    ("Adam beta2 1", lambda tmp: optim.Adam([p(2)], betas=(0.9, 1.0)), "beta2 must be a number in [0, 1)"),
    ("Adam beta1 -0.1", lambda tmp: optim.Adam([p(2)], betas=(-0.1, 0.9)), "beta1"),
    ("Adam state t -3", lambda tmp: optim.Adam([p(2)]).load_state_dict(
        {"t": np.array(-3), "m.0": np.zeros(2), "v.0": np.zeros(2)}), "t must be an int >= 0"),
    # ---- 5. attention edge cases ---------------------------------------------------------
    ("read with S = 0", lambda tmp: read(p(2, 0), p(2, 0, 3)),
     "read: values (B=2, S=0, D=3) does not fit (B, [h], S >= 1, D)"),
    ("Attention with S = 0", lambda tmp: Attention(DotScore())(p(2, 4), p(2, 0, 4)),
     "Attention: values (B=2, S=0, D=4) does not fit (B, S >= 1, D)"),
    ("sdpa with S = 0", lambda tmp: scaled_dot_product_attention(p(2, 3, 4), p(2, 0, 4), p(2, 0, 4)),
     "scaled_dot_product_attention: k (B=2, S=0, d=4) does not fit (B=2, S >= 1, d=4)"),
    ("MultiHeadAttention(8, 2.0)", lambda tmp: MultiHeadAttention(8, 2.0),
     "MultiHeadAttention: embed_dim and num_heads must be positive integers, got embed_dim=8, "
     "num_heads=2.0"),
    ("local-m position 1.5", lambda tmp: local_m(1.5), "position 1.5 is not an integer"),
    ("local-m position -1", lambda tmp: local_m(-1), "position -1 is negative"),
    # ---- 6. bounded work and clean exits --------------------------------------------------
    ("translate --max-len 1e7", translate("--max-len", 10_000_000), "--max-len must be 1..1000"),
    ("translate --svg into a file", lambda folder: cli("translate", folder, "1", "--svg",
                                                        folder / "checkpoint.json"), "is a file, not a folder"),
    ("train --n-train 1e9", lambda tmp: cli("train", "--n-train", 10 ** 9, "--out", tmp / "o"),
     "examples need about"),
    ("train --max-len 1e6", lambda tmp: cli("train", "--task", "copy", "--max-len", 10 ** 6,
                                            "--out", tmp / "o"), "max_len must be <= 1000"),
    ("float64 divergence", lambda tmp: cli("train", "--task", "copy", "--n-train", 200, "--n-val", 10,
                                           "--embed", 8, "--hidden", 8, "--dec-hidden", 8, "--attn", 8,
                                           "--dtype", "float64", "--lr", 1e4, "--clip", "inf",
                                           "--out", tmp / "o"), "training diverged"),
]


@pytest.mark.parametrize("action, fragment", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_gives_one_line(action, fragment, run_folder, tmp_path):
    folder = tmp_path / "run"
    shutil.copytree(run_folder, folder)
    target = folder if action.__code__.co_varnames[:1] == ("folder",) else tmp_path
    with pytest.raises((ValueError, TypeError, FloatingPointError)) as e:
        action(target)
    message = str(e.value)
    assert fragment in message and "\n" not in message.strip(), message
    assert "allow_pickle" not in message


# ---- what must work rather than fail ---------------------------------------------------------

def test_multihead_attention_with_an_empty_batch_gives_empty_results():
    mha = MultiHeadAttention(8, 2, rng=np.random.default_rng(0))
    out, weights = mha(p(0, 3, 8), p(0, 5, 8), p(0, 5, 8))
    assert out.shape == (0, 3, 8) and weights.shape == (0, 2, 3, 5)


def _sdpa(scores, values, mask):
    """scaled_dot_product_attention with one query (2, 1, 3) against fixed keys (2, 4, 3);
    ``scores`` (2, 4) enters as the query's first row so that it gets a gradient."""
    keys = mg.tensor(np.random.default_rng(1).normal(size=(2, 4, 3)))
    return scaled_dot_product_attention(scores[:, :3].reshape(2, 1, 3), keys, values,
                                        mask[:, None, :], return_weights=True)  # (B, 1, S)


@pytest.mark.parametrize("bad", [math.inf, -math.inf, math.nan])
@pytest.mark.parametrize("fn", ["read", "attend", "sdpa"])
def test_a_masked_value_vector_with_inf_or_nan_is_refused_in_one_line(fn, bad):
    """Values at masked positions must be finite (their weight is 0, and 0 · inf = NaN): a
    one-line ValueError that names the op, the role and the position, never a NaN context."""
    from attention import attend
    op = {"read": "read", "attend": "attend", "sdpa": "scaled_dot_product_attention"}[fn]
    fn = {"read": read, "attend": attend, "sdpa": _sdpa}[fn]
    rng = np.random.default_rng(0)
    values, scores = rng.normal(size=(2, 4, 3)), rng.normal(size=(2, 4))
    mask = np.array([[True, True, False, True], [True, False, False, True]])
    s, vt = mg.tensor(scores, requires_grad=True), mg.tensor(np.where(mask[..., None], values, bad))
    with pytest.raises(ValueError, match=rf"^{op}: values .* at a masked position, values\[0, 2\]") as e:
        fn(s, vt, mask)
    assert "\n" not in str(e.value)
