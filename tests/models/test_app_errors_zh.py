"""The application's refusals in Chinese (``models/locale/zh/LC_MESSAGES/app_errors.po``): a
checkpoint from anyone, a bad setting, a date that names no year, a run stopped or diverged --
each says the same facts (option, role, value, path) in Chinese, and exactly what it says today
in English. The dates task's text (month names, forms) is data: the same in every language.
"""
from __future__ import annotations

import ast
import json
import pathlib
import re
import string

import numpy as np
import pytest

from minigrad import i18n_build as catalogs
from minigrad import i18n
from models.app import dates
from models.app.checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from models.app.checks import check_state
from models.app.data import batches, make_task
from models.app.datetext import missing, read_dates, wild_accuracy
from models.app.schedule import learning_rate
from models.app.train import TrainConfig, Trainer
from models.decoding import Translation
from models.vocab import Vocab
from model_helpers import tiny_model

ROOT = pathlib.Path(__file__).resolve().parents[2]
MODULES = ("checkpoint", "checks", "data", "dates", "datetext", "train", "train_config",
           "schedule")
CJK = re.compile(r"[\u4e00-\u9fff]")
WORD = re.compile(r"^[A-Za-z]{2,}[,.;:!?)]*$")  # an English word: letters, then punctuation
SRC, TGT = Vocab("abcde"), Vocab("wxyz")        # 9 and 8 ids, as tiny_model expects
TINY_RUN = dict(task="copy", n_train=64, n_val=8, batch_size=16, epochs=2, min_len=3, max_len=5)
TINY = dict(embed=4, hidden=4, dec_hidden=4, attn=4)


@pytest.fixture(autouse=True)
def english_after():
    yield
    i18n.set_language("en")


def refusal(language: str, fn, error=ValueError) -> str:
    """The one-line message ``fn()`` raises, in ``language``."""
    i18n.set_language(language)
    with pytest.raises(error) as e:
        fn()
    message = str(e.value)
    assert "\n" not in message
    return message


def both(fn, error=ValueError) -> tuple:
    return refusal("en", fn, error), refusal("zh", fn, error)


def english_run(text: str) -> int:
    """The longest run of consecutive English words (2+ letters) in ``text``."""
    longest = current = 0
    for word in text.split():
        current = current + 1 if WORD.match(word.lstrip("(\"'")) else 0
        longest = max(longest, current)
    return longest


def own_messages() -> list:
    """Every literal ``_("...")`` of this part's modules."""
    found = []
    for name in MODULES:
        tree = ast.parse((ROOT / "models" / "app" / f"{name}.py").read_text(encoding="utf-8"))
        found += [n.args[0].value for n in ast.walk(tree)
                  if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                  and n.func.id == "_" and n.args and isinstance(n.args[0], ast.Constant)]
    return found


def test_every_refusal_of_these_modules_has_a_chinese_translation_with_its_fields():
    have = catalogs.messages("models")
    fields = lambda t: sorted(f for _, f, _, _ in string.Formatter().parse(t) if f is not None)
    messages = own_messages()
    assert len(set(messages)) >= 90
    for msgid in messages:
        msgstr, words = have.get(msgid), re.sub(r"\{[^}]*\}", "", msgid)
        assert msgstr and (CJK.search(msgstr) or not re.search("[A-Za-z]{2}", words)), msgid
        assert fields(msgstr) == fields(msgid), msgid
        assert english_run(msgstr) < 5, msgstr


# ---- settings and the training state ------------------------------------------------------

def test_a_bad_setting_names_the_field_and_value_in_chinese():
    en, zh = both(lambda: TrainConfig(task="poetry"))
    assert en == ("TrainConfig: task must be one of ['copy', 'dates', 'reverse', 'sort'], "
                  "got 'poetry'")
    assert zh == ("TrainConfig：task 必须是 ['copy', 'dates', 'reverse', 'sort'] 之一，"
                  "实际为 'poetry'")
    en, zh = both(lambda: TrainConfig(batch_size=0))
    assert en == "TrainConfig: batch_size must be a positive int, got 0"
    assert zh == "TrainConfig：batch_size 必须是正整数，实际为 0"
    en, zh = both(lambda: TrainConfig(n_train=10 ** 9))
    assert en.startswith("TrainConfig: 1,000,001,000 examples need about ")
    assert zh.startswith("TrainConfig：1,000,001,000 个样本约需 ") and "--n-train/--n-val" in zh
    en, zh = both(lambda: TrainConfig.from_dict([1]))
    assert (en, zh) == ("TrainConfig: expected a dict of settings, got list",
                        "TrainConfig：应为装着各项设置的 dict，实际为 list")


def test_a_tampered_training_state_is_refused_in_chinese():
    state = {"epoch": -1, "batch": 0, "step": 0, "rng": {}}
    en, zh = both(lambda: check_state(state, n_batches=4, epochs=3))
    assert en == "training state: epoch must be an int in 0..3, got -1"
    assert zh == "训练状态：epoch 必须是 0..3 之间的整数，实际为 -1"
    state = {"epoch": 1, "batch": 0, "step": 0, "rng": {}, "best": {"epoch": 5}}
    en, zh = both(lambda: check_state(state, n_batches=4, epochs=3))
    assert "best must be null or {epoch: a finished epoch, val_exact: 0..1}" in en
    assert "best 必须是 null 或 {epoch: 已完成的 epoch, val_exact: 0..1}，实际为 {'epoch': 5}" in zh


def test_the_tasks_and_the_schedule_refuse_in_chinese():
    rng = np.random.default_rng(0)
    en, zh = both(lambda: make_task("poetry", rng, 4, 2))
    assert en == ("make_task: unknown task 'poetry'; choose from ['copy', 'dates', 'reverse', "
                  "'sort']")
    assert zh == "make_task：未知任务 'poetry'；可选 ['copy', 'dates', 'reverse', 'sort']"
    en, zh = both(lambda: make_task("copy", rng, 100, 0, 1, 1, max_rounds=3))
    assert "only 20 distinct sources after 3 rounds, need 100" in en
    assert zh == ("make_task('copy')：3 轮后只有 20 个互不相同的源序列，需要 100 个；"
                  "请放宽 min_len..max_len")
    en, zh = both(lambda: next(batches([("a", "b")], SRC, TGT, 0)))
    assert (en, zh) == ("batches: batch_size must be >= 1, got 0",
                        "batches：batch_size 必须 >= 1，实际为 0")
    en, zh = both(lambda: learning_rate(0, 10, 0.1, "linear"))
    assert zh == "learning_rate：schedule 必须是 ('cosine', 'constant') 之一，实际为 'linear'"
    en, zh = both(lambda: dates.date_text(rng, dates.DATE_MIN, "month-first"))
    assert en == ("date_text: month-first needs a day above 12 (else it reads day first), "
                  "got 1950-01-01")
    assert zh == "date_text：month-first 要求日大于 12（否则会按日在前读），实际为 1950-01-01"


def test_the_dates_data_is_the_same_in_every_language():
    """Month names, forms and the pairs are training data, never translated."""
    i18n.set_language("zh")
    zh = make_task("dates", np.random.default_rng(3), 200, 20)
    i18n.set_language("en")
    en = make_task("dates", np.random.default_rng(3), 200, 20)
    assert (zh.train, zh.val) == (en.train, en.val)
    assert not any(CJK.search(s + t) for s, t in zh.train + zh.val)


# ---- checkpoints --------------------------------------------------------------------------

@pytest.fixture
def saved(tmp_path):
    save_checkpoint(tmp_path / "run", tiny_model(seed=7), SRC, TGT, {"note": "test"})
    return tmp_path / "run"


def test_a_path_that_is_no_checkpoint_is_refused_in_chinese(saved, tmp_path):
    nowhere = tmp_path / "nowhere"
    en, zh = both(lambda: load_checkpoint(nowhere), CheckpointError)
    assert en == (f"checkpoint: {nowhere} not found (expected a checkpoint folder written by "
                  "'python -m models train' (holding checkpoint.json), its checkpoint.json, "
                  "or its weights .npz file)")
    assert zh == (f"检查点：找不到 {nowhere}（应为 'python -m models train' 写出的检查点文件夹"
                  "（内含 checkpoint.json）、其中的 checkpoint.json，或其中的权重 .npz 文件）")
    (tmp_path / "empty").mkdir()
    zh = refusal("zh", lambda: load_checkpoint(tmp_path / "empty"), CheckpointError)
    assert zh.startswith(f"检查点：{tmp_path / 'empty'} 中没有 checkpoint.json（应为 ")
    (saved / "checkpoint.json").write_text(json.dumps({"format": "something else"}))
    en, zh = both(lambda: load_checkpoint(saved), CheckpointError)
    assert en.endswith("is not a minigrad-seq2seq/1 index (format field: 'something else')")
    assert zh == (f"检查点：{saved / 'checkpoint.json'} 不是 minigrad-seq2seq/1 格式的索引"
                  "（format 字段：'something else'）")


def test_a_changed_or_foreign_checkpoint_is_refused_in_chinese(saved):
    en, zh = both(lambda: Trainer.resume(saved), CheckpointError)
    assert en == (f"checkpoint: {saved} was not saved by training; it has no training state "
                  "to resume")
    assert zh == f"检查点：{saved} 不是训练时保存的；其中没有可供恢复的训练状态"
    index = json.loads((saved / "checkpoint.json").read_text())
    weights = saved / index["weights"]
    weights.write_bytes(weights.read_bytes() + b"tampered")
    en, zh = both(lambda: load_checkpoint(saved), CheckpointError)
    assert en == (f"checkpoint: {weights} does not match the digest in checkpoint.json "
                  "(the file was changed or replaced after saving)")
    assert zh == f"检查点：{weights} 与 checkpoint.json 中的摘要不符（该文件在保存后被修改或替换过）"
    index["weights"] = "../elsewhere.npz"
    (saved / "checkpoint.json").write_text(json.dumps(index))
    en, zh = both(lambda: load_checkpoint(saved), CheckpointError)
    assert en == "checkpoint: bad weights entry '../elsewhere.npz' in checkpoint.json"
    assert zh == "检查点：checkpoint.json 中的 weights 条目 '../elsewhere.npz' 无效"


# ---- the dates translate reads ------------------------------------------------------------

class Stub:
    """A 'model' that writes fixed outputs, as tests/models/test_dates.py's."""
    def __init__(self, outputs):
        self.outputs = outputs

    def greedy(self, src, max_len, mask):
        return [Translation(DATE_TGT.encode(o), None, -1.0) for o in self.outputs[:len(src)]]

    def beam(self, src, k, lp, max_len, mask, accept=None):
        return self.greedy(src, max_len, mask)


DATE_SRC, DATE_TGT = Vocab("0123456789 ,/'-ACMadhrcy"), Vocab("0123456789-")


def test_a_date_with_a_part_missing_is_refused_in_chinese():
    for text, en, zh in [
            ("May", "it names no year and no day, so the model would make them up: write the "
             "whole date (e.g. 3 May 2024)",
             "它没有写明年份和日，模型只能凭空编造：请写出完整的日期（例如 3 May 2024）"),
            ("2018", "it names no month and no day,", "它没有写明月份和日，"),
            ("5", "it names no year and no month,", "它没有写明年份和月份，"),
            ("Tuesday", "it names no year, no month and no day,", "它没有写明年份、月份和日，"),
            ("May 3 999", "the year 999 is outside 1000-9999, the years the model reads",
             "年份 999 不在模型能读的 1000-9999 之内")]:
        i18n.set_language("en")
        assert missing(text).startswith(en)
        i18n.set_language("zh")
        assert missing(text).startswith(zh)
    acc, wrong = wild_accuracy(Stub(["2033-05-03"]), DATE_SRC, DATE_TGT, [("May", "2033-05-03")])
    assert wrong == [("May", "2033-05-03", "（拒绝：它没有写明年份和日，模型只能凭空编造：请写出"
                      "完整的日期（例如 3 May 2024））")]


def test_the_notes_of_translate_are_chinese_and_the_model_input_is_not():
    texts = ["  March 14 , 2015", "03/04/2020", "1/2/03"]
    outputs = ["2015-03-14", "2020-04-03", "2011-05-33"]
    i18n.set_language("en")
    en = read_dates(Stub(outputs), DATE_SRC, DATE_TGT, texts)
    i18n.set_language("zh")
    zh = read_dates(Stub(outputs), DATE_SRC, DATE_TGT, texts)
    assert [r.model_input for r in zh] == [r.model_input for r in en] == [
        "March 14, 2015", "03/04/2020", "1/2/03"]
    assert [r.output for r in zh] == outputs
    assert en[0].notes == ["normalised to 'March 14, 2015' (spaces, quotes and dashes)"]
    assert zh[0].notes == ["已规范化为 'March 14, 2015'（空格、引号和连字符）"]
    assert zh[1].notes == ["有歧义：按日在前读作 2020-04-03（默认）；--month-first 则读作 2020-03-04"]
    assert en[2].notes[-1] == ("WARNING: '2011-05-33' is not a calendar date (day is out of "
                               "range for month): do not trust it")
    assert zh[2].notes[-1] == ("警告：'2011-05-33' 不是日历上的日期（day is out of range for "
                               "month）：不要相信它")  # Python's own reason stays as it says it
    with pytest.raises(ValueError, match="read_dates：convention 必须是"):
        read_dates(Stub(outputs), DATE_SRC, DATE_TGT, texts, convention="us")
    with pytest.raises(ValueError, match="translate：'   ' 去掉空格后什么也没有"):
        read_dates(Stub(outputs), DATE_SRC, DATE_TGT, ["   "])


# ---- a run stopped, finished or diverged --------------------------------------------------

def test_a_stopped_finished_or_diverged_run_says_so_in_chinese(tmp_path):
    trainer = Trainer.create(TrainConfig(**TINY_RUN), TINY)
    i18n.set_language("zh")
    lines = []
    trainer.run(log=lines.append, folder=tmp_path / "run", max_steps=1)
    assert lines == [f"停在第 1 个 epoch 的第 1/4 批（第 1 步）；用 --resume {tmp_path / 'run'} "
                     "恢复训练"]
    trainer.run(log=lines.append, max_steps=2)
    assert lines[-1] == "停在第 1 个 epoch 的第 2/4 批（第 2 步）"

    def diverge(idx):
        raise FloatingPointError("the gradient norm is nan")
    trainer.train_step = diverge
    with pytest.raises(FloatingPointError) as e:
        trainer.run(log=lines.append, folder=tmp_path / "run")
    assert str(e.value) == (f"训练在第 1 个 epoch、第 3 步发散（the gradient norm is nan）；"
                            f"{tmp_path / 'run'} 中最后的检查点（如有）保留不动；请试试更小的 "
                            "--lr（现为 0.003）或 --clip（现为 1.0）")
    trainer.state.done = True
    i18n.set_language("en")
    trainer.run(log=lines.append)
    i18n.set_language("zh")
    trainer.run(log=lines.append)
    assert lines[-2:] == ["this run is already finished", "这次训练已经完成"]
