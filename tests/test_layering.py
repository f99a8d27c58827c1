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
