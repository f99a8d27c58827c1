"""Checkpoints: weights as ``.npz`` (``minigrad.save``) plus a JSON file, never pickled.

A checkpoint is a folder::

    checkpoint.json          model config, vocabularies, training config and state, and the
                             names and SHA-256 digests of the two array files
    weights-<step>.npz       the model's parameters, by dotted name (``Module.state_dict``)
    optimizer-<step>.npz     Adam's moments and step count (only when saved from training)
    best-weights-<step>.npz  the best held-out epoch's weights (while a training run is not
                             finished), with its digest in the index like the other two

Writes are atomic: the names of the new array files are first written into the old index
(its ``pending`` journal), the array files get those new names, then ``checkpoint.json`` is
replaced in one ``os.replace`` -- the commit point -- and only then are the previous array
files removed. A crash at any moment leaves either the old or the new checkpoint, never a
mixture; the arrays of an interrupted save, named in the journal but not committed, are
removed by the next save (or by ``--resume``, see ``models/app/runs.py``). No other file is
removed. Every file is read within bounds (``models/app/bounded.py``): a regular file, the
index at most 16 MiB, an array file at most the model's arrays in float64 plus headers. Loading
trusts nothing and raises ``CheckpointError`` (a ``ValueError``), one line naming the file and
the problem: every file's digest is required and checked first; the model config is
type-checked and its sizes capped (``check_model_size``) before a parameter is allocated; each
npz member's name, shape and dtype are checked against the model before its data is read
(``load_npz``); then non-finite values are refused.
"""
from __future__ import annotations

import hashlib
import json
import os

import numpy as np

import minigrad as mg
from minigrad.files import write_atomic
from minigrad.i18n import translator

from models.vocab import Vocab
from models.app.bounded import ARCHIVE_OVERHEAD, FileRefused, load_npz, open_bounded, read_bounded
from models.app.build import build_model
from models.app.checks import check_model_size
from models.seq2seq import ModelConfig, Seq2Seq

FORMAT = "minigrad-seq2seq/1"
KINDS = ("weights", "optimizer", "best_weights")  # the array files, by their index entries
INDEX = "checkpoint.json"
MAX_INDEX_BYTES = 1 << 24  # 16 MiB: an index holds configs and a loss curve
PENDING = "pending"  # the journal: array files a save is writing, before its commit

_ = translator("models")


class CheckpointError(ValueError):
    """A checkpoint that cannot be read, with the reason."""


def _sha256(path: str, limit: int) -> str:
    """The file's digest, read through ``open_bounded``: a regular file of at most ``limit``."""
    h = hashlib.sha256()
    with open_bounded(path, limit=limit, what=_("checkpoint")) as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def save_checkpoint(folder, model: Seq2Seq, src_vocab: Vocab, tgt_vocab: Vocab,
                    extra: dict | None = None, optimizer=None, step: int = 0,
                    best: dict | None = None) -> str:
    """Write a checkpoint into ``folder`` (created if needed); returns the index's path.

    ``extra`` (JSON-serialisable: training config, state, RNG state …) is stored as is;
    ``best`` ({name: array}) is the best held-out epoch's weights of an unfinished run.
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
    size = len(json.dumps({**index, **(extra or {})}, indent=1).encode()) + 4096  # + 3 names
    if size > MAX_INDEX_BYTES:  # and digests: never an index that load_checkpoint refuses
        raise CheckpointError(_("checkpoint: the index for {folder} would be about {size:,} bytes, "
                                "more than the {most:,} a load reads; nothing was saved").format(
                                    folder=folder, size=size, most=MAX_INDEX_BYTES))
    files = {"weights": model.state_dict()}
    if optimizer is not None:
        files["optimizer"] = optimizer.state_dict()
    if best is not None:
        files["best_weights"] = best
    names = {}
    for kind in files:
        stem = f"{kind.replace('_', '-')}-{step:07d}"  # best_weights: best-weights-<step>.npz
        names[kind] = f"{stem}.npz"
        if names[kind] == old.get(kind):  # the same step again: never overwrite the committed file
            names[kind] = f"{stem}-{os.urandom(3).hex()}.npz"
    if old:  # the journal: the names about to be written, so an interrupted save's are known
        _remove_strays(folder, old)
        write_atomic(index_path, lambda f: json.dump({**old, PENDING: sorted(names.values())}, f,
                                                     indent=1))
    for kind, arrays in files.items():
        path = os.path.join(folder, names[kind])
        mg.save(arrays, path)
        index[kind], index[kind + "_sha256"] = names[kind], _sha256(path, os.path.getsize(path))
    index.update(extra or {})
    write_atomic(index_path, lambda f: json.dump(index, f, indent=1))  # commit
    for kind in KINDS:  # only a plain file name of this kind: the old index may be anyone's
        stale = old.get(kind)
        if stale != index.get(kind) and _ours(stale, kind) and \
                os.path.isfile(os.path.join(folder, stale)):
            os.remove(os.path.join(folder, stale))
    return index_path


def _ours(name, kind: str) -> bool:
    """True for a plain file name of the form a checkpoint gives its ``kind`` of array file."""
    return (isinstance(name, str) and os.path.basename(name) == name
            and name.startswith(kind.replace("_", "-") + "-") and name.endswith(".npz"))


def _remove_strays(folder: str, index: dict) -> None:
    """Remove the array files an interrupted save wrote: named in ``index``'s journal
    (``PENDING``) but not committed by it."""
    pending = index.get(PENDING)
    committed = {index.get(kind) for kind in KINDS}
    for name in pending if isinstance(pending, list) else []:
        path = os.path.join(folder, name) if isinstance(name, str) else ""
        if name not in committed and any(_ours(name, k) for k in KINDS) and os.path.isfile(path):
            os.remove(path)


def remove_strays(folder) -> None:
    """``_remove_strays`` for the checkpoint in ``folder`` (nothing if it cannot be read)."""
    try:
        _remove_strays(os.fspath(folder), _read_index(os.path.join(os.fspath(folder), INDEX)))
    except (CheckpointError, OSError):
        pass


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
    expected = _("expected a checkpoint folder written by 'python -m models train' (holding "
                 "{index}), its {index}, or its weights .npz file").format(index=INDEX)
    if not os.path.exists(path):
        where = (_("{path} not found").format(path=path)
                 if given == path or not os.path.exists(given) else
                 _("{path} holds no {index}").format(path=given, index=INDEX)
                 if os.path.isdir(given) else
                 _("{path} has no {index} next to it").format(path=given, index=INDEX))
        raise CheckpointError(_("checkpoint: {where} ({expected})").format(where=where,
                                                                           expected=expected))
    try:  # a regular file of at most MAX_INDEX_BYTES: no device, FIFO or folder is read
        index = json.loads(read_bounded(path, limit=MAX_INDEX_BYTES,
                                        what=_("checkpoint")).decode())
    except FileRefused as e:  # names the file and the limit
        raise CheckpointError(_("{error}; {expected}").format(error=e,
                                                              expected=expected)) from None
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as e:
        why = _("nested too deeply") if isinstance(e, RecursionError) else e
        message = (_("checkpoint: {path} is not valid JSON ({why})") if path.endswith(".json")
                   else _("checkpoint: {path} is not valid JSON ({why}); {expected}"))
        raise CheckpointError(message.format(path=path, why=why, expected=expected)) from None
    except OSError as e:
        raise CheckpointError(_("checkpoint: cannot read {path} ({why}); {expected}").format(
            path=path, why=e.strerror or e, expected=expected)) from None
    if not isinstance(index, dict) or index.get("format") != FORMAT:
        found = index.get("format") if isinstance(index, dict) else None
        raise CheckpointError(_("checkpoint: {path} is not a {format} index (format field: "
                                "{found!r})").format(path=path, format=FORMAT, found=found))
    return index


def is_index(path) -> bool:
    """True when ``path`` is a checkpoint index this program wrote (readable, of ``FORMAT``)."""
    try:
        _read_index(os.fspath(path))
        return True
    except CheckpointError:
        return False


def _file_of(index: dict, folder: str, kind: str, limit: int) -> str:
    """The path of ``index[kind]``, after checking that it exists and matches its digest
    (required: a checkpoint without one could hold anything); only a regular file of at
    most ``limit`` bytes is read."""
    name, digest = index.get(kind), index.get(kind + "_sha256")
    if (not isinstance(name, str) or os.path.basename(name) != name or name in ("", ".", "..")
            or not name.isprintable()):  # a NUL or an escape: shown escaped (!r), not raw
        raise CheckpointError(_("checkpoint: bad {kind} entry {name!r} in {index}").format(
            kind=kind, name=name, index=INDEX))
    path = os.path.join(folder, name)
    if not os.path.lexists(path):
        raise CheckpointError(_("checkpoint: {kind} file {path} is missing").format(kind=kind,
                                                                                    path=path))
    if not isinstance(digest, str):
        raise CheckpointError(_("checkpoint: {index} in {folder} has no {kind}_sha256 digest for "
                                "{name}, so the file cannot be trusted").format(
                                    index=INDEX, folder=folder, kind=kind, name=name))
    try:
        actual = _sha256(path, limit)
    except FileRefused as e:
        raise CheckpointError(str(e)) from None
    except OSError as e:
        raise CheckpointError(_("checkpoint: cannot read {path} ({why})").format(
            path=path, why=e.strerror or e)) from None
    if digest != actual:
        raise CheckpointError(_("checkpoint: {path} does not match the digest in {index} (the "
                                "file was changed or replaced after saving)").format(
                                    path=path, index=INDEX))
    return path


def _load_arrays(index: dict, folder: str, kind: str, expected: dict) -> dict:
    """The arrays of ``index[kind]``: digest first, then every member's name, shape and dtype
    against ``expected`` ({name: (shape, dtype kinds)}) before any data is read. The file
    may hold no more than those arrays in float64 (the widest dtype saved)."""
    max_bytes = sum(8 * int(np.prod(shape)) for shape, _ in expected.values())
    path = _file_of(index, folder, kind, max_bytes + ARCHIVE_OVERHEAD)

    def check(headers: dict) -> None:
        missing, unexpected = (sorted(set(expected) - set(headers)),
                               sorted(set(headers) - set(expected)))
        if missing or unexpected:
            raise ValueError(_("{kind} arrays do not fit the model; missing: {missing}; "
                               "unexpected: {unexpected}").format(
                                   kind=kind, missing=", ".join(missing) or "-",
                                   unexpected=", ".join(unexpected) or "-"))
        for name, (shape, dtype) in headers.items():
            want, kinds = expected[name]
            if dtype.kind not in kinds:
                message = (_("array {name} has dtype {dtype}, expected an integer")
                           if kinds == "iu" else
                           _("non-float array {name} (dtype {dtype}), expected a float"))
                raise ValueError(message.format(name=name, dtype=dtype))
            if tuple(shape) != tuple(want):
                raise ValueError(_("{name}: checkpoint {shape}, model {want}").format(
                    name=name, shape=tuple(shape), want=tuple(want)))
    try:
        arrays = load_npz(path, max_bytes, check)
    except ValueError as e:
        raise CheckpointError(_("checkpoint: {error}").format(error=e)) from None
    bad = sorted(k for k, a in arrays.items() if a.dtype.kind in "fc" and not np.isfinite(a).all())
    if bad:  # NaN or inf weights would decode to garbage without a word
        raise CheckpointError(_("checkpoint: non-finite values (NaN or inf) in {names} of {path}")
                              .format(names=bad, path=path))
    return arrays


def _config_and_vocabs(index: dict, index_path: str) -> tuple:
    try:
        config = ModelConfig.from_dict(index.get("model"))
        check_model_size(config)
        src_vocab, tgt_vocab = (Vocab.from_dict(index.get(k)) for k in ("src_vocab", "tgt_vocab"))
    except (KeyError, TypeError, ValueError) as e:
        raise CheckpointError(_("checkpoint: {path} has a bad model or vocabulary entry "
                                "({error})").format(path=index_path, error=e)) from None
    if (config.src_vocab, config.tgt_vocab) != (len(src_vocab), len(tgt_vocab)):
        raise CheckpointError(_("checkpoint: {path}: vocabulary sizes {src}/{tgt} do not match "
                                "the model's {model_src}/{model_tgt}").format(
                                    path=index_path, src=len(src_vocab), tgt=len(tgt_vocab),
                                    model_src=config.src_vocab, model_tgt=config.tgt_vocab))
    return config, src_vocab, tgt_vocab


def load_checkpoint(path, tries: int = 5) -> tuple:
    """``(model, src_vocab, tgt_vocab, index)`` from a checkpoint folder (or its index or
    weights file). Raises ``CheckpointError`` when anything does not fit, unless training
    committed a newer index meanwhile (removing the weights this one names): then that is read."""
    index_path = _index_path(path)
    index = _read_index(index_path, path)
    for _attempt in range(tries):
        try:
            return _load_model(index, index_path)
        except (CheckpointError, OSError):
            newer = _read_index(index_path, path)
            if newer == index:  # nothing was committed meanwhile: the error is the run's own
                raise
            index = newer
    raise CheckpointError(_("checkpoint: {path} is being written: training saved a newer "
                            "checkpoint each of the {tries} times it was read; try again").format(
                                path=index_path, tries=tries))


def _load_model(index: dict, index_path: str) -> tuple:
    config, src_vocab, tgt_vocab = _config_and_vocabs(index, index_path)
    model = build_model(config, np.random.default_rng(0))  # sizes capped: check_model_size
    expected = {k: (v.shape, "f") for k, v in model.state_dict().items()}
    arrays = _load_arrays(index, os.path.dirname(index_path), "weights", expected)
    try:
        model.load_state_dict(arrays)
    except ValueError as e:
        raise CheckpointError(_("checkpoint: the weights in {path} do not fit the model "
                                "({error})").format(path=index_path, error=e)) from None
    return model, src_vocab, tgt_vocab, index


def load_optimizer_state(path, optimizer) -> dict:
    """The optimizer arrays of a checkpoint (for ``--resume``), checked by name, shape and
    dtype against ``optimizer.state_dict()`` before they are read."""
    expected = {k: (np.shape(v), "iu" if np.asarray(v).dtype.kind in "iu" else "f")
                for k, v in optimizer.state_dict().items()}
    index_path = _index_path(path)
    index = _read_index(index_path, path)
    if "optimizer" not in index:
        raise CheckpointError(_("checkpoint: {path} holds no optimizer state (it was not saved "
                                "by training), so it cannot be resumed").format(path=index_path))
    return _load_arrays(index, os.path.dirname(index_path), "optimizer", expected)


def load_best_weights(path, model) -> dict:
    """The best held-out epoch's weights of an unfinished training run (for ``--resume``),
    checked like the model's weights: digest first, then names, shapes and dtypes against
    ``model.state_dict()`` before any data is read, then finiteness."""
    index_path = _index_path(path)
    index, folder = _read_index(index_path, path), os.path.dirname(index_path)
    if "best_weights" not in index:  # a run folder saved before best-weights had a digest
        old = os.path.join(folder, "best-weights.npz")
        what = (_("{path} has no digest in {index}").format(path=old, index=INDEX)
                if os.path.exists(old) else
                _("{path} records a best epoch but no best_weights file").format(path=index_path))
        raise CheckpointError(_("checkpoint: {what}, so the best weights cannot be trusted and "
                                "the run cannot be resumed (its last weights still load for "
                                "translate)").format(what=what))
    expected = {k: (v.shape, "f") for k, v in model.state_dict().items()}
    return _load_arrays(index, folder, "best_weights", expected)
