"""The walkthroughs' Markdown in Chinese: each English walkthrough ``source_NNN.py`` and the
catalog of its comment blocks ``source_NNN.zh.po`` (``models/app/tours/zh.py``), from which
``python -m models.app.tours.zh 004`` writes the Chinese walkthrough ``source_NNN_zh.py``. A block
whose English changed has no translation: the first test names it. (Running the walkthroughs in
Chinese: test_tours_zh.py, in the slow run.)
"""
from __future__ import annotations

import re

import pytest

from models.app.tours import TOURS, zh

WORD = re.compile(r"^[A-Za-z]{2,}[,.;:!?)]*$")    # an English word: letters, then punctuation
CJK = re.compile(r"[\u4e00-\u9fff]")


def english_run(words) -> int:
    """The longest run of consecutive English words among whitespace-separated ``words``."""
    longest = current = 0
    for word in words:
        current = current + 1 if WORD.match(word.lstrip("(\"'")) else 0
        longest = max(longest, current)
    return longest


def prose(line: str) -> list:
    """The words of a line, code in backticks left out (identifiers and commands)."""
    return re.sub(r"`[^`]*`", " ", line).split()


@pytest.mark.parametrize("name", sorted(TOURS))
def test_every_markdown_cell_has_its_reviewed_translation(name):
    stale = zh.stale(name)
    assert not stale, (f"{len(stale)} comment block(s) of {TOURS[name][0]} without a translation "
                       f"in {zh.catalog_path(name).name} (the English changed?): "
                       + "; ".join(b.where(name) for b in stale)
                       + f". Run python -m models.app.tours.zh {name} --update, then translate "
                         "the empty msgstr (the old entry is kept below, commented out with #~)")
    assert not zh.unused(name), (f"{zh.catalog_path(name).name} translates blocks that "
                                 f"{TOURS[name][0]} no longer has: run python -m "
                                 f"models.app.tours.zh {name} --update")


@pytest.mark.parametrize("name", sorted(TOURS))
def test_the_chinese_walkthrough_is_the_english_code_with_its_markdown_translated(name):
    english = zh.english_path(name).read_text(encoding="utf-8")
    chinese = zh.chinese(name)

    def code(text):
        return [line for line in text.split("\n") if not zh.is_comment(line)]
    first = code(english).index("# %%") + 1  # where the Chinese file chooses its language
    assert code(chinese) == code(english)[:first] + zh.SPEAK_CHINESE + code(english)[first:]
    compile(chinese, f"source_{name}_zh.py", "exec")
    have = zh.catalog(name)
    for block in zh.blocks(english):                # a block in English prose is translated
        if english_run(w for line in block.text.split("\n") for w in prose(line)) >= 5:
            assert CJK.search(have[block.text]), f"not translated: {block.where(name)}"
    assert len(zh.blocks(chinese)) == len(zh.blocks(english))


def test_a_changed_english_cell_is_named(tmp_path, monkeypatch):
    english = zh.english_path("004").read_text(encoding="utf-8")
    changed = english.replace("# Where this project differs from the article, the cell says so.",
                              "# Where this project differs from the article, the cell says it.")
    assert changed != english
    (tmp_path / "source_004.py").write_text(changed, encoding="utf-8")
    (tmp_path / "source_004.zh.po").write_bytes(zh.catalog_path("004").read_bytes())
    monkeypatch.setattr(zh, "english_path", lambda name: tmp_path / f"source_{name}.py")
    monkeypatch.setattr(zh, "catalog_path", lambda name: tmp_path / f"source_{name}.zh.po")
    stale = zh.stale("004")
    assert [(b.cell, b.line) for b in stale] == [(1, 2)]
    assert "source_004.py line 2, cell 1 (# %% [markdown])" in stale[0].where("004")
    assert "# Source 004" in zh.chinese("004")             # written, the stale block in English
    assert zh.main(["004", "--update"]) == 1               # the catalog, the new block to fill
    text = (tmp_path / "source_004.zh.po").read_text(encoding="utf-8")
    assert "the cell says it." in text and "#~ " in text and zh.stale("004") == stale


def test_the_command_writes_the_chinese_walkthrough(tmp_path, capsys):
    out = tmp_path / "source_004_zh.py"
    assert zh.main(["004", "--out", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == zh.chinese("004")
    assert "来源 004" in out.read_text(encoding="utf-8") and f"wrote {out}" in capsys.readouterr().out


def test_a_catalog_reads_back_what_it_was_written_with(tmp_path, monkeypatch):
    monkeypatch.setattr(zh, "catalog_path", lambda name: tmp_path / f"source_{name}.zh.po")
    entries = {b.text: f"译文 {k}\n\t\"引号\" \\ 反斜杠" for k, b in
               enumerate(zh.blocks(zh.english_path("000").read_text(encoding="utf-8")))}
    zh.catalog_path("000").write_text(zh.catalog_text("000", entries), encoding="utf-8")
    assert zh.catalog("000") == entries
