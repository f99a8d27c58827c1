"""What a walkthrough prints with: its headings, its comparisons with the source, its figures.

A walkthrough (``models/app/tours/source_*.py``) is a plain script in the percent-cell format:
``# %%`` starts a code cell, ``# %% [markdown]`` a Markdown cell written as comments. It runs as
``python -m models.app.tours 004`` (or as a file) with NumPy alone, and opens as a notebook in
Jupyter (with jupytext) or VS Code. It calls these helpers:

* ``section(title)`` prints a heading (the source's own section title);
* ``check(what, ours, source)`` prints a number the library computed beside the one the source
  printed, rounded to the source's digits, and records whether they agree;
* ``show(drawing, name)`` shows a figure inline in a notebook (``_repr_svg_``) or, run as a
  script, writes it as ``name`` into the output folder (over a walkthrough's figure, which
  ends with ``MARK``, never over a user's file: then as ``name-2`` …);
* ``try_it(text)`` ends a section with something to change and rerun.

Every sentence they print is a message of the ``models`` catalog (``_``, which the walkthroughs
import from here), so under ``--lang zh`` a walkthrough prints Chinese; its Markdown in Chinese is
a catalog beside it, ``source_NNN.zh.po``, from which ``zh.py`` writes the Chinese file.

The records (``BOOK``) are what the tests read: every ``check`` must agree, and the files
written must be the figures shown. ``begin(out_dir)`` starts a fresh record.
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field

from attention.demos.common import svg_path
from minigrad.draw.common import pad
from minigrad.files import write_text_atomic
from minigrad.i18n import translator

_ = translator("models")  # the walkthroughs' messages: ``from models.app.tours.book import _``
MARK = "<!-- a walkthrough's figure (models/app/tours): the next run replaces it -->"


@dataclass
class Check:
    what: str
    ours: str       # the library's value, printed to the source's digits
    source: str     # the source's printed value
    agrees: bool


@dataclass
class Book:
    out_dir: str | None = "attention-tour"
    sections: list = field(default_factory=list)
    checks: list = field(default_factory=list)
    files: list = field(default_factory=list)
    values: dict = field(default_factory=dict)


BOOK = Book()


def begin(out_dir: str | None = "attention-tour") -> Book:
    """A fresh record; figures go to ``out_dir`` (None: none written)."""
    global BOOK
    BOOK = Book(out_dir)
    return BOOK


def section(title: str) -> None:
    BOOK.sections.append(title)
    print(f"\n{title}\n{'-' * min(76, 2 * len(title))}")


def _printed(x: float, like: str) -> str:
    """x with as many decimals as the printed number ``like`` has."""
    decimals = len(like.split(".")[1]) if "." in like else 0
    return f"{x:.{decimals}f}"


def check(what: str, ours: float, source: str) -> bool:
    """Print the library's ``ours`` beside the source's printed ``source`` (a string, as
    printed: "0.5414", "−0.607666"); they agree when ours rounds to it."""
    source_ascii = source.replace("\u2212", "-")
    printed = _printed(float(ours), source_ascii)
    agrees = printed == source_ascii or float(printed) == float(source_ascii) == 0.0
    BOOK.checks.append(Check(what, printed, source, agrees))
    mark = "✓" if agrees else _("✗ differs")
    print(_("  {what} ours {ours:>10}   source {source:>10}   {mark}").format(
        what=pad(what, 34), ours=printed, source=source, mark=mark))  # pad: a CJK label is wider
    return agrees


def note(key: str, value) -> None:
    """Keep a value for the tests (what a cell computed, not printed to the digit)."""
    BOOK.values[key] = value


def in_notebook() -> bool:
    shell = sys.modules.get("IPython")
    return shell is not None and getattr(shell, "get_ipython", lambda: None)() is not None


def show(drawing, name: str) -> None:
    """A figure: inline in a notebook, else written to the output folder as ``name``."""
    if in_notebook():
        from IPython.display import display  # only inside a notebook, where IPython runs
        display(drawing)
        return
    try:
        path = svg_path(BOOK.out_dir, name)
        if path is None:
            print(_("  [figure {name}: not written (no output folder)]").format(name=name))
            return
        (root, ext), n = os.path.splitext(path), 1
        while os.path.lexists(path) and not _ours(path):  # a user's file: kept, and said so
            n += 1
            path = f"{root}-{n}{ext}"
        if n > 1:
            print(_("  {name} there is not a walkthrough's figure: kept").format(name=name))
        write_text_atomic(path, f"{drawing}\n{MARK}\n")
    except OSError as e:  # read-only, full, a dangling link, a name too long: one line
        print(_("  [figure {name}: not written ({reason})]").format(
            name=name, reason=e.strerror or e))
        return
    BOOK.files.append(path)
    print(_("  wrote {path}").format(path=path))


def _ours(path: str) -> bool:
    """Whether ``path`` is a figure a walkthrough wrote (it ends with ``MARK``)."""
    try:
        with open(path, "rb") as f:
            return f.read(1 << 20).rstrip().endswith(MARK.encode())
    except OSError:  # a dangling link, a folder: not ours
        return False


def try_it(text: str) -> None:
    print(_("\n  Try it: {text}").format(text=text))


def run_file(path: str, out_dir: str | None) -> Book:
    """Run a walkthrough file as a script, printing as it goes; returns its record."""
    import runpy
    begin(out_dir)
    runpy.run_path(path, run_name="__main__")
    return BOOK
