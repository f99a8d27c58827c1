"""The readable core keeps its shape: each reading path stays within its budget of lines and
files (``benchmarks/reading_paths.py`` names them), and README.md shows today's counts."""
import re

import pytest

from benchmarks.reading_paths import PATHS, ROOT, Path, count, definition_lines, table


@pytest.mark.parametrize("path", PATHS, ids=[p.concept[:40] for p in PATHS])
def test_each_reading_path_fits_its_budget(path):
    lines, files = count(path)
    assert lines <= path.budget and files <= path.max_files, (
        f"{path.concept}: {lines} lines in {files} files, the budget is {path.budget} lines in "
        f"{path.max_files} files; move checks, speed or tools out of the core, or shorten it")


def test_the_cells_and_the_attention_read_live_in_one_file_each():
    assert {f for f, _ in PATHS[4].parts + PATHS[5].parts} == {"models/recurrent.py"}
    assert {f for f, _ in PATHS[3].parts} == {"attention/read.py"}


def test_definition_lines_counts_a_method_with_its_decorators(tmp_path, monkeypatch):
    (tmp_path / "m.py").write_text("class A:\n    @staticmethod\n    def f():\n        return 1\n\n"
                                   "def g():\n    pass\n")
    monkeypatch.setattr("benchmarks.reading_paths.ROOT", tmp_path)
    assert definition_lines("m.py", "A.f") == 3 and definition_lines("m.py", "g") == 2
    assert definition_lines("m.py", None) == 7
    assert count(Path("x", (("m.py", "A"), ("m.py", "A")), 9, 1)) == (4, 1)
    with pytest.raises(LookupError, match="no definition 'A.h'"):
        definition_lines("m.py", "A.h")


def test_the_readmes_reading_order_table_is_what_the_command_prints():
    """The figures in README.md's table come from ``python -m benchmarks.reading_paths``; the
    Chinese README has the same files and counts (its concept column is translated)."""
    want = table().splitlines()
    english = (ROOT / "README.md").read_text(encoding="utf-8")
    assert all(row in english for row in want), (
        "README.md's Reading order table is stale: paste `python -m benchmarks.reading_paths`")
    chinese = (ROOT / "README.zh-CN.md").read_text(encoding="utf-8")
    for row in want[2:]:
        tail = row.split(" | ", 1)[1]  # files | lines
        assert re.search(re.escape(" | " + tail), chinese), f"README.zh-CN.md lacks: {tail}"
