"""The exercise checker in Chinese (``--lang zh``, or a ``zh`` locale): its verdicts,
diagnoses, hints, ``list`` and ``check --all`` come out in Chinese, the exercises' own texts
(titles, hints, mistakes, NaN hints, morals) are translated where they are shown, English is
unchanged without ``--lang``, and the language changes no verdict and no exit status.

Expected sentences are taken from the catalog (``minigrad.i18n_build.messages``), so the test
says *that* a message is translated and shown, not how it is worded.
"""
import functools
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from minigrad import i18n_build as catalogs
from minigrad import i18n
from minigrad.exercises import all_exercises, check_file, check_function, find, report
from minigrad.exercises.__main__ import main

HERE = Path(__file__).parent
SOLUTIONS = HERE / "exercise_solutions"
REPO = HERE.parent.parent


def _load(path: Path):
    """A solutions module, outside sys.modules: the checker refuses a module it imported
    from a course folder, and SOLUTIONS is one."""
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


numpy_vjps = _load(SOLUTIONS / "numpy_vjps.py")
numpy_forwards = _load(SOLUTIONS / "numpy_forwards.py")
ZH = catalogs.messages("minigrad")
WRONG_MUL = "def mul_vjp(g, a, b):\n    return g * b, g * a\n"  # broadcasting not undone
WRONG_SIGMOID = ("import numpy as np\n\n\ndef sigmoid_vjp(g, x):\n"
                 "    return g / (1 + np.exp(-x))\n")             # the factor 1 − σ(x) missing
CJK = re.compile(r"[\u4e00-\u9fff]")
ENGLISH = re.compile(r"(?:\b[A-Za-z]{2,}\b[ ,;:'()-]*){5}")  # five English words in a row


def zh(message: str, **fields) -> str:
    """The Chinese of ``message`` (which must have one), filled in."""
    assert ZH.get(message), f"no translation of {message!r}"
    return ZH[message].format(**fields)


def english_runs(text: str) -> list:
    """Lines with five English words in a row, leaving out what stays English: the formulas,
    command lines, `code` and the Python exceptions a learner's code raised."""
    found = []
    for line in text.splitlines():
        for e in all_exercises():
            line = line.replace(e.formula, "")
        line = re.sub(r"`[^`]*`|python -m minigrad\.exercises[^，。；）]*", "", line)
        if ENGLISH.search(line) and "Error:" not in line:
            found.append(line)
    return found


@pytest.fixture(autouse=True)
def english_after():
    yield
    i18n.set_language(None)  # the locale again: LANGUAGE=en in the tests


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """A learner's folder: a wrong mul and a wrong sigmoid, no other file."""
    folder = tmp_path_factory.mktemp("course")
    (folder / "01_mul.py").write_text(WRONG_MUL)
    (folder / "03_sigmoid.py").write_text(WRONG_SIGMOID)
    return folder


def _run(*args, **env):
    environ = dict(os.environ, PYTHONIOENCODING="utf-8", **env,
                   PYTHONPATH=os.pathsep.join(filter(None, [str(REPO),
                                                            os.environ.get("PYTHONPATH")])))
    return subprocess.run([sys.executable, "-m", "minigrad.exercises", *args], env=environ,
                          capture_output=True, text=True, encoding="utf-8", timeout=120,
                          cwd=REPO)


@pytest.fixture(scope="module")
def check_mul(course):
    """`check mul` on the wrong mul: --lang zh, English, and a zh_CN locale."""
    return {"zh": _run("check", "mul", "--lang", "zh", "--dir", str(course)),
            "en": _run("check", "mul", "--dir", str(course)),
            "locale": _run("check", "mul", "--dir", str(course), LANGUAGE="zh_CN"),
            "locale, --lang en": _run("--lang", "en", "check", "mul", "--dir", str(course),
                                      LANGUAGE="zh_CN")}


def test_check_prints_the_diagnosis_and_the_verdict_in_chinese(check_mul):
    r = check_mul["zh"]
    assert r.returncode == 1 and r.stderr == ""
    out = r.stdout
    e = find("mul")
    assert out.splitlines()[0] == zh("{name} -- {title}:  {formula}", name="mul",
                                     title=ZH[e.title], formula=ZH[e.formula])
    assert zh("input {number}: {shapes} ", number=2, shapes="a (2, 3, 4), b (4,)") in out
    assert out.count(" " + zh("FAIL")) >= 3 and zh("pass") in out
    broadcasting = ZH["broadcasting not undone: {name} {right} was stretched to {shape} in the "
                      "forward, so its gradient is summed over the stretched {axes}: d{name} = "
                      "`{code}`"]
    flat = "".join(out.split())
    assert "".join(broadcasting.split("{")[0].split()) in flat  # the diagnosis, wrapped
    assert "`grad.sum(axis=(0,1))`" in flat
    assert zh("{name}: {passed} of {n} inputs pass -- not done yet. Hints: {program} hint {name} "
              "(then --level 2 for the formula)", name="mul", passed=1, n=4,
              program=report.PROGRAM) in out
    assert not english_runs(out), english_runs(out)


def test_a_chinese_report_lines_up_and_keeps_to_the_width(check_mul):
    lines = check_mul["zh"].stdout.splitlines()
    start = ZH["input {number}: {shapes} "].split("{")[0]  # "输入 "
    heads = [l for l in lines if l.startswith(start) and "...." in l]
    assert len(heads) == 4
    assert {report.width(l) for l in heads} == {report.WIDTH - 1}  # the verdicts in one column
    wrapped = [l for l in lines if l.startswith(" " * 10)]
    assert wrapped and all(report.width(l) <= report.WIDTH for l in wrapped)


def test_english_is_unchanged_without_lang_and_the_locale_chooses_chinese(check_mul):
    en = check_mul["en"].stdout
    assert not CJK.search(en)
    assert "mul -- mul with broadcasting:  out = a ⊙ b, NumPy broadcasting" in en
    assert "mul: 1 of 4 inputs pass -- not done yet." in en and "broadcasting not undone" in en
    assert check_mul["locale"].stdout == check_mul["zh"].stdout
    assert check_mul["locale, --lang en"].stdout == en
    assert {r.returncode for r in check_mul.values()} == {1}


def test_the_verdict_is_the_same_in_both_languages(course):
    def verdict(language):
        i18n.set_language(language)
        rep = check_file(find("mul"), course)
        return rep.status, [(c.ok, [(r.name, r.ok, r.shape, r.worst, r.rel) for r in c.results])
                            for c in rep.cases], report.full(rep)
    en, zh_ = verdict("en"), verdict("zh")
    assert en[:2] == zh_[:2] and en[0] == "failing"
    assert CJK.search(zh_[2]) and not CJK.search(en[2])


def test_a_learners_file_cannot_change_the_language(tmp_path):
    (tmp_path / "01_mul.py").write_text(
        "import os\nos.environ['LANGUAGE'] = 'en'\ntry:\n    from minigrad import i18n\n"
        "    i18n.set_language('en')\nexcept BaseException:\n    pass\n" + WRONG_MUL)
    i18n.set_language("zh")
    text = report.full(check_file(find("mul"), tmp_path))
    assert zh("{name}: {passed} of {n} inputs pass -- not done yet. Hints: {program} hint {name} "
              "(then --level 2 for the formula)", name="mul", passed=1, n=4,
              program=report.PROGRAM) in text


def test_hint_in_chinese(capsys):
    e = find("mul")
    for level in (1, 2):
        assert main(["hint", "mul", "--level", str(level), "--lang", "zh"]) == 0
        out = capsys.readouterr().out
        title = zh(["shape bookkeeping", "the formula"][level - 1])
        assert out.startswith(zh("{name}, hint {level} of {total} ({title}):", name="mul",
                                 level=level, total=2, title=title))
        assert "".join(ZH[e.hints[level - 1]].split()) in "".join(out.split())
        assert not english_runs(out), english_runs(out)
    assert zh("Still stuck? {program} hint {name} --level {level}", program=report.PROGRAM,
              name="mul", level=2) not in out  # level 2 is the last


def test_list_in_chinese_keeps_its_columns(course, capsys):
    assert main(["list", "--dir", str(course), "--lang", "zh"]) == 0
    lines = capsys.readouterr().out.splitlines()
    header, rows = lines[0], lines[1:1 + len(all_exercises())]
    assert header == ZH[" #  name                level  status           formula"]
    column = report.width(header) - report.width(header.split()[-1])  # where formulas start
    for e, row in zip(all_exercises(), rows):
        assert row.endswith(" " + ZH[e.formula])
        assert report.width(row[:len(row) - len(ZH[e.formula])]) == column, row
    statuses = "\n".join(rows)
    assert zh("{passed}/{n} inputs pass", passed=1, n=4) in statuses
    assert zh("{passed}/{n} inputs pass", passed=0, n=3) in statuses
    assert not english_runs("\n".join(lines)), english_runs("\n".join(lines))


def test_check_all_in_chinese_with_the_same_marks_and_exit_status(course, capsys):
    outputs = {}
    for language in ("en", "zh"):
        assert main(["check", "--all", "--dir", str(course), "--lang", language]) == 1
        outputs[language] = capsys.readouterr().out
    out = outputs["zh"]
    marks = {k: [l[:4] for l in v.splitlines() if l and l[0] in "✓✗·"] for k, v in outputs.items()}
    assert marks["en"] == marks["zh"] and len(marks["zh"]) == len(all_exercises())
    assert f"✗  1 mul                 {zh('{passed}/{n} inputs pass', passed=1, n=4)}" in out
    missing = next(m.text for m in find("sigmoid").mistakes
                   if m.text.startswith("missing factor (1 − σ(x))"))  # a Mistake.text
    assert "".join(zh("input {number}, {name}: {problem}", number=1, name="dx",
                      problem=ZH[missing]).split()) in "".join(out.split())
    assert zh("no file") in out
    assert zh("{done} of {total} done. Details: {program} check NAME", done=0,
              total=len(all_exercises()), program=report.PROGRAM) in out
    assert not english_runs(out), english_runs(out)


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")  # the 0/0 mistake
def test_the_exercises_texts_are_translated_where_they_are_shown():
    """Titles, hints, mistakes, NaN hints and morals are data: each has a translation, and
    the report shows the translation."""
    texts = [t for e in all_exercises()
             for t in (e.title, *e.hints, *(m.text for m in e.mistakes), e.nan_hint, e.moral) if t]
    assert all(ZH.get(t) for t in texts), [t for t in texts if not ZH.get(t)][:3]
    i18n.set_language("zh")
    for e in all_exercises():  # the first line of every report: the title
        line = report.full(report.Report(e, None, "no file", "")).splitlines()[0]
        assert line == zh("{name} -- {title}:  {formula}", name=e.name, title=ZH[e.title],
                          formula=ZH[e.formula])
    masked = find("masked_softmax")  # a NaN, with the exercise's hint on where it comes from
    rep = check_function(masked, functools.partial(numpy_vjps.VJPS["masked_softmax"],
                                                   mistake="0/0"))
    assert "".join(ZH[masked.nan_hint].split()) in "".join(report.full(rep).split())
    sqrt_d = find("sqrt_d_scaling")  # a passing measurement: what it shows
    rep = check_function(sqrt_d, numpy_forwards.FORWARDS["sqrt_d_scaling"])
    assert rep.status == "done"
    assert "".join(ZH[sqrt_d.moral].split()) in "".join(report.full(rep).split())
