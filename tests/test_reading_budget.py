"""What a learner reads is what runs: each reading path is measured by tracing the code that
executes, and each room of the code by its whole files.

    python tests/test_reading_budget.py          # the README's "Reading order" table
    python tests/test_reading_budget.py --write  # ... written into README.md and README.zh-CN.md

**Paths, by trace.** Each scenario runs once untraced (imports, caches) and once under
``sys.setprofile``. Every Python function of the library that is called is mapped to its
outermost definition (a nested function or a lambda counts as the ``def`` around it; a lambda
at module level as itself; a method as itself, decorators and docstring included), and the
path costs the lines of those definitions, each counted once, in the files they live in.
The tools a learner does not read on these paths (the graph viewer, drawing, exercises, the
application, the demos) are not library code here. Checks are counted: a guard runs, so it is
read. The table also shows the count without them (definitions in a ``checks.py`` module, or
named ``check*``/``_check*``/``refuse*``), to show what the checks cost.

**Rooms, by whole files** (tinygrad's rule: code cannot leave a count by moving): the core, the
catalogue of ops the models do not use, the kernels, the tools and the application.
"""
from __future__ import annotations

import ast
import functools
import pathlib
import re
import sys
from dataclasses import dataclass

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
LIBRARY = ("minigrad", "attention", "models")
NOT_READ_HERE = ("minigrad/viz/", "minigrad/draw/", "minigrad/exercises/", "models/app/",
                 "attention/demos/")


# ---- mapping a running function to its definition --------------------------------------------

@functools.lru_cache(maxsize=None)
def definitions(file: str) -> tuple:
    """``(first, last, name)`` of each outermost definition in ``file``: top-level functions,
    methods (a class is a namespace, not a definition), and lambdas outside any function."""
    tree = ast.parse((ROOT / file).read_text(encoding="utf-8"))
    found = []

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                first = min([d.lineno for d in child.decorator_list] + [child.lineno])
                found.append((first, child.end_lineno, prefix + child.name))
            elif isinstance(child, ast.ClassDef):
                visit(child, prefix + child.name + ".")
            elif isinstance(child, ast.Lambda):
                found.append((child.lineno, child.end_lineno, prefix + "<lambda>"))
            else:
                visit(child, prefix)
    visit(tree, "")
    return tuple(found)


def definition_of(file: str, line: int):
    """The outermost definition of ``file`` that holds ``line`` (a code object's first line)."""
    for first, last, name in definitions(file):
        if first <= line <= last:
            return first, last, name
    return None  # module-level code (an import running the module body)


def library_file(filename: str) -> str | None:
    """``filename`` relative to the repository, if it is library code read on these paths."""
    try:
        rel = pathlib.Path(filename).resolve().relative_to(ROOT).as_posix()
    except ValueError:
        return None
    if rel.split("/")[0] not in LIBRARY or rel.startswith(NOT_READ_HERE):
        return None
    return rel


def is_check(file: str, name: str) -> bool:
    leaf = name.rsplit(".", 1)[-1].lstrip("_")
    return file.endswith("checks.py") or leaf.startswith(("check", "refuse"))


def trace(run) -> dict:
    """``{(file, first, last, name)}`` of every library definition that runs during ``run()``."""
    seen, codes = set(), {}

    def profile(frame, event, arg):
        if event == "call":
            code = frame.f_code
            if code not in codes:
                file = library_file(code.co_filename)
                codes[code] = file and definition_of(file, code.co_firstlineno)
                if codes[code]:
                    codes[code] = (file,) + codes[code]
            if codes[code]:
                seen.add(codes[code])
    sys.setprofile(profile)
    try:
        run()
    finally:
        sys.setprofile(None)
    return seen


@dataclass(frozen=True)
class Cost:
    lines: int
    files: int
    lines_without_checks: int
    files_without_checks: int
    definitions: tuple

    @staticmethod
    def of(seen) -> "Cost":
        def count(defs):
            return sum(last - first + 1 for _, first, last, _ in defs), len({d[0] for d in defs})
        plain = [d for d in seen if not is_check(d[0], d[3])]
        return Cost(*count(seen), *count(plain), tuple(sorted(seen)))

    def listing(self) -> str:
        return "\n".join(f"  {f}:{a}-{b} {n} ({b - a + 1})" for f, a, b, n in self.definitions)


# ---- the five scenarios ------------------------------------------------------------------------
# Each builds its inputs (not traced) and returns the function whose run is traced.

def backward_scenario():
    import minigrad as mg
    rng = np.random.default_rng(0)
    x = mg.tensor(rng.normal(size=(3, 4)), requires_grad=True)
    w = mg.tensor(rng.normal(size=(4,)), requires_grad=True)
    return lambda: ((x * w).tanh()).sum().backward()


def mul_scenario():
    import minigrad as mg
    rng = np.random.default_rng(0)
    x = mg.tensor(rng.normal(size=(3, 4)), requires_grad=True)
    w = mg.tensor(rng.normal(size=(4,)), requires_grad=True)
    return lambda: x * w


def read_scenario():
    import minigrad as mg
    from attention.read import read
    rng = np.random.default_rng(0)
    e = mg.tensor(rng.normal(size=(2, 5)), requires_grad=True)         # (B, S)
    h = mg.tensor(rng.normal(size=(2, 5, 3)), requires_grad=True)      # (B, S, D)
    mask = np.array([[True] * 5, [True] * 3 + [False] * 2])            # (B, S)
    g = rng.normal(size=(2, 3))                                        # (B, D)

    def run():
        c, _ = read(e, h, mask)
        c.backward(g)
    return run


def gru_scenario():
    import minigrad as mg
    from models.recurrent import GRUCell
    rng = np.random.default_rng(0)
    cell = GRUCell(3, 4, rng=rng)
    x = mg.tensor(rng.normal(size=(2, 3)))                             # (B, I)
    h = mg.tensor(rng.normal(size=(2, 4)), requires_grad=True)         # (B, H)
    return lambda: cell(x, h).sum().backward()


def step_scenario():
    from minigrad import optim
    from models.seq2seq import ModelConfig, Seq2Seq
    rng = np.random.default_rng(0)
    config = ModelConfig(12, 12, embed=8, hidden=8, dec_hidden=8, attn=8, decoder="bahdanau",
                         score="additive")
    model = Seq2Seq(config, rng)
    src = rng.integers(3, 12, size=(4, 6))                             # (B, S)
    src_mask = np.ones_like(src, dtype=bool)
    src_mask[2:, 4:] = False
    src[~src_mask] = 0
    tgt = rng.integers(3, 12, size=(4, 5))                             # (B, T)
    opt = optim.Adam(model.parameters(), lr=1e-3)

    def run():
        opt.zero_grad()
        loss = model.loss(src, tgt, src_mask)
        loss.backward()
        optim.clip_grad_norm_(model.parameters(), 5.0)
        opt.step()
    return run


@dataclass(frozen=True)
class Path:
    concept: str
    scenario: object
    budget: int        # lines, traced, checks included
    max_files: int


PATHS = (
    Path("backward (`minigrad/engine.py`): `((x*w).tanh()).sum().backward()`",
         backward_scenario, 160, 4),
    Path("one op to the engine (`minigrad/ops.py`): `x * w`", mul_scenario, 12 + 40, 4),
    Path("the attention read and ∂L/∂e_j = α_j g·(h_j − c) (`attention/read.py`), masked, "
         "then backward", read_scenario, 220, 8),
    Path("the GRU cell (`models/recurrent.py`), forward and backward", gru_scenario, 220, 8),
    Path("one Bahdanau training step (`models/seq2seq.py`): loss, backward, clip, Adam",
         step_scenario, 750, 12),
)


@functools.lru_cache(maxsize=None)
def cost(path: Path) -> Cost:
    run = path.scenario()
    run()                      # warm-up: imports and first-call caches are not the path
    return Cost.of(trace(path.scenario()))


def table() -> str:
    """The README's Reading order table: what each path runs, traced."""
    rows = ["| path | lines that run (files) | without checks | budget |", "|---|---|---|---|"]
    for p in PATHS:
        c = cost(p)
        rows.append(f"| {p.concept} | {c.lines} ({c.files}) | {c.lines_without_checks} "
                    f"({c.files_without_checks}) | {p.budget} ({p.max_files}) |")
    return "\n".join(rows)


# ---- rooms, over whole files -----------------------------------------------------------------

def files_of(*patterns) -> set:
    return {p.relative_to(ROOT).as_posix() for pattern in patterns for p in ROOT.glob(pattern)}


KERNELS = files_of("minigrad/kernels.py", "attention/kernels.py", "models/kernels.py",
                   "models/fused*.py", "minigrad/runtime/*.py")
TOOLS = files_of("minigrad/viz/**/*.py", "minigrad/draw/**/*.py", "minigrad/exercises/**/*.py",
                 "minigrad/gradcheck*.py", "minigrad/higher.py", "minigrad/i18n*.py",
                 "minigrad/__main__.py")
APPLICATION = files_of("models/app/**/*.py", "attention/demos/*.py", "attention/__main__.py",
                       "models/__main__.py")
CATALOGUE = files_of("minigrad/catalogue.py", "minigrad/numpy_functions.py")
CORE = files_of("minigrad/*.py", "attention/*.py", "models/*.py") - KERNELS - TOOLS - \
    APPLICATION - CATALOGUE
ROOMS = {  # room -> (files, budget in lines)
    "core": (CORE, 3000),
    # The ops no model uses, and NumPy's functions on Tensors; raised from 650 once for the
    # one-line hints on PyTorch's names (t.unsqueeze, mg.cat: numpy_functions.missing).
    "catalogue": (CATALOGUE, 660),
    "kernels": (KERNELS, 1000),
    # Set from their size when the rooms were drawn (6,200 and 6,290 lines) and a margin, then
    # raised once for what came after: the HTML explorer (+~220 tools, +~90 application) and
    # the grader's and the application's fourth round of hardening (+~120 tools, +~110 app).
    "tools": (TOOLS, 6700),
    "application": (APPLICATION, 6650),
}


def code_lines(tree) -> set:
    """The lines of a module that hold code: not blank, not a comment, not a docstring."""
    docs = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) and \
                isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
            docs.update(range(body[0].lineno, body[0].end_lineno + 1))
    code = set()
    for node in ast.walk(tree):
        for d in getattr(node, "decorator_list", ()):
            code.update(range(d.lineno, d.end_lineno + 1))
        if isinstance(node, ast.stmt) and isinstance(getattr(node, "body", None), list):
            code.update(range(node.lineno, node.body[0].lineno))   # a header: def, if, for ...
        elif isinstance(node, ast.stmt):
            code.update(range(node.lineno, node.end_lineno + 1))
    return code - docs


def error_lines(tree, file: str) -> set:
    """The lines that handle bad input: a ``checks.py`` module whole (its tables and classes too,
    but its imports), check definitions (``is_check``), and elsewhere every ``raise`` statement
    with the ``if`` that guards it when that ``if`` only raises."""
    found = set()
    if file.endswith("checks.py"):
        for node in tree.body:
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                found.update(range(node.lineno, node.end_lineno + 1))
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and is_check(file, node.name):
            found.update(range(node.lineno, node.end_lineno + 1))
        elif isinstance(node, ast.If) and not node.orelse and \
                all(isinstance(b, ast.Raise) for b in node.body):
            found.update(range(node.lineno, node.end_lineno + 1))
        elif isinstance(node, ast.Raise):
            found.update(range(node.lineno, node.end_lineno + 1))
        elif isinstance(node, ast.ExceptHandler) and all(isinstance(b, ast.Raise) for b in node.body):
            found.update(range(node.lineno, node.end_lineno + 1))
    return found


def error_share(files) -> tuple:
    """(error-handling code lines, code lines) over ``files``."""
    errors = code = 0
    for f in files:
        tree = ast.parse((ROOT / f).read_text(encoding="utf-8"))
        lines_ = code_lines(tree)
        code += len(lines_)
        errors += len(error_lines(tree, f) & lines_)
    return errors, code


def lines(files) -> int:
    return sum(len((ROOT / f).read_text(encoding="utf-8").splitlines()) for f in files)


def rooms() -> str:
    errors, code = error_share(CORE)
    return "\n".join([f"{room}: {lines(files)} lines in {len(files)} files (budget {budget})"
                      for room, (files, budget) in ROOMS.items()] +
                     [f"the core's error handling: {errors} of {code} code lines, "
                      f"{100 * errors / code:.0f}% (budget 15%)"])


# ---- the tests ---------------------------------------------------------------------------------

# A path not yet within its budget may not grow: its ceiling is what it runs today, lowered as
# it is cut. (Remove a path's entry when it fits its budget.) The core's was raised once, from
# 3,718 by 25 lines: the one-line refusal of PyTorch's dim=/keepdim= (tensor.numpy_keywords, and
# log_softmax's VJP named apart, as linear's is, so that the decorated op keeps to 12 lines).
CEILING = {"core": 3743, "error share": 0.193}


@pytest.mark.parametrize("path", PATHS, ids=[p.scenario.__name__ for p in PATHS])
def test_each_reading_path_fits_its_budget(path):
    c = cost(path)
    lines, files = CEILING.get(path.scenario.__name__, (path.budget, path.max_files))
    assert c.lines <= lines and c.files <= files, (
        f"{path.concept}: {c.lines} lines run in {c.files} files, the budget is {path.budget} "
        f"lines in {path.max_files} files (today's ceiling: {lines} in {files}):\n{c.listing()}")


LESSON = ("minigrad/ops.py", "minigrad/shape_ops.py", "minigrad/functional.py")


def public_functions(file: str):
    """The public ops of ``file``: its top-level functions but the private ones and the checks."""
    tree = ast.parse((ROOT / file).read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and not node.name.startswith("_") and \
                not is_check(file, node.name):
            first = min([d.lineno for d in node.decorator_list] + [node.lineno])
            yield node.name, node.end_lineno - first + 1


@pytest.mark.parametrize("file", LESSON)
def test_every_public_op_of_a_lesson_file_fits_in_twelve_lines(file):
    long = {name: n for name, n in public_functions(file) if n > 12}
    assert not long, f"{file}: these ops are longer than 12 lines: {long}"


def test_from_an_op_to_the_engine_is_at_most_forty_lines():
    c = cost(PATHS[1])
    rest = sum(b - a + 1 for f, a, b, n in c.definitions if (f, n) != ("minigrad/ops.py", "mul"))
    assert rest <= 40, c.listing()


def test_the_tracer_counts_outermost_definitions_once(tmp_path, monkeypatch):
    (tmp_path / "minigrad").mkdir()
    source = ("def f(x):\n    '''doc'''\n    g = lambda y: y + 1\n    return g(x)\n\n"
              "class A:\n    @staticmethod\n    def m():\n        return f(1)\n\n"
              "h = lambda: A.m()\n")
    (tmp_path / "minigrad" / "m.py").write_text(source)
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    definitions.cache_clear()
    namespace = {}
    exec(compile(source, str(tmp_path / "minigrad" / "m.py"), "exec"), namespace)
    c = Cost.of(trace(lambda: (namespace["h"](), namespace["h"]())))
    definitions.cache_clear()
    assert [d[3] for d in c.definitions] == ["f", "A.m", "<lambda>"]
    assert (c.lines, c.files) == (4 + 3 + 1, 1)


def test_a_check_is_counted_but_shown_apart():
    assert is_check("attention/checks.py", "read_inputs")
    assert is_check("minigrad/engine.py", "Tensor._check_saved")
    assert not is_check("minigrad/engine.py", "Tensor.backward")


@pytest.mark.parametrize("room", ROOMS)
def test_each_room_fits_its_total_over_whole_files(room):
    files, budget = ROOMS[room]
    ceiling = CEILING.get(room, budget)
    assert lines(files) <= ceiling, (f"the {room} room is {lines(files)} lines, budget {budget} "
                                     f"(today's ceiling {ceiling})")


def test_the_cores_error_handling_is_at_most_fifteen_percent_of_its_code():
    errors, code = error_share(CORE)
    assert errors / code <= CEILING.get("error share", 0.15), (
        f"the core's error handling is {errors} of {code} code lines ({errors / code:.0%})")


def test_the_error_share_counts_guards_and_checks_not_the_code_they_guard():
    tree = ast.parse('def f(x):\n    """doc"""\n    if x < 0:\n        raise ValueError("no")\n'
                     '\n    # a comment\n    return x\n\ndef check_x(x):\n    return x\n')
    assert code_lines(tree) == {1, 3, 4, 7, 9, 10}
    assert error_lines(tree, "m.py") == {3, 4, 9, 10}
    table = ast.parse('import numpy\nRULES = {"p": lambda p: 0 <= p < 1}\ndef fit(x):\n    return x\n')
    assert error_lines(table, "checks.py") & code_lines(table) == {2, 3, 4}   # a table counts


def test_every_library_file_is_in_exactly_one_room():
    every = files_of("minigrad/**/*.py", "attention/**/*.py", "models/**/*.py")
    placed = [f for files, _ in ROOMS.values() for f in files]
    assert sorted(placed) == sorted(every)


def test_no_line_of_the_library_is_wider_than_100_characters():
    wide = [f"{f}:{i}:{len(line)}" for files, _ in ROOMS.values() for f in sorted(files)
            for i, line in enumerate((ROOT / f).read_text(encoding="utf-8").splitlines(), 1)
            if len(line) > 100]
    assert not wide, "lines wider than 100 characters (file:line:length):\n" + "\n".join(wide)


def test_the_readmes_reading_order_table_is_what_the_tracer_measures():
    want = table().splitlines()
    english = (ROOT / "README.md").read_text(encoding="utf-8")
    assert all(row in english for row in want[2:]), (
        "README.md's Reading order table is stale: run `python tests/test_reading_budget.py "
        "--write`")
    chinese = (ROOT / "README.zh-CN.md").read_text(encoding="utf-8")
    for row in want[2:]:
        tail = row.split(" | ", 1)[1]
        assert " | " + tail in chinese, f"README.zh-CN.md lacks: {tail}"


def write(readme: pathlib.Path, rows: list) -> None:
    """Put ``rows``' figures into the table of ``readme`` whose separator is ``|---|---|---|---|``
    (each row keeps its own concept column: the Chinese README translates it)."""
    lines_ = readme.read_text(encoding="utf-8").split("\n")
    start = lines_.index("|---|---|---|---|") + 1
    for i, row in enumerate(rows):
        concept = lines_[start + i].split(" | ", 1)[0]
        lines_[start + i] = concept + " | " + row.split(" | ", 1)[1]
    readme.write_text("\n".join(lines_), encoding="utf-8")


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    print(table())
    print()
    print(rooms())
    if "--list" in sys.argv:
        for p in PATHS:
            print(f"\n{p.concept}\n{cost(p).listing()}")
    if "--write" in sys.argv:
        for name in ("README.md", "README.zh-CN.md"):
            write(ROOT / name, table().splitlines()[2:])
