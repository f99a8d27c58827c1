"""The checker's verdicts as text: one exercise in full, or one line per exercise."""
from __future__ import annotations

import re
import textwrap

from minigrad.draw.common import columns as width  # a Chinese character takes 2 columns
from minigrad.exercises import diagnose
from minigrad.exercises.checker import Report
from minigrad.exercises.integrity import printable
from minigrad.i18n import translator

_ = translator("minigrad")

WIDTH = 92
PROGRAM = "python -m minigrad.exercises"
KEEP = "\ue000"  # a private-use character: ``printable`` turns any in the text into "?"
OPENING = "（《「『【“‘(["                    # never at the end of a wrapped line
CLOSING = "，。、；：！？）》」』】”’—…,.;:!?)]"   # never at the start of one


def _shapes(shapes: dict) -> str:
    return ", ".join(f"{k} {tuple(s)}" for k, s in shapes.items())


def wrap(text: str, indent: str, more: str | None = None) -> list:
    """Wrap to WIDTH, never inside a `code span` or a short (group): their spaces are made
    ``KEEP`` (which ``printable`` makes sure no text holds) while wrapping. Continuation
    lines are indented by ``more``. Text with wide characters (Chinese, which has no spaces)
    is wrapped by ``_wrap_wide``, by columns."""
    text = re.sub(r"`[^`]*`|\([^()]{1,24}\)", lambda m: m.group(0).replace(" ", KEEP),
                  printable(text, len(text)))
    more = indent + "  " if more is None else more
    if width(text) == len(text):
        lines = textwrap.wrap(text, WIDTH, initial_indent=indent, subsequent_indent=more,
                              break_on_hyphens=False, break_long_words=False)
    else:
        lines = _wrap_wide(text, indent, more)
    return [line.replace(KEEP, " ") for line in lines]


def _wrap_wide(text: str, indent: str, more: str) -> list:
    """Greedy wrapping by columns, where a line may break between two wide characters,
    between a wide and a narrow one, or at a space between two narrow ones ("第 1 轴" stays
    whole), but not before closing punctuation (，。）) nor after opening (（“)."""
    def wide(c):
        return width(c) == 2
    pieces = []  # [text, spaced]: the units a line breaks between; spaced: a space before
    for word in text.split():
        for i, c in enumerate(word):
            last = pieces[-1][0][-1] if pieces else ""
            if i == 0 and pieces and (wide(c) or wide(last)):
                pieces[-1][0] += " " + c
            elif i and (c in CLOSING or last in OPENING or not wide(c) and not wide(last)):
                pieces[-1][0] += c
            else:
                pieces.append([c, i == 0])
    lines, line, empty = [], indent, True
    for piece, spaced in pieces:
        gap = " " if spaced and not empty else ""
        if not empty and width(line + gap + piece) > WIDTH:
            lines.append(line)
            line, gap = more, ""
        line, empty = line + gap + piece, False
    return lines + ([] if empty else [line])


def full(report: Report) -> str:
    """Every case, every gradient: pass/fail, worst element, analytic vs numeric, diagnosis."""
    e = report.exercise
    lines = [_("{name} -- {title}:  {formula}").format(name=e.name, title=_(e.title),
                                                        formula=_(e.formula))]
    if report.status in ("no file", "broken", "not implemented"):
        for i, part in enumerate(report.message.splitlines()):
            lines += wrap(part, "    " if i else "")
        if report.status == "not implemented":
            lines.append(_("When you are stuck: {program} hint {name}").format(
                program=PROGRAM, name=e.name))
        return "\n".join(lines)
    forward = e.kind == "forward"
    if forward:
        checking = (_("checking {function} in {path} against the library's forward (float64), "
                      "{n} inputs") if report.path else
                    _("checking {function} against the library's forward (float64), {n} inputs"))
    else:
        checking = (_("checking {function} in {path} against central differences (float64), "
                      "{n} inputs") if report.path else
                    _("checking {function} against central differences (float64), {n} inputs"))
    lines.append(checking.format(function=e.function, n=len(report.cases),
                                 path=printable(str(report.path))))
    rule = (_("rel. error = |yours − expected| / max(|yours|, |expected|, {floor:g}); an output "
              "passes when it is ≤ {tol:g} everywhere") if forward else
            _("rel. error = |analytic − numeric| / max(|analytic|, |numeric|, {floor:g}); a "
              "gradient passes when it is ≤ {tol:g} everywhere"))
    lines.append(rule.format(floor=diagnose.FLOOR, tol=diagnose.TOL))
    said = {}  # a diagnosis is printed in full once, then referred to: text -> where
    for case in report.cases:
        head = _("input {number}: {shapes} ").format(number=case.number,
                                                      shapes=_shapes(case.shapes))
        lines.append("")
        lines.append(head + "." * max(3, WIDTH - 6 - width(head)) + " "
                     + (_("pass") if case.ok else _("FAIL")))
        if case.error:
            label = "  " + _("error: ")
            for i, part in enumerate(case.error.splitlines()):
                lines += wrap(part.strip(), " " * width(label) if i else label,
                              " " * width(label))
        for r in case.results:
            lines += _input_lines(r, case.number, said, forward)
        for problem in case.side_effects:
            label = "  " + _("FAIL") + "  "
            lines += wrap(problem, label, " " * width(label))
        if case.lesson:
            lines += wrap(_("measured: {lesson}").format(lesson=case.lesson), "  ", "  ")
    lines.append("")
    n = len(report.cases)
    if report.status == "done":
        lines.append(_("{name}: all {n} inputs pass -- done.").format(name=e.name, n=n))
        if e.moral:
            lines += wrap(_("What it shows: {moral}").format(moral=_(e.moral)), "", "")
    else:
        lines.append(_("{name}: {passed} of {n} inputs pass -- not done yet. Hints: {program} "
                       "hint {name} (then --level 2 for the formula)").format(
                           name=e.name, passed=report.passed, n=n, program=PROGRAM))
    return "\n".join(lines)


def _input_lines(r, case_number: int, said: dict, forward: bool = False) -> list:
    verdict = _("pass") if r.ok else _("FAIL")
    name = r.name if forward else "d" + r.name
    label = f"  {name:<10} {verdict}  " if forward else f"  {name:<7} {verdict}  "
    if r.rel is None:  # no element-wise comparison was possible
        got = (_("shape {shape}, expected {expected}").format(shape=r.shape, expected=r.expected)
               if r.shape is not None else _("no output") if forward else _("no gradient"))
        lines = [label + got]
    else:
        idx = "[" + ", ".join(str(int(i)) for i in r.worst) + "]" if r.worst else _("(scalar)")
        worst = (_("worst {index}: yours {analytic: .6g}, expected {numeric: .6g}, rel. error "
                   "{rel:.1e}") if forward else
                 _("worst {index}: analytic {analytic: .6g}, numeric {numeric: .6g}, rel. error "
                   "{rel:.1e}"))
        lines = [label + worst.format(index=idx, analytic=r.analytic, numeric=r.numeric,
                                      rel=r.rel)]
    if not r.ok:
        text = r.diagnosis or (
            _("no pattern recognised: compare the worst element by hand, and check each step "
              "of the formula") if forward else
            _("no pattern recognised: compare the worst element by hand, and check each step "
              "of the chain rule"))
        lines += wrap("→ " + (_("as for {where}").format(where=said[text]) if text in said
                              else text), " " * 10)
        said.setdefault(text, _("{name} in input {number}").format(name=name,
                                                                   number=case_number))
    return lines


def status_word(report: Report) -> str:
    if report.status == "failing":
        return _("{passed}/{n} inputs pass").format(passed=report.passed, n=len(report.cases))
    return {"done": _("done"), "not implemented": _("not started"), "no file": _("no file"),
            "broken": _("does not load")}[report.status]


def first_problem(report: Report) -> str:
    """The first diagnosis of a failing report, for one-line summaries."""
    if report.status != "failing":
        return report.message.splitlines()[0] if report.message else ""
    for case in report.cases:
        if case.error:
            return _("input {number}: {problem}").format(number=case.number,
                                                         problem=case.error.splitlines()[0])
        if case.side_effects:
            return _("input {number}: {problem}").format(number=case.number,
                                                         problem=case.side_effects[0])
        for r in case.results:
            if not r.ok:
                d = "" if report.exercise.kind == "forward" else "d"
                return _("input {number}, {name}: {problem}").format(
                    number=case.number, name=d + r.name,
                    problem=r.diagnosis or _("values differ"))
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
    lines.append("\n" + _("{done} of {total} done. Details: {program} check NAME").format(
        done=done, total=len(reports), program=PROGRAM))
    return "\n".join(lines)
