"""Checkpoints: weights as ``.npz`` (``minigrad.save``) plus a JSON file, never pickled.

A checkpoint is a folder::

    checkpoint.json          model config, vocabularies, training config and state, and the
                             names and SHA-256 digests of the two array files
    weights-<step>.npz       the model's parameters, by dotted name (``Module.state_dict``)
    optimizer-<step>.npz     Adam's moments and step count (only when saved from training)

Writes are atomic: the array files get new names, then ``checkpoint.json`` is replaced in one
``os.replace`` -- the commit point -- and only then are the previous array files removed. A
crash at any moment leaves either the old or the new checkpoint, never a mixture. Loading
checks everything and raises ``CheckpointError`` (a ``ValueError``) saying what is wrong:
not an npz, missing, unexpected, mis-shaped, non-float or non-finite arrays, a digest that
does not match.
"""
from __future__ import annotations

import hashlib
import json
import os

import numpy as np

import minigrad as mg
from minigrad.files import write_atomic

from models.vocab import Vocab
from models.seq2seq import ModelConfig, Seq2Seq

FORMAT = "minigrad-seq2seq/1"
INDEX = "checkpoint.json"


class CheckpointError(ValueError):
    """A checkpoint that cannot be read, with the reason."""


def _sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def save_checkpoint(folder, model: Seq2Seq, src_vocab: Vocab, tgt_vocab: Vocab,
                    extra: dict | None = None, optimizer=None, step: int = 0) -> str:
    """Write a checkpoint into ``folder`` (created if needed); returns the index's path.

    ``extra`` (JSON-serialisable: training config, state, RNG state …) is stored as is.
    """
    folder = os.fspath(folder)
    os.makedirs(folder, exist_ok=True)
    index_path = os.path.join(folder, INDEX)
    try:  # the files of the checkpoint being replaced, to remove after the commit
        old = _read_index(index_path) if os.path.exists(index_path) else {}
    except CheckpointError:  # an unreadable one (train --overwrite): replace it all the same
        old = {}
    index = {"format": FORMAT, "model": model.config.to_dict(),
             "src_vocab": src_vocab.to_dict(), "tgt_vocab": tgt_vocab.to_dict()}
    files = {"weights": model.state_dict()}
    if optimizer is not None:
        files["optimizer"] = optimizer.state_dict()
    for kind, arrays in files.items():
        name = f"{kind}-{step:07d}.npz"
        if name == old.get(kind):  # the same step again: never overwrite the committed file
            name = f"{kind}-{step:07d}-{os.urandom(3).hex()}.npz"
        mg.save(arrays, os.path.join(folder, name))
        index[kind], index[kind + "_sha256"] = name, _sha256(os.path.join(folder, name))
    index.update(extra or {})
    write_atomic(index_path, lambda f: json.dump(index, f, indent=1))  # commit
    for kind in ("weights", "optimizer"):
        stale = old.get(kind)
        if stale and stale != index.get(kind) and os.path.exists(os.path.join(folder, stale)):
            os.remove(os.path.join(folder, stale))
    return index_path


def _index_path(path) -> str:
    path = os.fspath(path)
    if os.path.isdir(path):
        return os.path.join(path, INDEX)
    if path.endswith(".npz"):  # a weights file: its index sits next to it
        return os.path.join(os.path.dirname(path) or ".", INDEX)
    return path


def _read_index(path: str, given=None) -> dict:
    """The parsed index at ``path``; ``given`` is what the user named (for the messages)."""
    given = path if given is None else os.fspath(given)
    expected = ("expected a checkpoint folder written by 'python -m models train' (holding "
                f"{INDEX}), its {INDEX}, or its weights .npz file")
    if not os.path.exists(path):
        where = (f"{path} not found" if given == path or not os.path.exists(given) else
                 f"{given} holds no {INDEX}" if os.path.isdir(given) else
                 f"{given} has no {INDEX} next to it")
        raise CheckpointError(f"checkpoint: {where} ({expected})")
    try:
        with open(path, encoding="utf-8") as f:
            index = json.load(f)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        kind = "" if path.endswith(".json") else f"; {expected}"
        raise CheckpointError(f"checkpoint: {path} is not valid JSON ({e}){kind}") from None
    except OSError as e:
        raise CheckpointError(f"checkpoint: cannot read {path} ({e.strerror or e}); "
                              f"{expected}") from None
    if not isinstance(index, dict) or index.get("format") != FORMAT:
        raise CheckpointError(f"checkpoint: {path} is not a {FORMAT} index "
                              f"(format field: {index.get('format') if isinstance(index, dict) else None!r})")
    return index


def _load_arrays(index: dict, folder: str, kind: str) -> dict:
    """The arrays of ``index[kind]``, after checking the file's digest."""
    name = index.get(kind)
    if not isinstance(name, str) or os.path.basename(name) != name:
        raise CheckpointError(f"checkpoint: bad {kind} entry {name!r} in {INDEX}")
    path = os.path.join(folder, name)
    if not os.path.exists(path):
        raise CheckpointError(f"checkpoint: {kind} file {path} is missing")
    try:
        arrays = mg.load(path)
    except ValueError as e:
        raise CheckpointError(f"checkpoint: {e}") from None
    if index.get(kind + "_sha256") not in (None, _sha256(path)):
        raise CheckpointError(f"checkpoint: {path} does not match the digest in {INDEX} "
                              "(the file was changed or replaced after saving)")
    bad = sorted(k for k, a in arrays.items() if a.dtype.kind in "fc" and not np.isfinite(a).all())
    if bad:  # NaN or inf weights would decode to garbage without a word
        raise CheckpointError(f"checkpoint: non-finite values (NaN or inf) in {bad} of {path}")
    return arrays


def load_checkpoint(path) -> tuple:
    """``(model, src_vocab, tgt_vocab, index)`` from a checkpoint folder (or its index or
    weights file). Raises ``CheckpointError`` when anything does not fit."""
    index_path = _index_path(path)
    index = _read_index(index_path, path)
    try:
        config = ModelConfig.from_dict(index["model"])
        src_vocab, tgt_vocab = Vocab.from_dict(index["src_vocab"]), Vocab.from_dict(index["tgt_vocab"])
    except (KeyError, TypeError, ValueError) as e:
        raise CheckpointError(f"checkpoint: {index_path} has a bad model or vocabulary entry ({e})") from None
    if (config.src_vocab, config.tgt_vocab) != (len(src_vocab), len(tgt_vocab)):
        raise CheckpointError(f"checkpoint: vocabulary sizes {len(src_vocab)}/{len(tgt_vocab)} "
                              f"do not match the model's {config.src_vocab}/{config.tgt_vocab}")
    arrays = _load_arrays(index, os.path.dirname(index_path), "weights")
    not_float = sorted(k for k, a in arrays.items() if a.dtype.kind != "f")
    if not_float:
        raise CheckpointError(f"checkpoint: non-float arrays {not_float} in the weights file")
    model = Seq2Seq(config, np.random.default_rng(0))
    try:
        model.load_state_dict(arrays)
    except ValueError as e:
        raise CheckpointError(f"checkpoint: the weights do not fit the model ({e})") from None
    return model, src_vocab, tgt_vocab, index


def load_optimizer_state(path) -> dict:
    """The optimizer arrays of a checkpoint (for ``--resume``)."""
    index_path = _index_path(path)
    index = _read_index(index_path, path)
    if "optimizer" not in index:
        raise CheckpointError(f"checkpoint: {index_path} holds no optimizer state (it was not "
                              "saved by training), so it cannot be resumed")
    return _load_arrays(index, os.path.dirname(index_path), "optimizer")
