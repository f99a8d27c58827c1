"""The READMEs stay true: the entrance's and the guides' Python runs, and their shell transcripts
are what the commands print today.

The documents are those of `TWINS` (readme_blocks.py): README.md and the guides beside the code,
each with its Chinese twin; of benchmarks/README.md only the part its twin translates (its other
transcripts are timings, measured by hand).

The rules:

- Every ```python block runs on its own: a fresh namespace, an empty folder as the working
  directory. It passes when it raises nothing.
- A code block whose first line starts with "$ " is a transcript: a shell session that starts in
  an empty folder, with this checkout on PYTHONPATH (so `python -m attention` is this code). Its
  commands run in order, each with bash; a `cd` carries over to the next command of the block.
  What follows a command, up to the next "$ " line, is its output (stdout and stderr, as a
  terminal shows them), except after `$ cat FILE`: there the lines are a file the reader wrote,
  and the test writes them to FILE instead of checking them.
- Output is compared line by line, exactly, after stripping trailing spaces and trailing blank
  lines, with these allowances and no more:
  * a line that is just "..." stands for any number of lines (none included): an excerpt says
    so with "...", and everything it does show must be there, in that order, verbatim;
  * durations ("0:09", "1:11") and rates ("4873 ex/s") depend on the machine, so both sides
    have them replaced by placeholders before the comparison;
  * the progress lines that training prints every 10 s ("  epoch 1 batch 92/313 ...") are
    dropped from the output: how many there are depends on the machine's speed;
  * a figure of a training run (a loss, an accuracy, a log-probability) is shown as the range
    it was measured in, two numbers joined by an en dash ("loss 0.0049–0.0061", "log p =
    -0.010–-0.001"): the printed line must have a number within the range there (bounds
    included), and in a line with a range any run of spaces matches any other (a wider number
    shifts the columns). Which BLAS kernel the CPU runs (OPENBLAS_CORETYPE) changes the last
    digits of every product, and a training run amplifies them;
    `python -m benchmarks.readme_figures` measures the ranges over seeds and kernels;
  * in the output of a command that trains or loads a trained model (`TRAINED`), a heatmap row
    ("    2 │  ░░██  │") matches a row with the same label and width whatever its shading: the
    shading is where that run's model looked. The labels (the characters it wrote) and the
    frame are compared exactly.
  Everything else (messages, shapes, untrained or seeded deterministic computations, the
  sources' worked numbers, paths relative to the folder) is deterministic and compared as
  printed. The exit status is not checked: a failing exercise check exits 1 on purpose.
- Output shown without a "$ " line (the sort run and compare-length in the CLI's manual, a
  minute and 20 s of training) is not a transcript and is not run here.
- A block that appears verbatim in a README and its twin runs once (test_readme_parity.py checks
  that the two files have the same blocks); its test id names every place it appears.
"""
import contextlib
import io
import os
import re
import subprocess
from pathlib import Path

import pytest

from readme_blocks import ROOT, TWINS, transcript, twin_sections
SLOW = "python -m models"  # the main demo trains a model (30–60 s)
DURATION = re.compile(r"\b\d+:\d\d(?::\d\d)?\b")
RATE = re.compile(r" +\d+ ex/s")
PROGRESS = re.compile(r"^  epoch +\d+ batch +\d+/\d+ ")
NUM = r"-?\d+(?:\.\d+)?"
RANGE = re.compile(rf"({NUM})–({NUM})")  # en dash: "99.5–100.0", "-0.010–-0.001"
HEATMAP_ROW = re.compile(r"^( *\S+ │)([ ░▒▓█]*)│$")
TRAINED = ("python -m models",)  # commands whose heatmaps are a trained model's


def unique_blocks(lang=None, transcripts=False):
    """[(block, "attention/README.md:12,attention/README.zh-CN.md:14")] with each distinct text
    once."""
    seen = {}
    for twin in TWINS:
        for block in (b for half in twin_sections(twin) for s in half for b in s.code):
            is_transcript = transcript(block) is not None
            if (transcripts and is_transcript) or (not transcripts and block.lang == lang):
                seen.setdefault(block.text, [block, []])[1].append(block.where())
    return [pytest.param(b, marks=_marks(b), id=",".join(where)) for b, where in seen.values()]


def _marks(block):
    steps = transcript(block) or []
    return [pytest.mark.slow] if any(s.command.strip().startswith(SLOW) for s in steps) else []


@pytest.mark.parametrize("block", unique_blocks("python"))
def test_python_block_runs(block, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(block.text, f"{block.where()} (a README block)", "exec"), {"__name__": "__readme__"})


def normalise(lines):
    out = [RATE.sub(" <rate> ex/s", DURATION.sub("<m:ss>", l.rstrip())) for l in lines]
    while out and not out[-1]:
        out.pop()
    return out


def same_line(shown, printed, trained=False):
    """One shown line against one printed line, with the range and heatmap allowances."""
    if shown == printed:
        return True
    if trained:
        a, b = HEATMAP_ROW.match(shown), HEATMAP_ROW.match(printed)
        if a and b:
            return a[1] == b[1] and len(a[2]) == len(b[2])
    parts = RANGE.split(shown)  # literal, low, high, literal, low, high, ..., literal
    if len(parts) == 1:
        return False
    literals, bounds = parts[0::3], list(zip(parts[1::3], parts[2::3]))
    pattern = f"({NUM})".join(" +".join(map(re.escape, lit.split(" "))) for lit in literals)
    pattern = re.sub(r"( \+)+", " +", pattern)
    found = re.fullmatch(pattern, printed)
    return bool(found) and all(float(lo) <= float(x) <= float(hi)
                               for x, (lo, hi) in zip(found.groups(), bounds))


def same_lines(shown, printed, trained=False):
    return len(shown) == len(printed) and all(
        same_line(a, b, trained) for a, b in zip(shown, printed))


def matches(shown, printed, trained=False):
    """True when `printed` is `shown` with each "..." line standing for any run of lines."""
    chunks, chunk = [], []
    for line in shown:
        if line == "...":
            chunks.append(chunk)
            chunk = []
        else:
            chunk.append(line)
    chunks.append(chunk)
    if len(chunks) == 1:
        return same_lines(shown, printed, trained)
    first, *middle, last = chunks
    if not same_lines(first, printed[:len(first)], trained) or (
            last and not same_lines(last, printed[-len(last):], trained)):
        return False
    pos, end = len(first), len(printed) - len(last)
    for chunk in middle:
        pos = next((i + len(chunk) for i in range(pos, end - len(chunk) + 1)
                    if same_lines(chunk, printed[i:i + len(chunk)], trained)), None)
        if pos is None:
            return False
    return pos <= end


def run_step(command, cwd, tmp_path):
    """Run one command as the reader would; return (printed lines, working directory after)."""
    where = tmp_path / ".cwd-after"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    script = f'{command}\nstatus=$?; printf %s "$PWD" > "{where}"; exit $status'
    run = subprocess.run(["bash", "-c", script], cwd=cwd, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, timeout=900)
    return run.stdout.split("\n"), Path(where.read_text())


@pytest.mark.parametrize("block", unique_blocks(transcripts=True))
def test_transcript_is_what_the_command_prints(block, tmp_path):
    cwd = tmp_path / "session"
    cwd.mkdir()
    for step in transcript(block):
        if step.command.startswith("cat "):
            target = cwd / step.command[4:].strip()
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text("\n".join(step.output).rstrip("\n") + "\n", encoding="utf-8")
            continue
        printed, cwd = run_step(step.command, cwd, tmp_path)
        printed = normalise(l for l in printed if not PROGRESS.match(l))
        shown = normalise(step.output)
        same = matches(shown, printed, trained=step.command.strip().startswith(TRAINED))
        assert same, (
            f"{block.where()}: `$ {step.command}` prints today:\n" + "\n".join(printed)
            + "\n\nbut the README shows:\n" + "\n".join(shown))


def test_the_comparison_rules():
    """"..." spans any run of lines, in order; without it every line must match; durations,
    rates and trailing spaces are the only other things allowed to differ."""
    printed = ["head", "a", "b", "c", "tail"]
    assert matches(["head", "a", "b", "c", "tail"], printed)
    assert matches(["...", "b", "..."], printed) and matches(["head", "...", "tail"], printed)
    assert matches(["...", "a", "...", "c", "..."], printed)
    assert not matches(["head", "b", "c", "tail"], printed)           # an unmarked gap
    assert not matches(["...", "c", "...", "a", "..."], printed)      # out of order
    assert not matches(["head", "a", "..."], ["head", "b", "a"])      # anchored at the start
    assert not matches(["...", "b"], printed)                         # anchored at the end
    assert normalise(["epoch 1  4873 ex/s  0:04 elapsed  ", ""]) == \
        normalise(["epoch 1   533 ex/s  1:11 elapsed"])
    assert normalise(["loss 0.3409"]) != normalise(["loss 0.3408"])


def test_a_range_stands_for_a_number_within_it():
    """A trained run's figure is shown as its measured range; anything outside fails, and the
    rest of the line is still compared."""
    shown = ["epoch   2/10  loss 0.0049–0.0061  tok acc  99.8–100.0%  exact(val)  99.5–100.0%"]
    assert matches(shown, ["epoch   2/10  loss 0.0051  tok acc  99.9%  exact(val)  99.8%"])
    assert matches(shown, ["epoch   2/10  loss 0.0061  tok acc 100.0%  exact(val) 100.0%"])
    assert not matches(shown, ["epoch   2/10  loss 0.0062  tok acc  99.9%  exact(val)  99.8%"])
    assert not matches(shown, ["epoch   3/10  loss 0.0051  tok acc  99.9%  exact(val)  99.8%"])
    assert not matches(shown, ["epoch   2/10  loss 0.0051  tok acc  99.9%  exact(test)  99.8%"])
    assert matches(["(log p = -0.010–-0.001)"], ["(log p = -0.003)"])
    assert not matches(["(log p = -0.010–-0.001)"], ["(log p = -0.020)"])
    assert not matches(["loss 0.3409"], ["loss 0.3408"])     # no range: exact


def test_a_trained_heatmap_row_keeps_its_label_and_width():
    shown = ["    2 │  ░░██  │", "    0 │  ░░██  │"]
    assert matches(shown, ["    2 │██░░    │", "    0 │   █    │"], trained=True)
    assert not matches(shown, ["    2 │██░░    │", "    0 │   █    │"])   # untrained: exact
    assert not matches(shown, ["    1 │  ░░██  │", "    0 │  ░░██  │"], trained=True)
    assert not matches(shown, ["    2 │  ░░██ │", "    0 │  ░░██  │"], trained=True)
