"""Each Chinese README says what its English twin says: same sections, same code, same figures.

The twins are the entrance (README.md and README.zh-CN.md) and each guide beside the code with
its README.zh-CN.md in the same folder (`TWINS` in readme_blocks.py; benchmarks/README.zh-CN.md
translates one section of its English file, "How fast").

The prose is a translation, so it is not compared word for word. What is compared is what a
translation must not change, section by section (sections are paired in order, cut at the
headings):

- the headings: the same sequence of levels (so the same count per level);
- the code blocks, fenced and indented: identical, in the same order (transcripts included:
  the demos print English in both);
- the numbers in the prose, headings and tables (figures, section numbers like §2.3, counts
  written as digits), as a multiset;
- the inline code spans and link targets (names of functions, options, files), as sets; a link
  to a Chinese twin counts as a link to its English file;
- the number of table rows.

Wording may differ freely; a number, a name or a block added to one file and not the other
fails, and the message says which section and what to copy across. The Chinese entrance has one
section more, its glossary (the last section, "## 术语表"), which has no English twin; its
names must exist in the code or the English READMEs.
"""
import re
from collections import Counter
from pathlib import Path

import pytest

from readme_blocks import (CHINESE, ENGLISH, GLOSSARY_HEADING, GUIDES, INLINE_CODE, ROOT, TWINS,
                           rel, sections, twin_sections)


def fix(twin):
    return f"update {rel(twin.chinese)} (or {rel(twin.english)}) so that the two say the same"


def test_the_chinese_entrance_ends_with_its_glossary():
    chinese = sections(CHINESE)
    glossary = [s for s in chinese if "#" * s.level + " " + s.heading == GLOSSARY_HEADING]
    assert glossary == chinese[-1:], f"README.zh-CN.md must end with its glossary, {GLOSSARY_HEADING}"


def test_every_readme_has_its_twin_listed():
    """A README*.md anywhere in the project (a new guide, a new translation) is one of the
    twins, so none escapes these tests."""
    found = {p for p in ROOT.rglob("README*.md")
             if not any(part.startswith(".") or part.endswith(".egg-info")
                        for part in p.relative_to(ROOT).parts)}
    listed = {p for t in TWINS for p in (t.english, t.chinese)}
    assert found == listed, (f"not in TWINS (tests/docs/readme_blocks.py): "
                             f"{sorted(map(rel, found - listed))}; missing: {sorted(map(rel, listed - found))}")


@pytest.mark.parametrize("twin", TWINS, ids=lambda t: t.name())
def test_each_readme_links_to_its_twin_at_the_top(twin):
    for path, other in ((twin.english, twin.chinese), (twin.chinese, twin.english)):
        top = path.read_text(encoding="utf-8").split("\n")[:5]
        assert any(f"]({other.name})" in line for line in top), f"{rel(path)} links to {other.name}"


@pytest.mark.parametrize("twin", TWINS, ids=lambda t: t.name())
def test_same_headings(twin):
    english, chinese = twin_sections(twin)
    assert [s.level for s in english] == [s.level for s in chinese], (
        f"heading levels differ:\n  {rel(twin.english)}: "
        + " ".join(f"{'#' * s.level}{s.heading[:12]}" for s in english)
        + f"\n  {rel(twin.chinese)}: "
        + " ".join(f"{'#' * s.level}{s.heading[:12]}" for s in chinese) + f"\n{fix(twin)}")


def section_pairs():
    out = []
    for twin in TWINS:
        english, chinese = twin_sections(twin)
        out += [pytest.param(twin, e, c, id=f"{twin.name()}-{i}-{e.heading[:30] or 'top'}")
                for i, (e, c) in enumerate(zip(english, chinese))]
    return out


@pytest.mark.parametrize("twin, english, chinese", section_pairs())
def test_same_code_blocks(twin, english, chinese):
    ours = [(b.lang, b.text) for b in english.code]
    theirs = [(b.lang, b.text) for b in chinese.code]
    for i, block in enumerate(ours):
        assert i < len(theirs) and theirs[i] == block, (
            f"{rel(twin.english)} line {english.line} '{english.heading}': code block {i + 1} (line "
            f"{english.code[i].line}) differs in {rel(twin.chinese)} (section at line {chinese.line}); "
            f"{fix(twin)}")
    assert len(ours) == len(theirs), (f"{rel(twin.chinese)} line {chinese.line} has extra code "
                                      f"blocks; {fix(twin)}")


@pytest.mark.parametrize("twin, english, chinese", section_pairs())
def test_same_facts(twin, english, chinese):
    ours, theirs = english.facts(), chinese.facts()
    for kind in ours:
        a, b = ours[kind], theirs[kind]
        if a != b:
            if isinstance(a, list):
                detail = (f"only in {rel(twin.english)}: {list((Counter(a) - Counter(b)).elements())}; "
                          f"only in {rel(twin.chinese)}: {list((Counter(b) - Counter(a)).elements())}")
            else:
                detail = f"{rel(twin.english)} {a} vs {rel(twin.chinese)} {b}"
            pytest.fail(f"{kind} differ in '{english.heading}' ({rel(twin.english)} line "
                        f"{english.line}, {rel(twin.chinese)} line {chinese.line}): {detail}; {fix(twin)}")


def test_glossary_names_exist():
    """Every name in the glossary's code column is in the code or in the English READMEs."""
    glossary = sections(CHINESE)[-1]
    rows = [l for l in glossary.prose if l.startswith("|") and not l.startswith("|---")][1:]
    assert len(rows) >= 40
    corpus = "".join(p.read_text(encoding="utf-8") for p in [ENGLISH] + GUIDES) + "".join(
        p.read_text(encoding="utf-8") for d in ("minigrad", "attention", "models")
        for p in (ROOT / d).rglob("*.py"))
    missing = [name for row in rows for m in INLINE_CODE.finditer(row.split("|")[3])
               if (name := m.group(2)) not in corpus and name.split()[0] not in corpus]
    assert not missing, f"glossary names found nowhere in the code or the English READMEs: {missing}"
    english_terms = [row.split("|")[1].strip() for row in rows]
    assert all(re.fullmatch(r"[A-Za-z].*", t) for t in english_terms)
