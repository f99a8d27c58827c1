"""minigrad's demo commands in Chinese (``--lang zh``): ``python -m minigrad.higher``,
``python -m minigrad.gradcheck`` and ``python -m minigrad.viz``; their English output as it
was; and the exercises' texts (kept as data, translated where the checker shows them), each
with a translation that keeps its formulas and code."""
from __future__ import annotations

import contextlib
import io
import re

import numpy as np
import pytest

import minigrad as mg
from minigrad import i18n_build as catalogs
from minigrad import gradcheck_cases, higher, i18n
from minigrad.draw.common import columns
from minigrad.exercises import all_exercises
from minigrad.tensor import Tensor
from minigrad.viz.__main__ import main as viz_main

CJK = re.compile(r"[\u4e00-\u9fff]")
WORD = re.compile(r"[A-Za-z]{2,}[,.:;)]?")


@pytest.fixture(autouse=True)
def english_after():
    yield
    i18n.set_language("en")


def longest_run(line: str) -> int:
    """The most consecutive English words of 2+ letters in ``line``; identifiers, formulas and
    paths break a run."""
    best = run = 0
    for token in line.split():
        run = run + 1 if WORD.fullmatch(token) else 0
        best = max(best, run)
    return best


def english_runs(text: str) -> list:
    """Lines with 5 or more consecutive English words (an untranslated sentence)."""
    return [line for line in text.splitlines() if longest_run(line) >= 5]


# ---- python -m minigrad.higher -------------------------------------------------------------

@pytest.fixture(scope="module")
def higher_runs(tmp_path_factory):
    """The demo's output in English and in Chinese, each with its two SVGs."""
    out = {}
    for lang in ("en", "zh"):
        folder = tmp_path_factory.mktemp(lang)
        text = io.StringIO()   # (a module-scoped fixture cannot use capsys)
        with contextlib.redirect_stdout(text):
            assert higher.main(["--lang", lang, "--out", str(folder)]) == 0
        out[lang] = (text.getvalue(), folder)
    i18n.set_language("en")
    return out


def test_higher_in_chinese(higher_runs):
    text, folder = higher_runs["zh"]
    for line in ("tanh 及其前六阶导数（每条曲线缩放到 max |·| = 1）",
                 "逻辑回归损失的 Hessian-向量积（N = 40，d = 3）：",
                 "损失 − 最小值，逐次迭代：  牛顿法（H 由 Hessian-向量积组成）  对比  GD（lr 1）"):
        assert line in text.splitlines()
    assert re.search(r"与闭式解 P'\(t\)\(1 − t²\) 的最大差距：\d\.\de-\d\d", text)
    assert re.search(r"max \|两次反向传播 − 显式公式\| = \d\.\de-\d\d", text)
    assert "已写入 " in text and not english_runs(text)
    # the three rows of the Hessian-vector product line up in terminal columns
    rows = [line for line in text.splitlines() if line.endswith("+0.092502860")]
    assert len(rows) == 3 and len({columns(r) for r in rows}) == 1
    svg = (folder / "newton_vs_gd.svg").read_text(encoding="utf-8")
    assert "梯度下降" in svg and "牛顿法" in svg and "迭代次数" in svg
    assert "及其前六阶导数" in (folder / "tanh_derivatives.svg").read_text(encoding="utf-8")


def test_higher_in_english_is_unchanged(higher_runs):
    text, folder = higher_runs["en"]
    lines = text.splitlines()
    assert lines[0] == "tanh and its first six derivatives (each scaled to max |·| = 1)"
    for line in ("Hessian-vector product of the logistic loss (N = 40, d = 3):",
                 "  double backward                        +0.237472203  -0.577126428  "
                 "+0.092502860",
                 "  explicit Xᵀ diag(p(1−p)) X / N + λI    +0.237472203  -0.577126428  "
                 "+0.092502860",
                 "loss − min, by iteration:  Newton (H from Hessian-vector products)  vs  GD "
                 "(lr 1)",
                 f"wrote {folder}/tanh_derivatives.svg and {folder}/newton_vs_gd.svg"):
        assert line in lines
    assert re.search(r"\nlargest gap to the closed forms P'\(t\)\(1 − t²\): \d\.\de-\d\d\n\n"
                     r"Hessian", text)
    assert re.search(r"\n  max \|double backward − explicit\| = \d\.\de-\d\d\n\nloss", text)
    assert not CJK.search(text)
    assert "gradient descent" in (folder / "newton_vs_gd.svg").read_text(encoding="utf-8")


def test_higher_refuses_a_missing_folder_in_chinese(tmp_path, capsys):
    with pytest.raises(SystemExit):
        higher.main(["--lang", "zh", "--out", str(tmp_path / "nowhere")])
    assert "不是文件夹" in capsys.readouterr().err


# ---- python -m minigrad.gradcheck ----------------------------------------------------------

def _square_with_a_bug(x):
    """x² whose VJP says 3x."""
    return Tensor._from_op(x.data ** 2, (x,), lambda xp, g, out, x: (3 * g * x,), "bug")


SMALL_TABLE = lambda rng: [("tanh", mg.tanh, [np.ones(2)]),                 # noqa: E731
                           ("bug", _square_with_a_bug, [np.ones(2)]),
                           ("raises", lambda x: mg.reshape(x, (3,)), [np.ones(2)])]


def test_gradcheck_table_in_chinese(monkeypatch, capsys):
    assert gradcheck_cases.main(["--lang", "zh"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["算子", "形状", "最大绝对误差", "最大相对误差", "通过"]
    assert len(lines[1]) == columns(lines[0])
    assert lines[-1] == f"全部 {len(lines) - 4} 个算子通过" and not english_runs("\n".join(lines))
    # the numbers sit under their (wider) headers: each row ends in the same column
    ends = {columns(line) for line in lines[2:-2]}
    assert ends == {columns(lines[0])}

    monkeypatch.setattr(gradcheck_cases, "cases", SMALL_TABLE)
    assert gradcheck_cases.main(["--lang", "zh"]) == 1
    out = capsys.readouterr().out
    rows = {line.split()[0]: line for line in out.splitlines() if line.strip()}
    assert rows["raises"].split()[1:3] == ["(2,)", "出错"] and "ValueError: reshape" in out
    assert rows["tanh"].endswith("  通过")
    assert out.splitlines()[-1] == "3 个算子中有 2 个不通过"
    assert gradcheck_cases.main(["--lang", "zh", "--order", "2"]) == 1  # only "raises" fails
    assert capsys.readouterr().out.splitlines()[-1] == "3 个算子中有 1 个不通过（二阶导数）"


def test_gradcheck_table_in_english_is_unchanged(monkeypatch, capsys):
    monkeypatch.setattr(gradcheck_cases, "cases", SMALL_TABLE)
    assert gradcheck_cases.main([]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[:2] == [
        "op                           shapes                     max abs err max rel err  ok",
        "-" * 83]
    assert re.fullmatch(r"tanh {25}\(2,\) {23}[ \d.e+-]{11} [ \d.e+-]{11}  ok", lines[2])
    assert lines[3].endswith("  FAIL")
    assert lines[4].startswith("raises                       (2,)                             "
                               "error              FAIL  ValueError: reshape")
    assert lines[-1] == "2 of 3 ops failed"


# ---- python -m minigrad.viz ----------------------------------------------------------------

def test_viz_in_chinese_and_in_english(tmp_path, capsys):
    assert viz_main(["--lang", "zh"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "micrograd 的神经元：o = tanh(x1·w1 + x2·w2 + b)"
    assert lines[-1] == "更多计算图：python -m attention 004-graph，python -m models graph"
    assert viz_main(["--lang", "zh", "--fmt", "svg", "--out", str(tmp_path)]) == 0
    assert capsys.readouterr().out.splitlines()[0] == f"已写入 {tmp_path}/neuron.svg"
    assert "micrograd 的神经元" in (tmp_path / "neuron.svg").read_text(encoding="utf-8")
    # (the graph's own lines, "computation graph: …", are minigrad/viz/render.py's)

    assert viz_main(["--fmt", "dot", "--out", str(tmp_path)]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"wrote {tmp_path}/neuron.dot",
        "more graphs: python -m attention 004-graph, python -m models graph"]
    assert viz_main([]) == 0
    out = capsys.readouterr().out
    assert out.startswith("micrograd's neuron: o = tanh(x1·w1 + x2·w2 + b)\n")
    assert not CJK.search(out)


# ---- the exercises' texts ----------------------------------------------------------------

IDENTIFIERS = {"tanh", "sigmoid", "matmul", "softmax"}  # titles that are names: kept


def exercise_texts() -> list:
    """Every text an exercise keeps as data: title, hints, mistakes, nan_hint, moral."""
    return [t for e in all_exercises()
            for t in (e.title, *e.hints, *(m.text for m in e.mistakes), e.nan_hint, e.moral)
            if t]


def test_every_exercise_text_is_translated_and_keeps_its_code():
    have = catalogs.messages("minigrad")
    texts = exercise_texts()
    assert len(texts) >= 125
    for text in texts:
        zh = have.get(text)
        assert zh, f"no translation: {text!r}"
        if text in IDENTIFIERS:
            assert zh == text
            continue
        assert CJK.search(zh) or longest_run(text) < 2, (text, zh)  # prose is translated
        for code in re.findall(r"`[^`]+`|np\.\w+\([^()]*\)|\w+=\w+", text):
            assert code in zh, (code, text, zh)      # code and keywords verbatim
        for symbol in "⊙Σ∂√σαᵀ²δ":
            assert zh.count(symbol) == text.count(symbol), (symbol, text, zh)


def test_the_checker_shows_an_exercise_in_chinese():
    _ = i18n.translator("minigrad")
    mul = all_exercises()[0]
    i18n.set_language("zh")
    assert _(mul.title) == "带广播的 mul"
    assert _(mul.hints[1]).startswith("逐元素地，d(a ⊙ b)/da = b")
    i18n.set_language("en")
    assert _(mul.title) == "mul with broadcasting"


def test_the_measurements_lessons_in_both_languages():
    sqrt_d, correlated = [e for e in all_exercises() if e.lesson]
    def lessons():
        return (sqrt_d.lesson({"q": np.zeros((3, 64))}, {}, [63.91, 1.0012]),
                correlated.lesson({}, {"rho": 0.9}, [None, np.float64(0.0345)]))
    i18n.set_language("zh")
    assert lessons() == ("d = 64：var(q·k) = 63.9 ≈ d，var(q·k/√d) = 1 ≈ 1",
                         "ρ = 0.9：两个键的权重平均相差 0.035")
    i18n.set_language("en")
    assert lessons() == ("d = 64: var(q·k) = 63.9 ≈ d, var(q·k/√d) = 1 ≈ 1",
                         "ρ = 0.9: the two keys' weights differ by 0.035 on average")
