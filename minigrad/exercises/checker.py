"""Run a learner's VJP against central finite differences and judge every gradient.

For each case of an exercise (inputs of several shapes, drawn from the exercise's fixed
seed) the checker draws g = dL/d out, defines L(inputs) = Σ g ⊙ forward(inputs), and
compares the learner's ``name_vjp(g, *inputs, **constants)`` with
``minigrad.gradcheck.numerical_grad(L, inputs)``, input by input, element by element.

``check_file`` first refuses, in one line, when the checker's own files differ from their
digests (``integrity``), when a module it loaded comes from the course folder or the current
folder, when the learner's folder holds a file that would shadow a library the checker uses
(``numpy.py``, ``types.py``, ``minigrad/``), or when the learner's file cannot
be read. It then runs a copy of the file in a locked-down child process (``child.py`` starts
``sandbox.py``), which only returns the VJP's outputs for the inputs chosen here; the numeric
gradients and the verdict are computed in this process, after the child is dead, so nothing
in the learner's file -- patching the checker, ``os._exit``, closing streams, catching
``BaseException`` in a loop, writing frames of its own -- can fake a pass. A file that
changed during the check is not judged. The child gets ``TIMEOUT`` seconds to load the file
and per input, then is killed; a crash, an exit, a hang or unreadable output is that
exercise's failure, with a one-line reason. ``check_function`` runs a function in this
process (for trusted code: the reference solutions), under the same limit (SIGALRM).

A *forward* exercise is judged the same way, with the same guarantees, except that the
learner's function is ``name(*inputs, **constants)`` and each output is compared with the
exercise's forward (the library's), which never leaves this process.
"""
from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

import minigrad as mg
from minigrad.exercises import child, diagnose, integrity
from minigrad.exercises.catalog import Exercise
from minigrad.exercises.integrity import printable
from minigrad.exercises.sandbox import where
from minigrad.gradcheck import numerical_grad
from minigrad.i18n import translator
from minigrad.tensor import Tensor

_ = translator("minigrad")

STUB_MARK = "# not implemented yet"   # the stubs' `return None` line carries this comment
TIMEOUT = 10.0                        # seconds the learner's code may run: to load, per input
CHECKOUT = Path(mg.__file__).resolve().parent.parent  # as the current folder: not a shadow


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


@dataclass
class InputResult:
    """The verdict on one gradient, dL/d name (a forward exercise: on one output, name)."""

    name: str
    ok: bool
    expected: tuple                      # the input's shape (forward: the output's)
    shape: tuple | None = None           # the learner's gradient's shape
    worst: tuple | None = None           # index of the element with the largest relative error
    analytic: float | None = None        # the learner's value there (forward: their output)
    numeric: float | None = None         # the truth there (forward: the library's output)
    rel: float | None = None
    diagnosis: str | None = None


@dataclass
class CaseResult:
    number: int
    shapes: dict                         # input name -> shape
    results: list = field(default_factory=list)   # InputResult, one per input
    error: str | None = None             # the VJP raised, or returned something unusable
    side_effects: list = field(default_factory=list)   # inputs the VJP changed in place
    lesson: str | None = None            # a passing measurement's meaning (``Exercise.lesson``)

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

def _cases(exercise: Exercise) -> list:
    """[(inputs, constants, g)]: the cases drawn from the exercise's seed, each with its g.
    A forward exercise's g is empty: what the child is sent holds nothing of the answer."""
    rng = np.random.default_rng(exercise.seed)
    out = []
    for inputs, constants in exercise.cases(rng):
        if exercise.kind == "forward":
            out.append((inputs, constants, np.zeros(0)))
            continue
        forward = _forward(exercise, inputs, constants)[0]
        out.append((inputs, constants, rng.standard_normal(forward.shape)))
    return out


def _forward(exercise: Exercise, inputs: dict, constants: dict) -> list:
    """The exercise's forward on float64 copies of the inputs: a list of output arrays."""
    with mg.no_grad():
        out = exercise.forward(*[Tensor(x.copy()) for x in inputs.values()], **_copies(constants))
    return [np.asarray(o.data if isinstance(o, Tensor) else o, np.float64)
            for o in (out if isinstance(out, tuple) else (out,))]


def _signature(exercise: Exercise) -> str:
    return f"{exercise.function}({'' if exercise.kind == 'forward' else 'g, '}...)"


def check_file(exercise: Exercise, directory: Path) -> Report:
    """Run a copy of ``directory/<exercise file>`` in a child process (``sandbox.py``) and
    judge the gradients it returns against this process's own central differences."""
    directory = Path(directory)
    path = directory / exercise.file
    refusal = integrity.problem() or _shadowing(directory)
    if refusal:
        return Report(exercise, path, "broken", refusal)
    if not os.path.lexists(path):
        return Report(exercise, path, "no file",
                      _("no {file} in {folder}: copy the stubs there with "
                        "`python -m minigrad.exercises start {folder}`").format(
                            file=exercise.file, folder=directory))
    try:
        source = integrity.read_file(path, learners=True)
    except ValueError as e:
        return Report(exercise, path, "broken", str(e))
    cases = _cases(exercise)
    outcomes, trouble = child.run(source, path.name, exercise.function, cases, TIMEOUT,
                                  child.allowed_path(directory), exercise.kind == "forward")
    try:
        same = integrity.read_file(path, learners=True) == source
    except ValueError:
        same = False
    if not same:
        return Report(exercise, path, "broken", _("{file} changed or went away while it was "
                      "being checked: save it and check again").format(file=path.name))
    if not outcomes or "loaded" not in outcomes[0]:
        why = (outcomes[0]["error"] if outcomes and "error" in outcomes[0] else
               _("it {trouble}").format(trouble=trouble) if trouble else
               _("it ended the checker's process"))
        return Report(exercise, path, "broken",
                      _("could not load {file}: {why}").format(file=path.name, why=why))
    if not outcomes[0]["loaded"]:
        return Report(exercise, path, "broken",
                      _("{file} has no function {signature}: keep the stub's name and "
                        "signature").format(file=path.name, signature=_signature(exercise)))
    names = list(cases[0][0]) if cases else []
    results = [(r[0], r[1], [names[k] if k >= 0 else "g" for k in r[2]])
               if r[0] == "result" else ("error", _raised(exercise, r[1])) for r in outcomes[1:]]
    if len(results) < len(cases):  # the child died, hung or was killed during this case
        results.append(("error", _not_run(exercise, trouble or _("ended the process"))))
    return _verdict(exercise, path, cases, results, source.decode("utf-8", "replace"))


def _raised(exercise: Exercise, error: str) -> str:
    """The child's "NAME raised ERROR" (sandbox.py speaks English) in the learner's language."""
    start = f"{exercise.function} raised "
    if not error.startswith(start):
        return error
    return _("{function} raised {error}").format(function=exercise.function,
                                                error=error[len(start):])


def _not_run(exercise: Exercise, trouble: str) -> str:
    return _("{function} {trouble} (the other inputs were not run)").format(
        function=exercise.function, trouble=trouble)


def _shadowing(directory: Path) -> str | None:
    """One line if code from the course folder or the current folder could change a verdict:
    a module this process already loaded from there (whatever its name; the current folder
    may be the checkout minigrad itself runs from), or a file in the course folder named like
    a library the checker imports (``numpy.py``, ``json/``, ``minigrad/``)."""
    course = Path(directory).resolve()
    try:
        here = Path.cwd().resolve()
    except OSError:
        here = course
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None)
        if "." in name or name == "__main__" or not isinstance(file, str):
            continue  # a submodule is its top-level package's; __main__ is the program run
        try:
            place = Path(file).resolve().parent
        except (OSError, ValueError, RuntimeError):  # a path that cannot be a folder here
            continue
        place = place.parent if Path(file).name.startswith("__init__.") else place
        if place == course or (place == here != CHECKOUT):
            return _("refusing to check: the checker imported {name} from {file}, which could "
                     "change any verdict: rename it, or run `python -I -m minigrad.exercises` "
                     "(which imports nothing from the current folder)").format(
                         name=name, file=printable(file))
    libraries = getattr(sys, "stdlib_module_names", set(sys.modules)) | {"numpy", "minigrad"}
    loaded = {name.partition(".")[0] for name in sys.modules} & libraries
    try:
        entries = sorted(os.listdir(course))
    except OSError:
        return None  # no folder: "no file" says so
    for entry in entries:
        module = (entry if (course / entry / "__init__.py").is_file() else entry.partition(".")[0]
                  if entry.endswith((".py", ".pyc", ".so", ".pyd")) else None)
        if module in loaded:
            return _("{entry} in {folder} would shadow the library {module}: rename it (the "
                     "checker never imports it, but `python` in that folder would)").format(
                         entry=printable(entry), folder=printable(str(directory)),
                         module=printable(module))
    return None


def check_function(exercise: Exercise, vjp, path: Path | None = None) -> Report:
    """Check the function ``vjp`` on every case of ``exercise``, in this process (for code
    you trust, such as the reference solutions; a learner's file goes through ``check_file``)."""
    cases, results = _cases(exercise), []
    for inputs, constants, g in cases:
        mine, mine_g = [x.copy() for x in inputs.values()], g.copy()
        try:
            with time_limit(TIMEOUT):
                result = (vjp(*mine, **_copies(constants)) if exercise.kind == "forward" else
                          vjp(mine_g, *mine, **_copies(constants)))
        except TookTooLong:  # the other inputs would take as long: stop here
            results.append(("error", _not_run(exercise, child.too_long(TIMEOUT))))
            break
        except (Exception, SystemExit) as err:  # the learner's code: where it failed, no traceback
            results.append(("error", _("{function} raised {error}").format(
                function=exercise.function, error=where(err, path))))
            continue
        changed = [k for k, a, b in zip(inputs, inputs.values(), mine)
                   if not np.array_equal(a, b, equal_nan=True)]
        results.append(("result", result, changed + ["g"] * (not np.array_equal(mine_g, g))))
    source = path.read_text(encoding="utf-8") if path is not None else ""
    return _verdict(exercise, path, cases, results, source)


def _verdict(exercise: Exercise, path, cases: list, results: list, source: str = "") -> Report:
    """The report from each case's outcome: ("error", text) or ("result", value, changed)."""
    report = Report(exercise, path, "done")
    for number, ((inputs, constants, g), outcome) in enumerate(zip(cases, results), start=1):
        if outcome[0] == "result" and outcome[1] is None and number == 1:
            report.status = "not implemented"
            report.message = _none_message(exercise, path, source)
            return report
        case = CaseResult(number, {k: x.shape for k, x in inputs.items()})
        report.cases.append(case)
        if outcome[0] == "error":
            case.error = diagnose.error_diagnosis(outcome[1], max(x.ndim for x in inputs.values()))
            continue
        result, changed = outcome[1:]
        if result is None:
            case.error = _("returned None for this input: a branch without a `return`?")
            continue
        forward = exercise.kind == "forward"
        names = exercise.outputs if forward else exercise.args
        grads = _as_list(result, names, forward)
        if isinstance(grads, str):
            case.error = grads
            continue
        changed_in_place = (
            _("your function changed {name} in place (e.g. `{name} *= ...`); it must change "
              "nothing -- the engine reuses its inputs: compute into new arrays") if forward else
            _("your VJP changed {name} in place (e.g. `{name} *= ...`); it must change nothing "
              "-- the engine reuses its inputs: compute into new arrays"))
        case.side_effects = [changed_in_place.format(name=k) for k in changed]
        truth = dict(zip(names, _forward(exercise, inputs, constants) if forward
                         else _numeric(exercise, inputs, constants, g)))
        with np.errstate(all="ignore"):  # 1e308 in a gradient: a diagnosis, not a warning
            case.results = [_judge(exercise, k, a, truth, g, inputs, constants)
                            for k, a in zip(names, grads)]
        if exercise.lesson and case.ok:
            case.lesson = exercise.lesson(inputs, constants, list(truth.values()))
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


def _as_list(result, names, forward=False):
    """The result as one entry per name, or a message saying why it can't be: a VJP returns
    gradients (dx, ...), a forward (``forward``) its outputs."""
    listed = ", ".join(("" if forward else "d") + a for a in names)
    if len(names) == 1 and not isinstance(result, (tuple, list)):
        result = (result,)
    if not isinstance(result, (tuple, list)):
        message = (_("returned a {type}; return a tuple of {n} outputs ({listed})") if forward
                   else _("returned a {type}; return a tuple of {n} gradients ({listed})"))
        kind = result.type_name if isinstance(result, child.NotAnArray) else type(result).__name__
        return message.format(type=kind, n=len(names), listed=listed)
    if len(result) != len(names):
        message = (_("returned {count} output(s), expected {n}: in this order: {listed}")
                   if forward else _("returned {count} gradient(s), expected {n}: one per "
                                     "input, in this order: {listed}"))
        return message.format(count=len(result), n=len(names), listed=listed)
    return list(result)


def _judge(exercise, name, a, truth, g, inputs, constants) -> InputResult:
    """Compare ``a`` with the numeric gradient ``truth[name]`` (a forward exercise: with the
    library's output); if it fails, say why."""
    n = truth[name]
    r = InputResult(name, False, n.shape)
    forward = exercise.kind == "forward"
    d = "" if forward else "d"
    if a is None:
        r.diagnosis = _("{name} is None: return an array of shape {shape}").format(
            name=d + name, shape=n.shape)
        return r
    if isinstance(a, child.NotAnArray):
        r.diagnosis = _("{name} is a {type}, not an array of numbers: return an array of shape "
                        "{shape}").format(name=d + name, type=a.type_name, shape=n.shape)
        return r
    try:
        a = np.asarray(a)
    except (TypeError, ValueError):
        a = np.asarray(None)
    if a.dtype.kind not in "biuf":  # complex: an imaginary part must not be dropped silently
        r.diagnosis = (_("{name} is not an array of real numbers (dtype {dtype}); the forward "
                         "of real inputs is real") if forward else
                       _("{name} is not an array of real numbers (dtype {dtype}); a gradient "
                         "of a real loss is real")).format(name=d + name, dtype=a.dtype)
        return r
    a = a.astype(np.float64)
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
                   or _other_input(name, a, truth, d)
                   or (diagnose.output_diagnosis(a, n, name) if forward else
                       diagnose.value_diagnosis(a, n, name, exercise.nan_hint and
                                                _(exercise.nan_hint))
                       if a.shape == n.shape else diagnose.shape_diagnosis(a, n, name)))
    if name in exercise.zero_sum and a.shape == n.shape:
        note = diagnose.zero_sum_note(a, exercise.zero_sum[name], name)
        if note:
            r.diagnosis = (_("{diagnosis}; {note}").format(diagnosis=r.diagnosis, note=note)
                           if r.diagnosis else note)
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
            return _(mistake.text)
    return None


def _other_input(name, a, truth, d="d") -> str | None:
    """``a`` is another input's gradient (another output): returned out of order."""
    for other, n in truth.items():
        if other != name and diagnose.close(a, n) and not diagnose.close(truth[name], n):
            order = (_("this is {name}: gradients must come back in the order of the inputs "
                       "({listed})") if d else
                     _("this is {name}: the outputs must come back in this order ({listed})"))
            return order.format(name=d + other, listed=", ".join(d + x for x in truth))
    return None


def _none_message(exercise, path, source: str) -> str:
    if STUB_MARK in source:
        message = (_("not implemented yet: write the body of {function} in {path}") if path else
                   _("not implemented yet: write the body of {function}"))
    else:
        message = (_("not implemented yet? {function} in {path} returned None -- did you forget "
                     "the `return`?") if path else
                   _("not implemented yet? {function} returned None -- did you forget the "
                     "`return`?"))
    return message.format(function=exercise.function, path=path)
