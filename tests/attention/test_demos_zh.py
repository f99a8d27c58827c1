"""``python -m attention --lang zh``: every demo's explanations, table headers and labels, and
``--list``, in Chinese; without ``--lang`` (the suite's locale is English) the output is the
English of the READMEs' transcripts, unchanged.

One Chinese run of all the demos is shared by the tests (the three demos that train the toy
model share one training); the hierarchical demo's two branches ("by elimination") are checked
on made-up figures, without training.
"""
import contextlib
import functools
import io
import re

import numpy as np
import pytest

from attention.__main__ import main
from attention.demos import DEMOS, hard, hierarchical, temperature, untrained
from attention.demos.toy import train_toy
from minigrad import i18n_build as catalogs
from minigrad import i18n
from minigrad.draw.common import columns

CJK = re.compile(r"[\u4e00-\u9fff]")
# five or more English words of 2+ letters in a row: an untranslated sentence
ENGLISH = re.compile(r"(?<![\w/.])[A-Za-z]{2,}(?:[ ,;:()'-]+[A-Za-z]{2,}){4}(?![\w/.])")
FROM_MINIGRAD = ("computation graph: ",)  # the graph drawing's own header (minigrad's catalog)
SEPARATOR = "\n" + "=" * 76 + "\n"


def run(*argv) -> str:
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            assert main(list(argv)) == 0
    finally:
        i18n.set_language(None)  # back to the locale (English in the suite)
    return out.getvalue()


@pytest.fixture(scope="module")
def chinese():
    """{demo name: its printed text} of one ``--lang zh --no-svg`` run of every demo."""
    once = functools.lru_cache(maxsize=None)(train_toy)  # same seed, same model: train it once
    with pytest.MonkeyPatch.context() as patch:
        for module in (untrained, temperature, hard):
            patch.setattr(module, "train_toy", once)
        blocks = run("--lang", "zh", "--no-svg").split(SEPARATOR)
    assert len(blocks) == len(DEMOS)
    return dict(zip(DEMOS, blocks))


def test_every_demo_names_its_source_and_explains_in_chinese(chinese):
    for name, text in chinese.items():
        assert text.strip().startswith("来源 0"), name
        assert len(CJK.findall(text)) > 20, name


@pytest.mark.parametrize("name, sentences", [
    ("004-example", ["相同的源向量，不同的解码器状态 -> 不同的读取", "上下文向量 c_A = Σ_j α_j h_j",
                     "所以状态对权重毫无影响", "去掉 tanh：α(I) = α(like) = α(cats)"]),
    ("004-gradient", ["（由 ∂α_k/∂e_j = α_k(δ_kj - α_j) 得到）", "（分数的共同平移不改变任何结果）",
                      "所以只有 g 沿 (1, 1)\n的分量会改变分数。"]),
    ("004-graph", ["e (分数) = matmul", "分数方框上的 ∂L/∂e_j（由反向传播得到）"]),
    ("004-hessian", ["L = g·c 对分数的黑塞矩阵", "各行之和（平移不变性）"]),
    ("000-scaling", ["这只对尾部成立", "让 softmax 饱和的并不是单个分数的大小",
                     "softmax 饱和：即来源 000 所说的梯度消失"]),
    ("000-path-length", ["RNN 的梯度按几何级数缩小", "* tanh RNN（n - 1 步）   o 注意力（1 次读取）"]),
    ("000-alignment", ["未训练：平均最大 α", "训练后：平均最大 α", "即对角线。"]),
    ("003-temperature", ["除数变小了（来源 003 的括号里说的是“变大”）", "除以 √d_k 就是温度 √d_k"]),
    ("003-hierarchical", ["层次注意力（先词级，再句级）", "权重合理吗（003 §6，经验四）？"]),
    ("004-hard", ["导数不存在", "正是软注意力\n  让反向传播能够学会该看哪里。",
                  "  训练后     token 准确率：软读取 "]),
])
def test_the_explanations_are_the_reviewed_chinese(chinese, name, sentences):
    for sentence in sentences:
        assert sentence in chinese[name], (name, sentence)


def test_no_line_is_left_in_english(chinese):
    for name, text in chinese.items():
        for line in text.splitlines():
            if not line.startswith(FROM_MINIGRAD):
                assert not ENGLISH.search(line), (name, line)


def test_the_table_headers_are_translated_and_still_line_up(chinese):
    lines = chinese["004-example"].splitlines()
    head, row = next(line for line in lines if "权重" in line and "分数" in line), lines[6]
    assert row.startswith("I ") and columns(head[:head.index("分数")]) == row.index("1.5232")
    lines = chinese["000-scaling"].splitlines()
    head = next(line for line in lines if line.startswith("  分数 "))
    row = next(line for line in lines if line.startswith("  q·k "))
    # right-aligned columns: each header ends where the numbers under it end
    for label, value in (("行跨度", "31.7"), ("最大 α", "0.875"), ("熵", "0.318")):
        assert columns(head[:head.index(label) + len(label)]) == row.index(value) + len(value)


def test_the_pictures_files_are_announced_in_chinese(tmp_path):
    text = run("--lang", "zh", "--out", str(tmp_path), "004-hessian", "000-scaling", "004-graph")
    assert f"已写入 {tmp_path / '004_graph.svg'}" in text


def test_list_and_help_are_in_chinese():
    lines = run("--lang", "zh", "--list").splitlines()
    have = catalogs.messages("attention")
    assert lines == [f"{name:<16} {have[demo.about]}" for name, demo in DEMOS.items()]
    help_text = io.StringIO()
    with contextlib.redirect_stdout(help_text), pytest.raises(SystemExit):
        main(["--lang", "zh", "--help"])
    i18n.set_language(None)
    assert "列出各个演示并退出" in help_text.getvalue()


def test_every_demo_description_has_a_translation():
    have = catalogs.messages("attention")
    for name, demo in DEMOS.items():
        assert have.get(demo.about) and CJK.search(have[demo.about]), name


def test_without_lang_the_output_is_english_as_before():
    assert run("--list").splitlines() == [f"{name:<16} {demo.about}"
                                         for name, demo in DEMOS.items()]
    text = run("--no-svg", "004-gradient", "000-scaling")
    assert not CJK.search(text)
    assert run("--lang", "en", "--no-svg", "004-gradient", "000-scaling") == text
    for line in ("  source  α_j      ∂c/∂e_j = α_j(h_j - c)   ∂L/∂e_j: formula   finite diff.   "
                 "autograd",
                 "  scores                  row range  largest α   entropy  rows max α > .99   "
                 "‖∂α/∂e‖_F",
                 "  there holds for the tails only, and the size of a single score is not what "
                 "saturates"):
        assert line in text.splitlines()


def _figures(by_class):
    """Made-up held-out figures of ``hierarchical.train``: β and α on the evidence per class,
    and two documents to draw."""
    K, L = hierarchical.K, hierarchical.L
    alpha, beta = np.full((K, L), 1 / L), np.full(K, 1 / K)
    example = (np.zeros((K, L), int), 1, alpha, beta, np.array([0, 0]))
    return None, {"accuracy": 1.0, "sentence_weight": 0.8, "word_weight": 0.8,
                  "by_class": by_class, "examples": [example, example]}


@pytest.mark.parametrize("language", ["en", "zh"])
def test_the_hierarchical_verdict_names_the_class_found_by_elimination(monkeypatch, language):
    i18n.set_language(language)
    try:
        monkeypatch.setattr(hierarchical, "train", lambda seed: _figures([(0.2, 0.3)] +
                                                                         [(1.0, 1.0)] * 3))
        elimination = hierarchical.hierarchical().text
        monkeypatch.setattr(hierarchical, "train", lambda seed: _figures([(1.0, 1.0)] * 4))
        all_on = hierarchical.hierarchical().text
    finally:
        i18n.set_language(None)
    on, off, verdict = {"en": ("For class(es) {} β > 0.9", "For class(es) [0] they are not",
                               "they are not"),
                        "zh": ("类别 {} 的 β > 0.9", "类别 [0] 的则不然", "的则不然")}[language]
    assert on.format([1, 2, 3]) in elimination and off in elimination
    assert on.format([0, 1, 2, 3]) in all_on and verdict not in all_on
