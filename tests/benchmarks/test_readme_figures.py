"""The README figures script (its helpers and its argument checks), and the guides' tables of
training figures checked against a run of today's code (below)."""
import os
import re
from pathlib import Path

import pytest

from benchmarks import readme_figures as rf


def test_span_gives_a_range_or_one_value():
    assert rf.span([99.94, 100.0, 99.96]) == "99.9–100.0"
    assert rf.span([12.0, 12.04]) == "12.0"
    assert rf.span([3, 4], "{:d}") == "3–4"


def test_machine_names_the_cores_and_the_load():
    text = rf.machine()
    assert "cores" in text and "load average" in text and "NumPy" in text


def test_bad_arguments_are_refused(capsys):
    for argv in (["--only", "nope"], ["--seeds", "0"]):
        with pytest.raises(SystemExit):
            rf.main(argv)
    assert "--only takes" in capsys.readouterr().err


def test_a_failing_command_raises_with_its_output(tmp_path):
    with pytest.raises(RuntimeError, match="failed"):
        rf.run(["-c", "import sys; print('oops'); sys.exit(3)"], str(tmp_path))


def test_merged_shows_each_number_that_differs_as_its_range():
    runs = [["epoch   1/10  loss 0.5960  exact(val)  99.8%    1367 ex/s  0:15 elapsed", "done"],
            ["epoch   1/10  loss 0.6012  exact(val) 100.0%    1300 ex/s  0:17 elapsed", "done"]]
    assert rf.merged(runs) == [
        "epoch   1/10  loss 0.5960–0.6012  exact(val)  99.8–100.0%    1367 ex/s  0:15 elapsed",
        "done"]


def test_merged_marks_a_line_not_in_every_run():
    runs = [["    2 │  ░░██│", "    0 │█ │", "same 1"], ["    2 │██░░  │", "    8 │█ │", "same 1"]]
    assert rf.merged(runs) == ["~     2 │  ░░██│", "~     0 │█ │", "same 1"]


def test_a_run_gets_the_kernel_it_asks_for(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENBLAS_CORETYPE", raising=False)
    show = ["-c", "import os; print(os.environ.get('OPENBLAS_CORETYPE', 'unset'))"]
    assert rf.run(show, str(tmp_path), "Haswell")[0].strip() == "Haswell"
    assert rf.run(show, str(tmp_path))[0].strip() == "unset"


# The guides' tables of training figures against a run of today's code. Each table states, per
# row, the range over seeds and BLAS kernels that `python -m benchmarks.readme_figures` measured;
# these tests run one configuration (seed 0, the kernel this machine picks, or the one
# OPENBLAS_CORETYPE names) and check every figure of the table. Run them under each kernel with
# `OPENBLAS_CORETYPE=K python -m pytest -q -m slow tests/benchmarks/test_readme_figures.py`.
ROOT = Path(__file__).resolve().parents[2]
NUM = r"-?\d+(?:\.\d+)?"
SOMETIMES = {"never": False, "从未": False, "in some runs": True, "部分运行中": True}  # a target


def table(path: str, heading: str) -> dict:
    """The first Markdown table in the section whose heading starts with `heading`, in the guide
    at `path`: {first cell: the other cells}."""
    text = (ROOT / path).read_text(encoding="utf-8").split("\n" + heading, 1)[1]
    lines = text.split("\n## ", 1)[0].split("\n")
    start = next(i for i, l in enumerate(lines) if l.startswith("|"))
    rows = [l.strip().strip("|").split("|") for l in lines[start + 2:]]  # past header, ---
    rows = rows[:next((i for i, r in enumerate(rows) if len(r) < 2), len(rows))]
    return {r[0].strip(): [c.strip() for c in r[1:]] for r in rows}


def within(stated: str, printed: str) -> bool:
    """A stated cell holds a printed figure: "73.6–83.6%" any number in the range (bounds
    included) with the same unit; of a target, "never" holds "not met" and "in some runs" a
    time or "not met"; anything else holds the same text."""
    if stated in SOMETIMES:
        met = bool(re.fullmatch(rf"{NUM}s", printed))  # the seconds it took to reach the target
        return printed == "not met" or (SOMETIMES[stated] and met)
    stated_range = re.fullmatch(rf"({NUM})–({NUM})(\D*)", stated)
    number = re.fullmatch(rf"({NUM})(\D*)", printed)
    if not (stated_range and number):
        return stated == printed
    lo, hi, unit = stated_range.groups()
    return number[2] == unit and float(lo) <= float(number[1]) <= float(hi)


def test_a_stated_cell_holds_a_figure_in_its_range():
    assert within("73.6–83.6%", "73.6%") and within("73.6–83.6%", "83.6%")
    assert not within("73.6–83.6%", "83.7%") and not within("73.6–83.6%", "80.0")
    assert within("2–3", "2") and not within("2–3", "1") and within("3", "3")
    assert within("46,936", "46,936") and not within("46,936", "46,937")
    assert within("never", "not met") and not within("never", "5.2s")
    assert within("in some runs", "5.2s") and within("部分运行中", "not met")
    assert not within("从未", "5.2s")


def check(stated: dict, printed: dict, where: str):
    """Every row the guide states was printed, and every cell holds the printed figure."""
    assert sorted(stated) == sorted(printed), f"{where}: rows {sorted(stated)}, run {sorted(printed)}"
    assert all(len(stated[n]) == len(printed[n]) for n in stated), where
    wrong = [f"{name}: column {i + 2} states {s}, the run printed {p}"
             for name in stated for i, (s, p) in enumerate(zip(stated[name], printed[name]))
             if not within(s, p)]
    assert not wrong, f"{where} (seed 0, OPENBLAS_CORETYPE=" \
        f"{os.environ.get('OPENBLAS_CORETYPE', 'unset')}):\n" + "\n".join(wrong)


@pytest.mark.slow
def test_a_compare_scores_run_is_within_every_range_of_the_table(tmp_path):
    """models/app/README.md §compare-scores (and its twin): exact match, token accuracy, epoch
    kept and parameters of each score."""
    out, _ = rf.run(["-m", "models", "compare-scores", "--seed", "0"], str(tmp_path))
    rows = re.findall(r"^(\S.*?\)) +(\S+%) +(\S+%) +(\d+) +\S+s +([\d,]+)$", out, flags=re.M)
    for guide in ("models/app/README.md", "models/app/README.zh-CN.md"):
        check(table(guide, "## compare-scores"), {name: list(cells) for name, *cells in rows},
              f"{guide} §compare-scores")


@pytest.mark.slow
def test_a_compare_models_run_is_within_every_range_of_the_table(tmp_path):
    """models/README.md §"From Bahdanau to the Transformer" (and its twin): parameters,
    held-out exact match, whether the 95% target was met, and exact match on the sources longer
    than training."""
    out, _ = rf.run(["-m", "models", "compare-models", "--task", "reverse", "--seed", "0",
                     "--out", str(tmp_path / "run")], str(tmp_path))
    rows = re.findall(r"^(Bahdanau|Luong|Transformer) +([\d,]+) +\S+s +(not met|\S+s) +(\S+%)"
                      r" +\d+ +((?:\d+ +){11}\d+) *$", out, flags=re.M)
    printed = {name: [params, exact, target] + [f"{n}%" for n in lengths.split()[-4:]]
               for name, params, target, exact, lengths in rows}
    for guide, heading in (("models/README.md", "## From Bahdanau to the Transformer"),
                           ("models/README.zh-CN.md", "## 从 Bahdanau 到 Transformer")):
        check(table(guide, heading), printed, f"{guide} compare-models")
