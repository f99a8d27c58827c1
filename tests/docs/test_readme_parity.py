"""README.zh-CN.md says what README.md says: same sections, same code, same figures.

The prose is a translation, so it is not compared word for word. What is compared is what a
translation must not change, section by section (sections are paired in order, cut at the
headings):

- the headings: the same sequence of levels (so the same count per level);
- the code blocks, fenced and indented: identical, in the same order (transcripts included:
  the demos print English in both);
- the numbers in the prose, headings and tables (figures, section numbers like §2.3, counts
  written as digits), as a multiset;
- the inline code spans and link targets (names of functions, options, files), as sets;
- the number of table rows.

Wording may differ freely; a number, a name or a block added to one file and not the other
fails, and the message says which section and what to copy across. The Chinese file has one
section more, its glossary (the last section, "## 术语表"), which has no English twin; its
names must exist in the code or the English README.
"""
import re
from collections import Counter

import pytest

from readme_blocks import CHINESE, ENGLISH, GLOSSARY_HEADING, INLINE_CODE, ROOT, sections

FIX = "update README.zh-CN.md (or README.md) so that the two say the same"


def paired():
    english, chinese = sections(ENGLISH), sections(CHINESE)
    glossary = [s for s in chinese if "#" * s.level + " " + s.heading == GLOSSARY_HEADING]
    assert glossary == chinese[-1:], f"README.zh-CN.md must end with its glossary, {GLOSSARY_HEADING}"
    return english, chinese[:-1]


def test_each_readme_links_to_the_other_at_the_top():
    for path, other in ((ENGLISH, CHINESE), (CHINESE, ENGLISH)):
        top = path.read_text(encoding="utf-8").split("\n")[:5]
        assert any(f"]({other.name})" in line for line in top), f"{path.name} links to {other.name}"


def test_same_headings():
    english, chinese = paired()
    assert [s.level for s in english] == [s.level for s in chinese], (
        "heading levels differ:\n  README.md:       "
        + " ".join(f"{'#' * s.level}{s.heading[:12]}" for s in english)
        + "\n  README.zh-CN.md: "
        + " ".join(f"{'#' * s.level}{s.heading[:12]}" for s in chinese) + f"\n{FIX}")


def section_pairs():
    english, chinese = sections(ENGLISH), sections(CHINESE)
    n = min(len(english), len(chinese))
    return [pytest.param(e, c, id=f"{i}-{e.heading[:30] or 'top'}")
            for i, (e, c) in enumerate(zip(english[:n], chinese[:n]))]


@pytest.mark.parametrize("english, chinese", section_pairs())
def test_same_code_blocks(english, chinese):
    ours = [(b.lang, b.text) for b in english.code]
    theirs = [(b.lang, b.text) for b in chinese.code]
    for i, block in enumerate(ours):
        assert i < len(theirs) and theirs[i] == block, (
            f"README.md line {english.line} '{english.heading}': code block {i + 1} (line "
            f"{english.code[i].line}) differs in README.zh-CN.md (section at line {chinese.line}); {FIX}")
    assert len(ours) == len(theirs), f"README.zh-CN.md line {chinese.line} has extra code blocks; {FIX}"


@pytest.mark.parametrize("english, chinese", section_pairs())
def test_same_facts(english, chinese):
    ours, theirs = english.facts(), chinese.facts()
    for kind in ours:
        a, b = ours[kind], theirs[kind]
        if a != b:
            if isinstance(a, list):
                detail = (f"only in README.md: {list((Counter(a) - Counter(b)).elements())}; "
                          f"only in README.zh-CN.md: {list((Counter(b) - Counter(a)).elements())}")
            else:
                detail = f"README.md {a} vs README.zh-CN.md {b}"
            pytest.fail(f"{kind} differ in '{english.heading}' (README.md line {english.line}, "
                        f"README.zh-CN.md line {chinese.line}): {detail}; {FIX}")


def test_glossary_names_exist():
    """Every name in the glossary's code column is in the code or in the English README."""
    glossary = sections(CHINESE)[-1]
    rows = [l for l in glossary.prose if l.startswith("|") and not l.startswith("|---")][1:]
    assert len(rows) >= 40
    corpus = ENGLISH.read_text(encoding="utf-8") + "".join(
        p.read_text(encoding="utf-8") for d in ("minigrad", "attention", "models")
        for p in (ROOT / d).rglob("*.py"))
    missing = [name for row in rows for m in INLINE_CODE.finditer(row.split("|")[3])
               if (name := m.group(2)) not in corpus and name.split()[0] not in corpus]
    assert not missing, f"glossary names found nowhere in the code or README.md: {missing}"
    english_terms = [row.split("|")[1].strip() for row in rows]
    assert all(re.fullmatch(r"[A-Za-z].*", t) for t in english_terms)
