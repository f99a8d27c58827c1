"""The layering, read from the imports: each package imports only the ones below it.

minigrad  <-  attention  <-  models (the model)  <-  models.app (the application)

No library module imports benchmarks or tests. Imports inside functions count too.
"""
import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]

FORBIDDEN = {  # package (a folder) -> top-level names it must not import
    "minigrad": {"attention", "models", "benchmarks", "tests"},
    "attention": {"models", "benchmarks", "tests"},
    "models": {"benchmarks", "tests"},
}


def imported_modules(path: pathlib.Path):
    """Every module named by an import statement in the file, with its line number."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module, node.lineno
            for alias in node.names:  # "from models import app" names models.app
                yield f"{node.module}.{alias.name}", node.lineno


def violations(package: str, rule) -> list:
    found = []
    for path in sorted((ROOT / package).rglob("*.py")):
        for module, line in imported_modules(path):
            if rule(path, module):
                found.append(f"{path.relative_to(ROOT)}:{line} imports {module}")
    return found


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_a_package_imports_nothing_above_it(package):
    bad = FORBIDDEN[package]
    assert violations(package, lambda path, module: module.split(".")[0] in bad) == []


def test_the_model_never_imports_the_application():
    def rule(path, module):
        in_app = (ROOT / "models" / "app") in path.parents
        return not in_app and path.name != "__main__.py" and module.startswith("models.app")
    assert violations("models", rule) == []


def test_the_rule_reader_sees_imports_inside_functions(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("def g():\n    from models.app import cli\n    import attention.scores\n")
    assert set(imported_modules(f)) >= {("models.app", 2), ("models.app.cli", 2),
                                        ("attention.scores", 3)}


# ---- no import cycles -------------------------------------------------------------------------
# Each module of the three packages, and the modules it names in an import statement (at the
# top or inside a function; an ``if __name__ == "__main__":`` block only runs as a script and
# does not count). A package's ``__init__`` importing its own modules is not an edge back:
# only modules named explicitly are.

def module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for pkg in FORBIDDEN for p in (ROOT / pkg).rglob("*.py")}
MODULE_OF = {p: name for name, p in MODULES.items()}


def imports_of(path: pathlib.Path) -> set:
    """The project modules that ``path`` names in its imports (outside a __main__ block)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    main_blocks = [n for n in tree.body if isinstance(n, ast.If) and "__main__" in ast.dump(n.test)]
    skip = {id(n) for block in main_blocks for n in ast.walk(block)}
    found = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                 [f"{node.module}.{a.name}" for a in node.names] + [node.module]
                 if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module else [])
        for name in names:
            while name and name not in MODULES:
                name = name.rpartition(".")[0]
            if name:
                found.add(name)
                break  # "from a.b import c": c if it is a module, else a.b
    return found - {MODULE_OF.get(path)}


def cycles(graph: dict) -> list:
    """The strongly connected components of more than one module (Tarjan, iteratively)."""
    index, low, on, stack, found, counter = {}, {}, set(), [], [], [0]
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter[0]; counter[0] += 1; stack.append(start); on.add(start)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]; counter[0] += 1; stack.append(w); on.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop(); on.discard(w); comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        found.append(sorted(comp))
    return found


def test_no_module_imports_in_a_circle():
    graph = {name: imports_of(path) for name, path in MODULES.items()}
    assert cycles(graph) == []


def test_the_cycle_finder_finds_a_cycle_through_a_function_level_import(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("def g():\n    from minigrad import engine\n"
                 "if __name__ == '__main__':\n    import attention.read\n")
    assert imports_of(f) == {"minigrad.engine"}
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


# ---- the core imports no tool ---------------------------------------------------------------

def test_the_core_imports_no_tool():
    """The core (``tests/test_reading_budget.py``'s room) names no module of the tools, the
    kernels or the application in any import: a learner reads the core without them."""
    from test_reading_budget import APPLICATION, CORE, KERNELS, TOOLS
    outside = {module_name(ROOT / f) for f in TOOLS | KERNELS | APPLICATION}
    found = [f"{f} imports {m}" for f in sorted(CORE) for m in imports_of(ROOT / f) if m in outside]
    assert found == []
