"""Gradient-check exercises: write a VJP by hand in plain NumPy, and have it checked.

    python -m minigrad.exercises list              # the exercises, easy to hard, and your progress
    python -m minigrad.exercises start DIR         # copy the stubs into DIR (never overwrites)
    python -m minigrad.exercises check NAME        # check DIR's solution (--dir DIR, default .)
    python -m minigrad.exercises check --all
    python -m minigrad.exercises hint NAME         # --level 2 for the formula
    python -m minigrad.exercises list --lang zh    # any command in Chinese (default: the locale)

Each stub (``stubs/NN_name.py``) holds one function ``name_vjp(g, *inputs, **constants)``
with the forward formula and the shapes in its docstring; as shipped it returns None, which
the checker reports as "not implemented yet". The checker compares the learner's gradients
with central finite differences of the forward (float64) and names classic mistakes.

Modules, small to large: ``catalog`` (what an exercise is), ``catalog_basic``,
``catalog_attention``, ``catalog_transformer`` and ``catalog_second`` (the exercises: 1-7,
8-12, 13-14, 15-16), ``diagnose`` (patterns of wrong gradients), ``checker`` (judging),
``integrity`` (the digests of the checker's own files; reading a learner's file), ``child``
and ``sandbox`` (a learner's file runs in a locked-down child process with a wall-clock
limit), ``report`` (text), ``__main__`` (the command line).
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

try:
    from minigrad.exercises.catalog import Exercise
    from minigrad.exercises.registry import all_exercises, find
    from minigrad.exercises.checker import Report, check_file, check_function
    from minigrad.i18n import translator
except KeyboardInterrupt:  # Ctrl-C while `python -m minigrad.exercises` starts: no traceback
    if sys.argv[:1] != ["-m"]:  # "-m" while Python looks for the module it is to run
        raise
    raise SystemExit(130) from None

_ = translator("minigrad")

STUBS = Path(__file__).parent / "stubs"


def copy_stubs(directory) -> tuple:
    """Copy every stub into ``directory`` (made if missing); an existing file is never
    overwritten. Returns (copied, kept): the file names of each kind.

    ``directory`` must be a folder that is empty or holds only exercise files (an earlier
    ``start``: running it again adds new stubs and keeps the learner's work); a file, a
    folder of other things or one that cannot be written raises a one-line ValueError.
    """
    directory = Path(directory)
    if directory.exists() and not directory.is_dir():
        raise ValueError(_("start: {folder} is a file, not a folder: name a new folder").format(
            folder=directory))
    files = {e.file for e in all_exercises()}
    try:
        directory.mkdir(parents=True, exist_ok=True)
        others = sorted(n for n in os.listdir(directory) if n not in files and n != "__pycache__")
    except OSError as e:
        raise ValueError(_("start: cannot create {folder} ({why})").format(
            folder=directory, why=e.strerror or e)) from None
    if others:
        shown = ", ".join(others[:3]) + (" …" if len(others) > 3 else "")
        raise ValueError(_("start: {folder} already holds other files ({files}): name a new or "
                           "empty folder (or one made by start)").format(folder=directory,
                                                                         files=shown))
    copied, kept = [], []
    for e in all_exercises():
        try:
            with open(directory / e.file, "xb") as out:  # "x": fails if the file exists
                out.write((STUBS / e.file).read_bytes())
            copied.append(e.file)
        except FileExistsError:
            kept.append(e.file)
        except OSError as err:
            raise ValueError(_("start: cannot write {path} ({why})").format(
                path=directory / e.file, why=err.strerror or err)) from None
    return copied, kept


__all__ = ["Exercise", "Report", "all_exercises", "find", "check_file", "check_function",
           "copy_stubs", "STUBS"]
