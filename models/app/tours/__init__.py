"""Walkthroughs of the three source articles (the README's "Sources" section names them),
each section by section, as percent-cell scripts (``book.py`` says how they print).
``python -m models.app.tours 004`` runs one; ``run(name, out_dir)`` runs one and returns its
record (what the tests read). Under ``--lang zh`` it runs the Chinese twin ``source_NNN_zh.py``
when there is one: the same code, its Markdown and comments translated (the same numbers and
figures)."""
from __future__ import annotations

import pathlib

from minigrad import i18n
from models.app.tours.book import Book, run_file

HERE = pathlib.Path(__file__).resolve().parent
# name -> (file, what it covers: a message, translated where --list shows it)
TOURS = {"000": ("source_000.py", "7.1 注意力機制的誕生 (Bahdanau's four steps, √d, multi-hop memory, "
                                  "the five questions)"),
         "003": ("source_003.py", "Bahdanau 与 Luong Attention (three models trained here: the "
                                  "bottleneck, the two orderings, the comparison table)"),
         "004": ("source_004.py", "Attention：模型怎样决定该看哪里？ (Bahdanau's soft read, from "
                                  "the human analogy to its gradient)")}


def path(name: str) -> pathlib.Path:
    """Walkthrough ``name``'s file: its Chinese twin when the language is zh and one exists."""
    english = HERE / TOURS[name][0]
    twin = english.with_name(f"{english.stem}_zh.py")
    return twin if i18n.current() == "zh" and twin.exists() else english


def run(name: str, out_dir: str | None = "attention-tour") -> Book:
    """Run walkthrough ``name`` ("004"), printing as it goes; figures into ``out_dir``."""
    return run_file(str(path(name)), out_dir)
