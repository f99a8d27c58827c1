"""``python -m models --lang zh``: the main demo, train, inspect, translate, graph and ``--help``
speak Chinese -- progress and epoch lines, summaries, explanations, table headers, "wrote FILE"
-- with the tables' columns aligned in terminal columns (a Chinese character takes two); without
``--lang`` (the suite's locale is English) the same commands print the English of today.

One tiny copy run (trained in Chinese, and once in English to compare) serves inspect and
translate; the demo runs once, small (200 dates, one epoch), in Chinese.
"""
import contextlib
import io
import re

import pytest

from minigrad import i18n_build as catalogs
from minigrad import i18n
from minigrad.draw.common import columns
from minigrad.runtime import blas
from models.app import dates
from models.app.cli import main, plan_line
from models.app.compare import scores_table
from models.app.compare_models import models_table
from models.app.diagnose import NAMES, VERDICTS
from models.app.options import USAGE, given_train_options, language_of
from models.app.pictures import by_length_table
from models.app.runs import SIGNALS
from models.app.train import Trainer, TrainConfig

CJK = re.compile(r"[\u4e00-\u9fff]")
# five or more English words of 2+ letters in a row: an untranslated sentence
ENGLISH = re.compile(r"(?<![\w/.'-])[A-Za-z]{2,}(?:[ ,;:()]+[A-Za-z]{2,}){4}(?![\w/.'-])")
TINY = ["--task", "copy", "--epochs", "2", "--n-train", "200", "--n-val", "20", "--embed", "8",
        "--hidden", "16", "--dec-hidden", "16", "--attn", "16"]


def run(*argv) -> tuple:
    """(exit status, stdout, stderr) of ``python -m models argv`` run here, in one BLAS thread
    (``--help`` exits: its status)."""
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), blas.threads(1):
            try:
                status = main(list(argv))
            except SystemExit as e:
                status = e.code
    finally:
        i18n.set_language(None)  # back to the locale (English in the suite)
    return status, out.getvalue(), err.getvalue()


def english_left(text: str) -> list:
    return [line for line in text.splitlines() if ENGLISH.search(line)]


@pytest.fixture
def zh():
    i18n.set_language("zh")
    yield
    i18n.set_language(None)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """{"zh": (folder, output), "en": (folder, output)} of the same tiny train run."""
    found = {}
    for lang in ("zh", "en"):
        folder = tmp_path_factory.mktemp(f"copy-{lang}") / "run"
        chosen = ["--lang", "zh"] if lang == "zh" else []  # else the locale: English
        argv = ["train"] + TINY + ["--out", str(folder)] + chosen
        status, out, _ = run(*argv)
        assert status == 0
        found[lang] = folder, out
    return found


def test_train_speaks_chinese_and_english_is_unchanged(runs):
    (zh_dir, zh), (en_dir, en) = runs["zh"], runs["en"]
    first = "copy：200 个训练数据对和 20 个留出数据对；bahdanau 解码器，additive 评分函数，"
    assert zh.startswith(first) and "个参数（float32）" in zh.splitlines()[0]
    assert re.search(r"^epoch   2/2  损失 \d\.\d{4}  token 准确率 +\d+\.\d%  完全匹配率\(留出集\) +"
                     r"\d+\.\d%  +\d+ 样本/秒  已用 \d:\d\d  剩余 ≤\d:\d\d$", zh, re.M)
    assert "训练 2 个 epoch 后停止，留出集完全匹配率为" in zh
    assert f"检查点：{zh_dir}（损失曲线：{zh_dir / 'training.svg'}）" in zh
    assert not english_left(zh), english_left(zh)
    assert en.startswith("copy: 200 training and 20 held-out pairs; bahdanau decoder, additive "
                         "score, ")
    assert re.search(r"^epoch   2/2  loss \d\.\d{4}  tok acc +\d+\.\d%  exact\(val\) +\d+\.\d%  "
                     r"+\d+ ex/s  \d:\d\d elapsed  ETA ≤\d:\d\d$", en, re.M)
    assert "stopped after 2 epochs at " in en and f"checkpoint: {en_dir}  (loss curve: " in en
    assert not CJK.search(en)


def test_the_language_may_come_before_or_after_the_subcommand_and_is_no_train_option(runs):
    folder, _ = runs["zh"]
    status, _, err = run("train", "--task", "copy", "--n-train", "200", "--out", str(folder),
                         "--lang", "zh")  # not --overwrite
    assert status == 2 and err.startswith(f"错误：train：{folder} 中已有检查点。要继续那次运行：")
    status, out, _ = run("--lang", "zh", "train", "--resume", str(folder))  # --lang: no setting
    assert status == 0 and re.search(r"中是一次已结束的运行（在第 2 个 epoch、第 \d+ 步之后）："
                                     r"没有可恢复的", out)
    assert given_train_options(["--lang", "zh", "train", "--lang", "zh"]) == set()
    assert language_of(["translate", "x", "--lang=zh"]) == "zh"
    assert language_of(["--lang"]) is None and language_of(["--lang", "fr"]) is None


def test_a_bare_train_says_what_it_does_in_chinese(zh):
    trainer = Trainer.create(TrainConfig(task="copy", n_train=640, n_val=50, epochs=3),
                             dict(embed=8, hidden=8, dec_hidden=8, attn=8))
    assert plan_line(trainer, 150.0) == (
        "在 copy 上训练 bahdanau：3 个 epoch，每个 640 个数据对，在这台机器上约 2 分钟（按几个批次"
        "测得，也可能更短：留出集完全匹配率达到 99% 时就停止）；Ctrl-C 停止训练并保留检查点")
    assert "约 1 分钟" in plan_line(trainer, 20.0)


def test_inspect_aligns_its_chinese_table(runs):
    folder, _ = runs["zh"]
    status, out, _ = run("inspect", str(folder), "--n", "20", "--no-svg", "--lang", "zh")
    assert status == 0
    assert f"{folder}：copy，20 个留出数据对，教师强制" in out
    assert "结论：健康：每项检查都通过" in out or "结论：有异常（" in out
    assert "每个解码步上 α_t 的熵（1 = 均匀）" in out and "每个编码器位置 j 上的 ‖∂L/∂h_j‖" in out
    rows = [line for line in out.splitlines() if line.startswith("  ") and
            any(f"  {v}  " in line for v in ("通过", "异常", "参考"))]
    assert len(rows) == len(NAMES)
    for row in rows:  # the verdict starts at the same terminal column in every row
        at = min(row.find(f"  {v}  ") for v in ("通过", "异常", "参考") if f"  {v}  " in row)
        assert columns(row[:at]) == 2 + 27 + 1 + 16, row
    assert not english_left(out), english_left(out)


def test_translate_and_graph_say_what_they_wrote(runs, tmp_path):
    folder, _ = runs["zh"]
    status, out, err = run("translate", str(folder), "abc", "ab%", "--svg", str(tmp_path),
                           "--lang", "zh")
    assert status == 0 and f"热力图已写入 {tmp_path / 'alignment-1.svg'}" in out
    assert "\n  警告：未知字符 '%' 按 <unk> 读取\n" in out and err == ""  # beside its text
    status, out, _ = run("--lang", "zh", "graph", "--fmt", "text", "--out", str(tmp_path),
                         "--length", "4", "--batch", "2", "--vocab", "5")
    assert status == 0 and f"已写入 {tmp_path / 'gru_step.txt'}" in out
    assert "Seq2seq 训练损失（B=2，S=T=4，词表 5），折叠显示：每次模块调用、每个解码步各一个方框" in out
    status, _, err = run("translate", str(folder), "abc", "--beam", "100000", "--lang", "zh")
    assert status == 2 and err == "错误：translate：--beam 必须在 0..1000 之间，得到的是 100000\n"
    status, _, err = run("translate", str(folder), "a" * 200, "--beam", "1000", "--lang", "zh")
    assert status == 2 and err == ("错误：translate：--beam × 最长文本的长度最多为 100,000，得到的是 "
                                   "1000 × 200 = 200,000\n")


@pytest.mark.slow
def test_the_main_demo_in_chinese(tmp_path):
    status, out, _ = run("--lang", "zh", "demo", "--n-train", "200", "--epochs", "1", "--out",
                         str(tmp_path / "dates"))
    assert status == 0
    for sentence in ("训练 Bahdanau 注意力（双向 GRU 编码器，加性评分函数）来规范化日期：\n200 个训练数据对，",
                     "；在 1000 个留出日期上完全匹配率达到 99% 时停止。",
                     "完全匹配率：1000 个生成的留出日期上 ",
                     "没见过的日期。行：输出字符；列：输入字符（<eos> = 序列结束）；\n颜色深的格子是",
                     f"热力图已写入 {tmp_path / 'dates' / 'alignment-1.svg'}",
                     f"；试试：python -m models translate {tmp_path / 'dates'} \"3rd of May 1999\""):
        assert sentence in out, sentence
    assert len(CJK.findall(out)) > 100
    assert not english_left(out), english_left(out)


def test_help_speaks_chinese_wrapped_to_the_terminal(monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    status, out, _ = run("--lang", "zh", "--help")
    assert status == 0 and "``python -m models``：训练、翻译和比较；不带参数时运行主演示。" in out
    assert "    demo                主演示（不带参数时运行的就是它）" in out
    status, out, _ = run("train", "--help", "--lang", "zh")
    text = " ".join(out.split())
    for option in ("--epochs EPOCHS 最多训练这么多个 epoch（默认：20）",
                   "--lr LR Adam 的步长（cosine 时为峰值）（默认：0.003）",
                   "--score {additive,concat,dot,general,local-m,local-p,scaled-dot} 注意力评分函数"
                   "（默认：bahdanau 用 additive，luong 用 general） --embed",  # said once
                   "--lang {en,zh,zh-TW} 消息的语言：en、zh（简体）或 zh-TW（繁体）；默认：由 locale 决定"):
        assert option in text, option
    wide = [line for line in out.splitlines() if CJK.search(line) and columns(line) > 80]
    assert not wide, wide
    status, out, _ = run("translate", "--help", "--lang", "zh")
    assert "  月份名称     3 May 2020 · 3rd May, 2020" in out and "不编造任何东西：" in out


def test_the_tables_align_in_chinese(zh):
    scores = {"dot (Luong)": dict(exact=0.5, token_acc=0.91, epoch=3, seconds=12.3, params=46936),
              "additive (Bahdanau)": dict(exact=1.0, token_acc=1.0, epoch=2, seconds=1.0,
                                          params=60888)}
    lines = scores_table(scores).splitlines()
    assert lines[0].split() == ["评分函数", "完全匹配率", "token", "准确率", "保留的", "epoch",
                                "训练时间", "参数量"]
    assert len({columns(line) for line in lines}) == 1, lines  # every column right-aligned
    models = {name: dict(params=55123, seconds=12.3, to_target=t, exact=0.98, speed=1234.0,
                         by_length={3: 1.0, 10: 0.9, 12: 0.5})
              for name, t in (("Bahdanau", 4.5), ("Transformer", None))}
    lines = models_table(models, 10).splitlines()
    assert "未达到" in lines[3] and "（* 比训练中的更长）" in lines[0]
    assert len({columns(line) for line in lines[1:]}) == 1, lines  # the lengths over their cells
    results = {"no attention": {4: 0.9}, "attention": {4: 1.0, 8: 0.95}}
    lines = by_length_table(results).splitlines()
    assert lines[0].split() == ["长度", "无注意力", "有注意力"]
    assert len({columns(line) for line in lines}) == 1, lines


# Texts kept as data, translated where they are shown (the literal-scan test cannot see them).
DATA_TEXTS = [USAGE, dates.HELP, *NAMES, *VERDICTS, *SIGNALS.values(), "no attention",
              "attention"]


def test_every_data_text_has_a_translation():
    have = catalogs.messages("models")
    missing = [t for t in DATA_TEXTS if not have.get(t)]
    assert not missing, missing
