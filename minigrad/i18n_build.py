"""The Chinese message catalogs: compile the reviewed ``.po`` files, and find what is missing.

    python -m minigrad.i18n_build --write      # compile every package's .po files into its .mo,
                                               # and into its zh_TW .mo in Traditional characters
    python -m minigrad.i18n_build --missing    # messages in the code with no translation yet,
                                               # as .po entries to fill in

A package's catalog is every ``<package>/locale/zh/LC_MESSAGES/*.po`` file, merged (a message
in two files must have one translation), compiled into ``<package>.mo`` there, the file
``gettext`` reads (``minigrad.i18n``); ``locale/zh_TW/...`` is that catalog in Traditional
characters, by the reviewed table ``TABLE`` that makes README.zh-TW.md too (no ``.po`` of its own).
A maintainer's tool beside the translator, NumPy-free and without ``msgfmt``; no library
module imports it (it reads the source tree, so it works in a clone, not in an installed copy).
The tests use ``catalog``, ``compile_mo`` and ``used_messages`` to check that every ``.mo`` is
in step with its ``.po`` files and that every message the code can print has a translation;
``parse_po`` also reads the walkthroughs' catalogs of Markdown cells (``models/app/tours/zh.py``).
"""
from __future__ import annotations

import argparse
import ast
import struct
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("minigrad", "attention", "models")
HEADER = "Content-Type: text/plain; charset=UTF-8\n"
TABLE = ROOT / "minigrad" / "locale" / "zh_tw.tsv"  # Simplified -> Traditional, reviewed


def folder(package: str, language: str = "zh") -> Path:
    return ROOT / package / "locale" / language.replace("-", "_") / "LC_MESSAGES"


def load_table(path: Path = TABLE) -> dict:
    """{Simplified: Traditional}: characters and a few reviewed phrases (lines ``from<TAB>to``)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return dict(line.split("\t") for line in lines if line and not line.startswith("#"))


def traditional(text: str, table: dict) -> str:
    """``text`` in Traditional characters, character by character (a term stays the same word):
    at each position the table's longest phrase starting there, else the character's entry."""
    longest, out, i = max(map(len, table), default=1), [], 0
    while i < len(text):
        n = next((n for n in range(min(longest, len(text) - i), 1, -1)
                  if text[i:i + n] in table), 1)
        out.append(table.get(text[i:i + n], text[i:i + n]))
        i += n
    return "".join(out)


def _unquote(text: str, where: str) -> str:
    if not (len(text) >= 2 and text[0] == text[-1] == '"'):
        raise ValueError(f"{where}: expected a quoted string, got {text!r}")
    out, i, body = [], 0, text[1:-1]
    escapes = {"n": "\n", "t": "\t", '"': '"', "\\": "\\"}
    while i < len(body):
        if body[i] == "\\" and i + 1 < len(body) and body[i + 1] in escapes:
            out.append(escapes[body[i + 1]])
            i += 2
        else:
            out.append(body[i])
            i += 1
    return "".join(out)


def parse_po(path: Path) -> dict:
    """{msgid: msgstr} of one .po file (no plurals, no contexts), the header left out."""
    entries, key, field, parts = {}, None, None, {}
    def finish():
        if "msgid" in parts:
            msgid, msgstr = parts["msgid"], parts.get("msgstr", "")
            if msgid in entries:
                raise ValueError(f"{path.name}: {msgid!r} twice")
            if msgid:
                entries[msgid] = msgstr
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        line, where = raw.strip(), f"{path.name} line {number}"
        if not line or line.startswith("#"):
            continue
        if line.startswith(("msgid ", "msgstr ")):
            key, rest = line.split(" ", 1)
            if key == "msgid":
                finish()
                parts = {}
            parts[key] = _unquote(rest, where)
            field = key
        elif line.startswith('"') and field:
            parts[field] += _unquote(line, where)
        else:
            raise ValueError(f"{where}: cannot read {line!r}")
    finish()
    return entries


def messages(package: str) -> dict:
    """The package's catalog: every .po file of its folder, merged."""
    merged = {}
    for path in sorted(folder(package).glob("*.po")):
        for msgid, msgstr in parse_po(path).items():
            if merged.get(msgid, msgstr) != msgstr:
                raise ValueError(f"{package}: {msgid!r} has two translations")
            merged[msgid] = msgstr
    return merged


def compile_mo(entries: dict) -> bytes:
    """The GNU .mo bytes of ``entries`` (sorted, with a UTF-8 header), as ``gettext`` reads."""
    items = sorted({"": HEADER, **{k: v for k, v in entries.items() if v}}.items())
    ids = [k.encode() for k, _ in items]
    strs = [v.encode() for _, v in items]
    n, start = len(items), 7 * 4
    id_table, str_table = start, start + 8 * n
    data_at = str_table + 8 * n
    offsets, blob = [], b""
    for b in ids + strs:
        offsets.append((len(b), data_at + len(blob)))
        blob += b + b"\0"
    head = struct.pack("<7I", 0x950412DE, 0, n, id_table, str_table, 0, data_at)
    table = b"".join(struct.pack("<2I", *o) for o in offsets)
    return head + table + blob


def mo_path(package: str, language: str = "zh") -> Path:
    return folder(package, language) / f"{package}.mo"


def catalog(package: str, language: str = "zh") -> dict:
    """The package's messages in ``language``: "zh" as reviewed, "zh-TW" converted from it."""
    table = load_table() if language == "zh-TW" else None
    return {k: traditional(v, table) if table else v for k, v in messages(package).items()}


def used_messages(package: str) -> dict:
    """{message: "file:line"} for every literal ``_("...")`` in the package's code."""
    found = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id == "_" and node.args
                    and isinstance(node.args[0], ast.Constant)
                    and isinstance(node.args[0].value, str)):
                found.setdefault(node.args[0].value,
                                 f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m minigrad.i18n_build", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write", action="store_true", help="compile every package's .mo")
    parser.add_argument("--missing", action="store_true",
                        help="print .po entries for the messages without a translation")
    args = parser.parse_args(argv)
    status = 0
    for package in PACKAGES:
        for language in ("zh", "zh-TW") if args.write and folder(package).is_dir() else ():
            mo_path(package, language).parent.mkdir(parents=True, exist_ok=True)
            mo_path(package, language).write_bytes(compile_mo(catalog(package, language)))
            print(f"wrote {mo_path(package, language).relative_to(ROOT)} "
                  f"({len(messages(package))} messages)")
        if args.missing:
            have = messages(package) if folder(package).is_dir() else {}
            for msgid, where in used_messages(package).items():
                if not have.get(msgid):
                    print(f"#: {where}\nmsgid {_quote(msgid)}\nmsgstr \"\"\n")
                    status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
