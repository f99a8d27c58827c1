"""Run a learner's VJP against central finite differences and judge every gradient.

For each case of an exercise (inputs of several shapes, drawn from the exercise's fixed
seed) the checker draws g = dL/d out, defines L(inputs) = Σ g ⊙ forward(inputs), and
compares the learner's ``name_vjp(g, *inputs, **constants)`` with
``minigrad.gradcheck.numerical_grad(L, inputs)``, input by input, element by element.

The learner's code runs under a time limit (``TIMEOUT`` seconds to load the file, and per
input), so an endless loop is reported rather than hanging ``check`` or ``list``; and a
``sys.exit()`` in it is a failure like any other exception, not a silent exit.
"""
from __future__ import annotations

import contextlib
import signal
import threading
import traceback
import types
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

import minigrad as mg
from minigrad.exercises import diagnose
from minigrad.exercises.catalog import Exercise
from minigrad.gradcheck import numerical_grad
from minigrad.tensor import Tensor

STUB_MARK = "# not implemented yet"   # the stubs' `return None` line carries this comment
TIMEOUT = 10.0                        # seconds the learner's code may run: to load, per input


class TookTooLong(BaseException):
    """Raised into the learner's code when its time is up. Not an ``Exception``, so that an
    ``except Exception`` in their code cannot swallow it."""


@contextlib.contextmanager
def time_limit(seconds: float):
    """Raise ``TookTooLong`` in the code run inside after ``seconds``, using SIGALRM. Where
    there is no SIGALRM (Windows), or off the main thread (signals go to the main thread
    only), there is no limit."""
    main_thread = threading.current_thread() is threading.main_thread()
    if not hasattr(signal, "setitimer") or not main_thread:
        yield
        return

    def stop(signum, frame):
        raise TookTooLong
    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, signal.SIG_DFL if previous is None else previous)


def _too_long() -> str:
    return f"took longer than {TIMEOUT:g} s — an infinite loop?"


@dataclass
class InputResult:
    """The verdict on one gradient, dL/d name."""

    name: str
    ok: bool
    expected: tuple                      # the input's shape
    shape: tuple | None = None           # the learner's gradient's shape
    worst: tuple | None = None           # index of the element with the largest relative error
    analytic: float | None = None
    numeric: float | None = None
    rel: float | None = None
    diagnosis: str | None = None


@dataclass
class CaseResult:
    number: int
    shapes: dict                         # input name -> shape
    results: list = field(default_factory=list)   # InputResult, one per input
    error: str | None = None             # the VJP raised, or returned something unusable
    side_effects: list = field(default_factory=list)   # inputs the VJP changed in place

    @property
    def ok(self) -> bool:
        return self.error is None and not self.side_effects and all(r.ok for r in self.results)


@dataclass
class Report:
    exercise: Exercise
    path: Path | None
    status: str       # "done", "failing", "not implemented", "no file", "broken"
    message: str = ""
    cases: list = field(default_factory=list)

    @property
    def passed(self) -> int:
        return sum(c.ok for c in self.cases)


# ---- running ---------------------------------------------------------------------------------

def check_file(exercise: Exercise, directory: Path) -> Report:
    """Load ``directory/<exercise file>`` and check its VJP."""
    path = Path(directory) / exercise.file
    if not path.exists():
        return Report(exercise, path, "no file",
                      f"no {exercise.file} in {directory}: copy the stubs there with "
                      f"`python -m minigrad.exercises start {directory}`")
    module = types.ModuleType(f"_learner_{exercise.name}")
    module.__file__ = str(path)
    try:  # compiled from source every time: no stale bytecode, no __pycache__ in their folder
        with time_limit(TIMEOUT):
            exec(compile(path.read_text(encoding="utf-8"), str(path), "exec"), module.__dict__)
    except TookTooLong:
        return Report(exercise, path, "broken", f"could not load {path.name}: it {_too_long()}")
    except (Exception, SystemExit) as err:  # a learner's file may fail in any way: say so kindly
        return Report(exercise, path, "broken", f"could not load {path.name}: {_where(err, path)}")
    vjp = getattr(module, exercise.function, None)
    if not callable(vjp):
        return Report(exercise, path, "broken",
                      f"{path.name} has no function {exercise.function}(g, ...): keep the "
                      f"stub's name and signature")
    return check_function(exercise, vjp, path)


def check_function(exercise: Exercise, vjp, path: Path | None = None) -> Report:
    """Check the function ``vjp`` on every case of ``exercise``."""
    report = Report(exercise, path, "done")
    rng = np.random.default_rng(exercise.seed)
    for number, (inputs, constants) in enumerate(exercise.cases(rng), start=1):
        with mg.no_grad():
            out = exercise.forward(*[Tensor(x) for x in inputs.values()], **constants).data
        g = rng.standard_normal(out.shape)
        case = CaseResult(number, {k: x.shape for k, x in inputs.items()})
        mine = {k: x.copy() for k, x in inputs.items()}
        mine_g = g.copy()
        try:
            with time_limit(TIMEOUT):
                result = vjp(mine_g, *mine.values(), **_copies(constants))
        except TookTooLong:  # the other inputs would take as long: stop here
            case.error = f"{exercise.function} {_too_long()} (the other inputs were not run)"
            report.cases.append(case)
            break
        except (Exception, SystemExit) as err:  # the learner's code: where it failed, no traceback
            result, case.error = (), f"{exercise.function} raised {_where(err, path)}"
        if result is None and number == 1:
            report.status = "not implemented"
            report.message = _none_message(exercise, path)
            return report
        report.cases.append(case)
        if case.error:
            continue
        if result is None:
            case.error = "returned None for this input: a branch without a `return`?"
            continue
        numeric = _numeric(exercise, inputs, constants, g)
        grads = _as_list(result, exercise.args)
        if isinstance(grads, str):
            case.error = grads
            continue
        changed = [k for k in mine if not np.array_equal(mine[k], inputs[k], equal_nan=True)]
        changed += ["g"] * (not np.array_equal(mine_g, g))
        case.side_effects = [f"your VJP changed {k} in place (e.g. `{k} *= ...`); a VJP must "
                             f"change nothing -- the engine reuses its inputs: compute into "
                             f"new arrays" for k in changed]
        truth = dict(zip(exercise.args, numeric))
        case.results = [_judge(exercise, k, a, truth, g, inputs, constants)
                        for k, a in zip(exercise.args, grads)]
    if any(not c.ok for c in report.cases):
        report.status = "failing"
    return report


def _numeric(exercise, inputs, constants, g):
    """Central differences of L = Σ g ⊙ forward(inputs), one array per input."""
    def loss(*arrays):
        with mg.no_grad():
            out = exercise.forward(*[Tensor(a) for a in arrays], **constants)
        return float(np.sum(g * out.data))
    return numerical_grad(loss, [x.copy() for x in inputs.values()])


def _copies(constants: dict) -> dict:
    return {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in constants.items()}


def _as_list(result, args):
    """The VJP's result as one entry per input, or a message saying why it can't be."""
    if len(args) == 1 and not isinstance(result, (tuple, list)):
        result = (result,)
    if not isinstance(result, (tuple, list)):
        return (f"returned a {type(result).__name__}; return a tuple of {len(args)} gradients "
                f"({', '.join('d' + a for a in args)})")
    if len(result) != len(args):
        return (f"returned {len(result)} gradient(s), expected {len(args)}: one per input, in "
                f"this order: {', '.join('d' + a for a in args)}")
    return list(result)


def _judge(exercise, name, a, truth, g, inputs, constants) -> InputResult:
    """Compare ``a`` with the numeric gradient ``truth[name]``; if it fails, say why."""
    n = truth[name]
    r = InputResult(name, False, n.shape)
    if a is None:
        r.diagnosis = f"d{name} is None: return an array of shape {n.shape}"
        return r
    try:
        a = np.asarray(a, dtype=np.float64)
    except (TypeError, ValueError):
        r.diagnosis = f"d{name} is not an array of numbers ({type(a).__name__})"
        return r
    r.shape = a.shape
    if a.shape == n.shape:
        rel = diagnose.rel_error(a, n)
        k = np.unravel_index(int(np.argmax(rel)), rel.shape) if rel.size else ()
        r.worst, r.rel = k, float(rel[k]) if rel.size else 0.0
        r.analytic, r.numeric = (float(a[k]), float(n[k])) if rel.size else (None, None)
        r.ok = r.rel <= diagnose.TOL
        if r.ok:
            return r
    r.diagnosis = (_named_mistake(exercise, name, a, n, g, inputs, constants)
                   or _other_input(name, a, truth)
                   or (diagnose.value_diagnosis(a, n, name, exercise.nan_hint)
                       if a.shape == n.shape else diagnose.shape_diagnosis(a, n, name)))
    if name in exercise.zero_sum and a.shape == n.shape:
        note = diagnose.zero_sum_note(a, exercise.zero_sum[name], name)
        if note:
            r.diagnosis = f"{r.diagnosis}; {note}" if r.diagnosis else note
    return r


def _named_mistake(exercise, name, a, n, g, inputs, constants) -> str | None:
    """The text of the first catalogued mistake whose gradient for ``name`` matches ``a``."""
    for mistake in exercise.mistakes:
        try:
            wrong = mistake.grads(g.copy(), {k: x.copy() for k, x in inputs.items()},
                                  _copies(constants)).get(name)
        except Exception:  # a candidate formula that does not fit this case's shapes
            continue
        wrong = None if wrong is None else np.asarray(wrong)
        if wrong is not None and not diagnose.close(wrong, n) and diagnose.close(a, wrong):
            return mistake.text
    return None


def _other_input(name, a, truth) -> str | None:
    """``a`` is another input's gradient: the VJP returned its gradients out of order."""
    for other, n in truth.items():
        if other != name and diagnose.close(a, n) and not diagnose.close(truth[name], n):
            return (f"this is d{other}: gradients must come back in the order of the inputs "
                    f"({', '.join('d' + x for x in truth)})")
    return None


def _none_message(exercise, path) -> str:
    where = f" in {path}" if path else ""
    if path is not None and STUB_MARK in path.read_text(encoding="utf-8"):
        return f"not implemented yet: write the body of {exercise.function}{where}"
    return (f"not implemented yet? {exercise.function}{where} returned None -- did you forget "
            f"the `return`?")


def _where(err: BaseException, path: Path | None) -> str:
    """``Type: message`` plus the line of the learner's file where it happened."""
    if isinstance(err, SyntaxError):
        return (f"SyntaxError: {err.msg}\n  at {Path(err.filename or '?').name} line "
                f"{err.lineno}: {(err.text or '').strip()}")
    text = "".join(traceback.format_exception_only(type(err), err)).strip()
    if isinstance(err, SystemExit):
        text = f"SystemExit: sys.exit({err.code!r}) would end the checker; remove it"
    frames = traceback.extract_tb(err.__traceback__)
    mine = [f for f in frames if path is not None and Path(f.filename).resolve() == path.resolve()]
    if mine:
        f = mine[-1]
        text += f"\n  at {Path(f.filename).name} line {f.lineno}: {f.line}"
    return text
