"""Walkthroughs of the three source articles (the README's "Sources" section names them),
each section by section, as percent-cell scripts (``book.py`` says how they print).
``python -m models.app.tours 004`` runs one; ``run(name, out_dir)`` runs one and returns its
record (what the tests read). Under ``--lang zh`` the same file prints Chinese: its messages come
from the ``models`` catalog, and its Markdown, which is not printed, is translated in
``source_NNN.zh.po``, from which ``python -m models.app.tours.zh 004`` writes the Chinese
walkthrough to read as a notebook (``zh.py``)."""
from __future__ import annotations

import pathlib

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
    """Walkthrough ``name``'s file (in every language: only its messages are translated)."""
    return HERE / TOURS[name][0]


def run(name: str, out_dir: str | None = "attention-tour") -> Book:
    """Run walkthrough ``name`` ("004"), printing as it goes; figures into ``out_dir``."""
    return run_file(str(path(name)), out_dir)
