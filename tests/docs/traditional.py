"""README.zh-TW.md, the entrance in Traditional characters (source 000's script), made from
README.zh-CN.md by a reviewed conversion table (a maintainer's tool); the same table makes the
programs' Traditional catalogs (``python -m minigrad.i18n_build --write``: locale/zh_TW).

    python tests/docs/traditional.py           # check: does README.zh-TW.md follow README.zh-CN.md?
    python tests/docs/traditional.py --table   # rebuild minigrad/locale/zh_tw.tsv with OpenCC, review it
    python tests/docs/traditional.py --write   # rewrite README.zh-TW.md from the table

The conversion is character by character (``s2tw``: Simplified characters to their Traditional
forms, with Taiwan's variant characters, e.g. 為, 線, 裡, as source 000 writes them), never a
regional phrase substitution (``s2twp`` would turn 软件 into 軟體; here it stays 軟件): a term
such as 局部 or 全局 comes out as the same word. Where one Simplified character stands for
several Traditional ones (发: 發 or 髮; 里: 裡 or 里; 复: 復 or 複), the table has the few
contexts these texts (the README and the Simplified catalogs) need, as short phrases, found
where OpenCC's own phrase-aware conversion differs from the character default; a maintainer
reads them (they are printed) before committing the table, and lists in ``REJECTED`` those
where OpenCC is wrong. The converter and the table live with the catalog compiler
(``minigrad.i18n_build``), so the test beside this file (``test_traditional.py``) needs no
OpenCC: ``pip install -e ".[maint]"`` (OpenCC 1.4.2) only to rebuild the table.
"""
from __future__ import annotations

import argparse
import pathlib
import sys

from minigrad import i18n_build
from minigrad.i18n_build import TABLE, load_table  # noqa: F401  (the tests load it from here)

ROOT = pathlib.Path(__file__).resolve().parents[2]
SIMPLIFIED, TRADITIONAL = ROOT / "README.zh-CN.md", ROOT / "README.zh-TW.md"
BAR_CN = "[English](README.md) | 简体中文 | [繁體中文](README.zh-TW.md)"
BAR_TW = "[English](README.md) | [简体中文](README.zh-CN.md) | 繁體中文"
REJECTED = {"这只": "here 只 is 'only' (這只), not the measure word 隻"}


def convert(text: str, table: dict) -> str:
    """``text`` in Traditional characters (``i18n_build.traditional``), the language bar made
    the Traditional file's own."""
    return i18n_build.traditional(text, table).replace(convert_bar(table), BAR_TW)


def convert_bar(table: dict) -> str:
    """The Simplified file's language bar as the character conversion writes it."""
    return "".join(table.get(ch, ch) for ch in BAR_CN)


def build_table(texts: list) -> tuple:
    """(table, phrases) from OpenCC's s2tw on ``texts``: every character it changes, and a
    two- or three-character phrase wherever its phrase-aware output differs from that default
    (but for the ``REJECTED`` ones)."""
    import opencc  # the maintainer's tool only
    cc = opencc.OpenCC("s2tw")
    table = {ch: cc.convert(ch) for ch in sorted(set("".join(texts))) if cc.convert(ch) != ch}
    phrases = {}
    for text in texts:
        full, default = cc.convert(text), "".join(table.get(ch, ch) for ch in text)
        for i, (a, b) in enumerate(zip(default, full)):
            if a != b:  # the shortest word around i that OpenCC converts as it did in context
                lo, hi = next(((lo, hi) for lo, hi in ((i - 1, i + 1), (i, i + 2), (i - 1, i + 2))
                               if lo >= 0 and cc.convert(text[lo:hi]) == full[lo:hi]),
                              (i - 1, i + 2))
                if text[lo:hi] not in REJECTED:
                    phrases[text[lo:hi]] = full[lo:hi]
    table.update(phrases)
    for text in texts:
        mine, full = i18n_build.traditional(text, table), cc.convert(text)
        wrong = [text[max(i - 2, 0):i + 3] for i, (a, b) in enumerate(zip(mine, full))
                 if a != b and not any(r in text[max(i - 2, 0):i + 3] for r in REJECTED)]
        if wrong:
            raise SystemExit(f"the table does not reproduce OpenCC's conversion of {wrong}")
    return table, phrases


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python tests/docs/traditional.py", description=__doc__.split("\n")[0])
    p.add_argument("--table", action="store_true", help="rebuild the table with OpenCC")
    p.add_argument("--write", action="store_true", help="rewrite README.zh-TW.md from the table")
    a = p.parse_args(argv)
    text = SIMPLIFIED.read_text(encoding="utf-8")
    if a.table:
        catalogs = [v for package in i18n_build.PACKAGES for v in i18n_build.messages(package).values()]
        table, phrases = build_table([text, *catalogs])
        lines = ["# Simplified -> Traditional (README.zh-TW.md and the zh_TW catalogs): OpenCC 1.4.2 s2tw,",
                 "# character by character; phrases (2-3 characters) only where one Simplified character",
                 "# has several Traditional forms. Rebuilt by python tests/docs/traditional.py --table;",
                 "# reviewed before commit."]
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
