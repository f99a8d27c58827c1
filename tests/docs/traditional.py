"""README.zh-TW.md, the entrance in Traditional characters (source 000's script), made from
README.zh-CN.md by a reviewed conversion table (a maintainer's tool).

    python tests/docs/traditional.py           # check: does README.zh-TW.md follow README.zh-CN.md?
    python tests/docs/traditional.py --table   # rebuild tests/docs/zh_tw.tsv with OpenCC, then review it
    python tests/docs/traditional.py --write   # rewrite README.zh-TW.md from the table

The conversion is character by character (``s2tw``: Simplified characters to their Traditional
forms, with Taiwan's variant characters, e.g. 為, 線, 裡, as source 000 writes them), never a
regional phrase substitution (``s2twp`` would turn 软件 into 軟體; here it stays 軟件): a term
such as 局部 or 全局 comes out as the same word. Where one Simplified character stands for
several Traditional ones (发: 發 or 髮; 里: 裡 or 里; 后: 後 or 后), the table has the few
contexts this text needs, as short phrases, found where OpenCC's own phrase-aware conversion
differs from the character default; a maintainer reads them (they are printed) before
committing the table. The test beside it (``test_traditional.py``) applies the committed table,
so it needs no OpenCC: ``pip install -e ".[maint]"`` (OpenCC 1.4.2) only to rebuild the table.
"""
from __future__ import annotations

import argparse
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
SIMPLIFIED, TRADITIONAL = ROOT / "README.zh-CN.md", ROOT / "README.zh-TW.md"
TABLE = pathlib.Path(__file__).resolve().parent / "zh_tw.tsv"
BAR_CN = "[English](README.md) | 简体中文 | [繁體中文](README.zh-TW.md)"
BAR_TW = "[English](README.md) | [简体中文](README.zh-CN.md) | 繁體中文"


def load_table(path: pathlib.Path = TABLE) -> dict:
    """{Simplified: Traditional}: characters and the reviewed phrases (lines ``from<TAB>to``)."""
    table = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            simplified, traditional = line.split("\t")
            table[simplified] = traditional
    return table


def convert(text: str, table: dict) -> str:
    """``text`` in Traditional characters: at each position the longest phrase of the table
    that starts there, else the character's own entry, else the character unchanged; the
    language bar made the Traditional file's own."""
    longest = max(map(len, table), default=1)
    out, i = [], 0
    while i < len(text):
        for n in range(min(longest, len(text) - i), 0, -1):
            piece = text[i:i + n]
            if piece in table:
                out.append(table[piece])
                i += n
                break
        else:
            out.append(text[i])
            i += 1
    return "".join(out).replace(convert_bar(table), BAR_TW)


def convert_bar(table: dict) -> str:
    """The Simplified file's language bar as the character conversion writes it."""
    return "".join(table.get(ch, ch) for ch in BAR_CN)


def build_table(text: str) -> tuple:
    """(table, phrases) from OpenCC's s2tw on ``text``: every character it changes, and a
    three-character phrase wherever its phrase-aware output differs from that default."""
    import opencc  # the maintainer's tool only
    cc = opencc.OpenCC("s2tw")
    table = {ch: cc.convert(ch) for ch in sorted(set(text)) if cc.convert(ch) != ch}
    full = cc.convert(text)
    phrases = {}
    default = "".join(table.get(ch, ch) for ch in text)
    for i, (a, b) in enumerate(zip(default, full)):
        if a != b:  # the shortest word around i that OpenCC converts as it did in context
            lo, hi = next(((lo, hi) for lo, hi in ((i - 1, i + 1), (i, i + 2), (i - 1, i + 2))
                           if lo >= 0 and cc.convert(text[lo:hi]) == full[lo:hi]), (i - 1, i + 2))
            phrases[text[lo:hi]] = full[lo:hi]
    table.update(phrases)
    if convert(text, table).replace(BAR_TW, convert_bar(table)) != full:
        raise SystemExit("the table does not reproduce OpenCC's conversion: review by hand")
    return table, phrases


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python tests/docs/traditional.py", description=__doc__.split("\n")[0])
    p.add_argument("--table", action="store_true", help="rebuild tests/docs/zh_tw.tsv with OpenCC")
    p.add_argument("--write", action="store_true", help="rewrite README.zh-TW.md from the table")
    a = p.parse_args(argv)
    text = SIMPLIFIED.read_text(encoding="utf-8")
    if a.table:
        table, phrases = build_table(text)
        lines = ["# README.zh-CN.md -> README.zh-TW.md: OpenCC 1.4.2 s2tw, character by character;",
                 "# phrases (3 characters) only where one Simplified character has several Traditional",
                 "# forms. Rebuilt by python tests/docs/traditional.py --table; reviewed before commit."]
        lines += [f"{k}\t{v}" for k, v in sorted(table.items(), key=lambda kv: (len(kv[0]), kv[0]))]
        TABLE.write_text("\n".join(lines) + "\n", encoding="utf-8")
        print(f"{len(table) - len(phrases)} characters, {len(phrases)} phrases (review these):")
        for k, v in sorted(phrases.items()):
            print(f"  {k} -> {v}")
    converted = convert(text, load_table())
    if a.write or a.table:
        TRADITIONAL.write_text(converted, encoding="utf-8")
        print(f"wrote {TRADITIONAL.relative_to(ROOT)}")
        return 0
    same = TRADITIONAL.exists() and TRADITIONAL.read_text(encoding="utf-8") == converted
    print("README.zh-TW.md follows README.zh-CN.md" if same else
          "README.zh-TW.md is out of date: python tests/docs/traditional.py --write")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
