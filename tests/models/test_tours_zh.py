"""The walkthroughs in Chinese (``python -m models.app.tours 004 --lang zh``): the English file
runs, printing Chinese (its messages come from the ``models`` catalog), and computes the same
numbers and draws the same figures. Their Markdown in Chinese, the catalogs
``source_NNN.zh.po``, is checked in test_tours_catalog.py (the fast run).

003 trains models (10-50 s), so it is not run in Chinese here.
"""
from __future__ import annotations

import contextlib
import io
import pathlib
import re

import numpy as np
import pytest

from minigrad import i18n_build as catalogs
from minigrad import i18n
from models.app.tours import TOURS, book, path, run
from models.app.tours.__main__ import main
from test_tours_catalog import CJK, english_run  # the same notion of "English prose"

RUN_IN_ZH = ("000", "004")                        # fast enough (a few seconds together)


def test_in_every_language_a_walkthrough_runs_its_english_file():
    try:
        assert path("004").name == "source_004.py"
        i18n.set_language("zh")
        assert path("004").name == "source_004.py"
    finally:
        i18n.set_language(None)


def assert_same(ours, theirs, where: str) -> None:
    """Equal, exactly: arrays, numbers, None, and dicts, lists and tuples of them."""
    if isinstance(theirs, dict):
        assert isinstance(ours, dict) and ours.keys() == theirs.keys(), where
        for key in theirs:
            assert_same(ours[key], theirs[key], f"{where}[{key!r}]")
    elif isinstance(theirs, (list, tuple)):
        assert type(ours) is type(theirs) and len(ours) == len(theirs), where
        for k, (a, b) in enumerate(zip(ours, theirs)):
            assert_same(a, b, f"{where}[{k}]")
    else:
        np.testing.assert_array_equal(ours, theirs, err_msg=where)


def _printed(fn):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        result = fn()
    return result, out.getvalue()


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """name -> (English record, Chinese record, Chinese output, Chinese folder), each run once;
    the Chinese run is the command line's, ``--lang zh``."""
    done = {}

    def get(name: str) -> tuple:
        if name not in done:
            en_dir, zh_dir = (tmp_path_factory.mktemp(f"tour{name}{lang}") for lang in "ez")
            try:
                english, _ = _printed(lambda: run(name, str(en_dir)))
                status, output = _printed(lambda: main([name, "--lang", "zh", "--out",
                                                        str(zh_dir)]))
                assert status == 0, output
                done[name] = english, book.BOOK, output, zh_dir
            finally:
                i18n.set_language(None)            # the locale again (English in the tests)
        return done[name]
    return get


@pytest.mark.parametrize("name", RUN_IN_ZH)
def test_in_chinese_a_walkthrough_computes_what_it_computes_in_english(runs, name):
    english, chinese, _, zh_dir = runs(name)
    assert chinese.sections == english.sections
    assert all(c.agrees for c in chinese.checks)
    assert ([(c.ours, c.source, c.agrees) for c in chinese.checks]
            == [(c.ours, c.source, c.agrees) for c in english.checks])   # the labels are read
    assert_same(chinese.values, english.values, "values")
    names = sorted(pathlib.Path(f).name for f in english.files)
    assert sorted(pathlib.Path(f).name for f in chinese.files) == names
    assert sorted(p.name for p in zh_dir.iterdir()) == names
    for f in chinese.files:
        text = pathlib.Path(f).read_text(encoding="utf-8")
        assert text.startswith("<svg") and text.rstrip().removesuffix(book.MARK).rstrip().endswith("</svg>")


@pytest.mark.parametrize("name", RUN_IN_ZH)
def test_in_chinese_a_walkthrough_prints_chinese(runs, name):
    output = runs(name)[2]
    assert "Try it" not in output and "试一试：" in output
    lines = [line for line in output.splitlines() if english_run(line.split()) >= 5]
    assert not lines, f"English left in the Chinese output of {name}: {lines[:3]}"


def test_004_in_chinese_says_it_in_chinese(runs):
    output = runs("004")[2]
    for sentence in ("  保留信息；让当前状态决定怎样读取它（在 §3-§6 中搭建）",
                     "  I：A 的分数                        我们     1.5232   原文     1.5232   ✓",
                     "  c_B[2]                             我们  -1.392334   原文  −1.392334   ✓",
                     "  教师强制：目标 [4, 5, 6, 2]，解码器输入 [1, 4, 5, 6]（BOS = 1）",
                     "  已写入 ", "16 个数中有 16 个与原文印出的数字逐位一致"):
        assert sentence in output, sentence
    assert "一、从人的注意力，到按需要读取信息\n----------------------------------\n" in output


def test_004_in_english_is_unchanged(runs, tmp_path, capsys):
    assert main(["004", "--no-svg"]) == 0
    output = capsys.readouterr().out
    for sentence in ("\n  Try it: after §6, change STATES['A'] and see which source gains weight: "
                     "the content is the same, the read is not.\n",
                     "  I: A score                         ours     1.5232   source     1.5232   ✓",
                     "  [figure 004_s3_architectures.svg: not written (no output folder)]",
                     "  teacher forcing: targets [4, 5, 6, 2], decoder inputs [1, 4, 5, 6] (BOS = 1)",
                     "\n16 of 16 numbers agree with the source's printed digits\n"):
        assert sentence in output, sentence
    chinese = [line for line in output.splitlines() if CJK.search(line)]
    assert chinese == book.BOOK.sections                  # the source's own titles, no more


def test_list_shows_the_descriptions_in_chinese(capsys):
    try:
        assert main(["--list", "--lang", "zh"]) == 0
    finally:
        i18n.set_language(None)
    shown = capsys.readouterr().out
    have = catalogs.messages("models")
    for name, (_file, about) in TOURS.items():
        assert have.get(about), f"TOURS[{name!r}]'s description has no translation"
        assert f"{name}  {have[about]}\n" in shown
    assert main(["--list"]) == 0
    assert "004  Attention：模型怎样决定该看哪里？ (Bahdanau's soft read" in capsys.readouterr().out


def test_a_translation_keeps_the_spacing_around_its_message():
    """The leading spaces and newlines of a message are the layout (indent, blank line)."""
    def edges(text):
        return re.match(r"^\s*", text).group(), re.search(r"\s*$", text).group()
    tours = catalogs.parse_po(catalogs.folder("models") / "tours.po")
    for msgid, msgstr in tours.items():
        assert edges(msgstr) == edges(msgid), msgid
