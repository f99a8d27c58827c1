"""The checker's verdicts as text: one exercise in full, or one line per exercise."""
from __future__ import annotations

import re
import textwrap

from minigrad.exercises import diagnose
from minigrad.exercises.checker import Report
from minigrad.exercises.integrity import printable

WIDTH = 92
PROGRAM = "python -m minigrad.exercises"
KEEP = "\ue000"  # a private-use character: ``printable`` turns any in the text into "?"


def _shapes(shapes: dict) -> str:
    return ", ".join(f"{k} {tuple(s)}" for k, s in shapes.items())


def wrap(text: str, indent: str, more: str | None = None) -> list:
    """Wrap to WIDTH, never inside a `code span` or a short (group): their spaces are made
    ``KEEP`` (which ``printable`` makes sure no text holds) while wrapping. Continuation
    lines are indented by ``more``."""
    text = re.sub(r"`[^`]*`|\([^()]{1,24}\)", lambda m: m.group(0).replace(" ", KEEP),
                  printable(text, len(text)))
    lines = textwrap.wrap(text, WIDTH, initial_indent=indent,
                          subsequent_indent=indent + "  " if more is None else more,
                          break_on_hyphens=False, break_long_words=False)
    return [line.replace(KEEP, " ") for line in lines]


def full(report: Report) -> str:
    """Every case, every gradient: pass/fail, worst element, analytic vs numeric, diagnosis."""
    e = report.exercise
    lines = [f"{e.name} -- {e.title}:  {e.formula}"]
    if report.status in ("no file", "broken", "not implemented"):
        for i, part in enumerate(report.message.splitlines()):
            lines += wrap(part, "    " if i else "")
        if report.status == "not implemented":
            lines.append(f"When you are stuck: {PROGRAM} hint {e.name}")
        return "\n".join(lines)
    where = f" in {printable(str(report.path))}" if report.path else ""
    forward = e.kind == "forward"
    truth, mine, theirs = (("the library's forward", "yours", "expected") if forward else
                           ("central differences", "analytic", "numeric"))
    lines.append(f"checking {e.function}{where} against {truth} (float64), "
                 f"{len(report.cases)} inputs")
    lines.append(f"rel. error = |{mine} − {theirs}| / max(|{mine}|, |{theirs}|, "
                 f"{diagnose.FLOOR:g}); {'an output' if forward else 'a gradient'} passes when "
                 f"it is ≤ {diagnose.TOL:g} everywhere")
    said = {}  # a diagnosis is printed in full once, then referred to: text -> where
    for case in report.cases:
        head = f"input {case.number}: {_shapes(case.shapes)} "
        lines.append("")
        lines.append(head + "." * max(3, WIDTH - 6 - len(head)) + (" pass" if case.ok else " FAIL"))
        if case.error:
            for i, part in enumerate(case.error.splitlines()):
                lines += wrap(part.strip(), " " * 9 if i else "  error: ", " " * 9)
        for r in case.results:
            lines += _input_lines(r, case.number, said, forward)
        for problem in case.side_effects:
            lines += wrap(problem, "  FAIL  ")
        if case.lesson:
            lines += wrap("measured: " + case.lesson, "  ", "  ")
    lines.append("")
    n = len(report.cases)
    if report.status == "done":
        lines.append(f"{e.name}: all {n} inputs pass -- done.")
        if e.moral:
            lines += wrap("What it shows: " + e.moral, "", "")
    else:
        lines.append(f"{e.name}: {report.passed} of {n} inputs pass -- not done yet. "
                     f"Hints: {PROGRAM} hint {e.name} (then --level 2 for the formula)")
    return "\n".join(lines)


def _input_lines(r, case_number: int, said: dict, forward: bool = False) -> list:
    verdict = "pass" if r.ok else "FAIL"
    name = r.name if forward else "d" + r.name
    label = f"  {name:<10} {verdict}  " if forward else f"  {name:<7} {verdict}  "
    if r.rel is None:  # no element-wise comparison was possible
        got = f"shape {r.shape}, expected {r.expected}" if r.shape is not None else "no gradient"
        lines = [label + got]
    else:
        idx = "[" + ", ".join(str(int(i)) for i in r.worst) + "]" if r.worst else "(scalar)"
        mine, theirs = ("yours", "expected") if forward else ("analytic", "numeric")
        lines = [label + f"worst {idx}: {mine} {r.analytic: .6g}, {theirs} {r.numeric: .6g}, "
                         f"rel. error {r.rel:.1e}"]
    if not r.ok:
        text = r.diagnosis or ("no pattern recognised: compare the worst element by hand, and "
                               f"check each step of the {'formula' if forward else 'chain rule'}")
        lines += wrap("→ " + (f"as for {said[text]}" if text in said else text), " " * 10)
        said.setdefault(text, f"{name} in input {case_number}")
    return lines


def status_word(report: Report) -> str:
    return {"done": "done", "failing": f"{report.passed}/{len(report.cases)} inputs pass",
            "not implemented": "not started", "no file": "no file",
            "broken": "does not load"}[report.status]


def first_problem(report: Report) -> str:
    """The first diagnosis of a failing report, for one-line summaries."""
    if report.status != "failing":
        return report.message.splitlines()[0] if report.message else ""
    for case in report.cases:
        if case.error:
            return f"input {case.number}: {case.error.splitlines()[0]}"
        if case.side_effects:
            return f"input {case.number}: {case.side_effects[0]}"
        for r in case.results:
            if not r.ok:
                d = "" if report.exercise.kind == "forward" else "d"
                return f"input {case.number}, {d}{r.name}: {r.diagnosis or 'values differ'}"
    return ""


def summary(reports: list) -> str:
    """One line per exercise, for `check --all`."""
    lines = []
    for rep in reports:
        e = rep.exercise
        mark = "✓" if rep.status == "done" else "✗" if rep.status in ("failing", "broken") else "·"
        line = f"{mark} {e.number:2d} {e.name:<19} {status_word(rep)}"
        problem = first_problem(rep) if rep.status in ("failing", "broken") else ""
        lines.append(line)
        if problem:
            lines += wrap(problem, " " * 7)
    done = sum(r.status == "done" for r in reports)
    lines.append(f"\n{done} of {len(reports)} done. Details: {PROGRAM} check NAME")
    return "\n".join(lines)
