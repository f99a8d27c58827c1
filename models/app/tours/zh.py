"""The walkthroughs' Markdown in Chinese: ``source_NNN.py`` and the catalog of its comment
blocks, ``source_NNN.zh.po``, make the Chinese walkthrough ``source_NNN_zh.py``.

    python -m models.app.tours.zh 004            # writes source_004_zh.py into this folder
    jupytext --to notebook source_004_zh.py      # the Chinese notebook (or open it in VS Code)
    python -m models.app.tours.zh 004 --update   # after editing source_004.py: the catalog in
                                                 # its order, new blocks with an empty msgstr

A comment block is a run of comment lines of the English file (a Markdown cell, or a comment
between the lines of a code cell); the catalog maps each, as its text without the ``# ``, to
its reviewed translation. Nothing else changes but ``SPEAK_CHINESE`` atop the first code cell
(it prints Chinese wherever it runs: a script, a notebook under any locale): the Markdown is
not printed when it runs, so ``python -m models.app.tours 004 --lang zh`` runs the English
file (every message it prints comes from the ``models`` catalog). A block
whose English has no translation is stale: the file is written with it left in English, and
named; ``tests/models/test_tours_zh.py`` fails naming it. A maintainer's tool (it imports the
``.po`` reader of ``minigrad.i18n_build``); the walkthroughs never import it.
"""
from __future__ import annotations

import argparse
import pathlib
import sys
from dataclasses import dataclass

from minigrad.i18n_build import parse_po
from models.app.tours import HERE, TOURS

SPEAK_CHINESE = ["from minigrad import i18n",
                 'i18n.set_language("zh")  # this walkthrough speaks Chinese, whatever the locale']


@dataclass
class Block:
    line: int        # 1-based line of the block's first line in the English file
    cell: int        # 1-based number of its cell
    marker: str      # the cell's "# %%" line
    indent: str      # what precedes "#" on each of its lines
    text: str        # its lines without the indent and "# ", joined by newlines
    length: int      # its number of lines

    def where(self, name: str) -> str:
        first = self.text.split("\n")[0]
        return (f"source_{name}.py line {self.line}, cell {self.cell} ({self.marker}): "
                f"{first[:60]!r}")


def is_comment(line: str) -> bool:
    return line.lstrip().startswith("#") and not line.startswith("# %%")


def _uncomment(line: str) -> str:
    body = line.lstrip()[1:]
    return body[1:] if body.startswith(" ") else body


def _comment(indent: str, text: str) -> str:
    return "\n".join(f"{indent}# {line}" if line else f"{indent}#" for line in text.split("\n"))


def blocks(script: str) -> list:
    """The comment blocks of a percent-cell script, in order."""
    lines, out, cell, marker, i = script.split("\n"), [], 0, "", 0
    while i < len(lines):
        if lines[i].startswith("# %%"):
            cell, marker = cell + 1, lines[i]
        elif is_comment(lines[i]):
            indent = lines[i][:len(lines[i]) - len(lines[i].lstrip())]
            end = i
            while end < len(lines) and is_comment(lines[end]) and \
                    lines[end].startswith(indent + "#"):
                end += 1
            out.append(Block(i + 1, cell, marker, indent,
                             "\n".join(_uncomment(l) for l in lines[i:end]), end - i))
            i = end
            continue
        i += 1
    return out


def english_path(name: str) -> pathlib.Path:
    return HERE / TOURS[name][0]


def catalog_path(name: str) -> pathlib.Path:
    return HERE / f"source_{name}.zh.po"


def catalog(name: str) -> dict:
    """{English block: its translation}; an entry with an empty translation is left out."""
    path = catalog_path(name)
    return {k: v for k, v in parse_po(path).items() if v} if path.exists() else {}


def stale(name: str) -> list:
    """The English file's blocks that the catalog does not translate."""
    have = catalog(name)
    return [b for b in blocks(english_path(name).read_text(encoding="utf-8")) if b.text not in have]


def unused(name: str) -> list:
    """The catalog's English blocks that the English file no longer has."""
    english = {b.text for b in blocks(english_path(name).read_text(encoding="utf-8"))}
    return [k for k in catalog(name) if k not in english]


def chinese(name: str) -> str:
    """The walkthrough, its comment blocks translated (a stale one left in English)."""
    script, have = english_path(name).read_text(encoding="utf-8"), catalog(name)
    lines, out, at = script.split("\n"), [], 0
    for b in blocks(script):
        out += lines[at:b.line - 1]
        out.append(_comment(b.indent, have.get(b.text, b.text)))
        at = b.line - 1 + b.length
    out = "\n".join(out + lines[at:]).split("\n")
    code = out.index("# %%") + 1
    return "\n".join(out[:code] + SPEAK_CHINESE + out[code:])


def _quote(text: str) -> str:
    """A .po string: one quoted piece per line (the first empty when there are several)."""
    def q(s, end=""):
        return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\t", "\\t") + end + '"'
    parts = text.split("\n")
    if len(parts) == 1:
        return q(text)
    return "\n".join(['""'] + [q(p, "\\n") for p in parts[:-1]] +
                     ([q(parts[-1])] if parts[-1] else []))


def catalog_text(name: str, translations: dict) -> str:
    """The catalog in the English file's order: each block with its translation ("" when there
    is none yet), then the entries the English no longer has, commented out with ``#~``."""
    found = blocks(english_path(name).read_text(encoding="utf-8"))
    out = [f"# The Markdown of models/app/tours/source_{name}.py in Chinese: each comment block",
           "# (msgid, without its \"# \") and its reviewed translation (msgstr). Read by",
           f"# python -m models.app.tours.zh {name}, which writes source_{name}_zh.py;",
           "# python -m models.app.tours.zh {0} --update puts new English blocks in.".format(name),
           'msgid ""', 'msgstr "Content-Type: text/plain; charset=UTF-8\\n"', ""]
    done = set()
    for b in found:
        if b.text in done:
            continue
        done.add(b.text)
        out += [f"#: source_{name}.py:{b.line}", f"#. cell {b.cell} ({b.marker})",
                "msgid " + _quote(b.text), "msgstr " + _quote(translations.get(b.text, "")), ""]
    for old in (k for k in translations if k not in done):
        out += ["#~ " + line for line in
                ("msgid " + _quote(old) + "\nmsgstr " + _quote(translations[old])).split("\n")
                ] + [""]
    return "\n".join(out)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m models.app.tours.zh",
                                description="Write a walkthrough with its Markdown in Chinese.")
    p.add_argument("source", choices=sorted(TOURS), help="which walkthrough")
    p.add_argument("--out", metavar="FILE", help="where to write it (default: source_NNN_zh.py "
                                                 "in the current folder)")
    p.add_argument("--update", action="store_true",
                   help="rewrite the catalog source_NNN.zh.po in the English file's order instead")
    a = p.parse_args(argv)
    if a.update:
        path = catalog_path(a.source)
        path.write_text(catalog_text(a.source, catalog(a.source)), encoding="utf-8")
        print(f"wrote {path}")
    else:
        out = pathlib.Path(a.out or f"source_{a.source}_zh.py")
        out.write_text(chinese(a.source), encoding="utf-8")
        print(f"wrote {out}")
    missing = stale(a.source)
    for b in missing:
        print(f"no translation (left in English): {b.where(a.source)}", file=sys.stderr)
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
