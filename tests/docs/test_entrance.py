"""README.md is an entrance, not a manual; the reference material lives in the guides.

The entrance says what this is, gives the set-up and test commands, a reading order (concept | files
| lines for the five reading paths), the demos, the exercises and links to the guides, in at
most 300 lines. Internals (memory allocators, fsync, process tuning) are for the guides. Every
document's links stay inside the repository, and each measured figure stays beside the command
that regenerates it (benchmarks/readme_figures.py's `WHERE` names the files).
"""
import re

import pytest

from benchmarks import readme_figures
from readme_blocks import CHINESE, ENGLISH, GUIDES, LINK, ROOT, TWINS, rel, sections

DOCUMENTS = [p for t in TWINS for p in (t.english, t.chinese)]
# The main demo; the fast specification; the slow end-to-end tests; the PyTorch parity tests.
SETUP = ["pip install . && python -m models", "pip install -e '.[test]' && python -m pytest -q",
         "python -m pytest -q -m slow", "pip install -e '.[parity]' && python -m pytest -q -m parity"]


def section(path, heading):
    found = [s for s in sections(path) if s.heading == heading]
    assert found, f"{rel(path)} has no section '{heading}'"
    return found[0]


def test_the_entrance_is_at_most_300_lines():
    n = len(ENGLISH.read_text(encoding="utf-8").rstrip("\n").split("\n"))
    assert n <= 300, f"README.md has {n} lines; move reference material into a guide"


def test_the_set_up_and_test_commands():
    """One installs and runs the main demo; three install the test extras and run the tests
    (the fast specification, the slow tests, the parity tests). .ci/run runs those three,
    exactly: each install as a line of its own, each pytest command as a line ``run COMMAND``."""
    blocks = section(ENGLISH, "Set-up and tests").code
    assert [(b.lang, b.text) for b in blocks] == [("sh", c) for c in SETUP]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").split("\n")
    for command in SETUP[1:]:
        *install, tests = command.split(" && ")
        assert all(i in ci for i in install) and f"run {tests}" in ci, f".ci/run does not run {command}"
    assert sum(line.startswith("run python -m pytest") for line in ci) == len(SETUP) - 1


def test_the_set_up_gives_commands_not_test_counts_or_suite_times():
    """Counts and times of the test runs go stale with every test added: the set-up says what
    each run covers, not how many tests it holds or how long it took."""
    for path, heading in ((ENGLISH, "Set-up and tests"), (CHINESE, "安装与测试")):
        text = " ".join(section(path, heading).prose)
        found = re.findall(r"\d[\d ,]* (?:tests|passed)|\d[\d ,]* ?个测试|\b\d+:\d\d\b", text)
        assert not found, f"{rel(path)}, set-up: {found}; say what the runs cover instead"


def test_the_reading_order_is_a_table_of_the_five_paths_through_existing_files():
    table = [l for l in section(ENGLISH, "Reading order").prose if l.startswith("|")]
    assert [c.strip() for c in table[0].strip("|").split("|")] == [
        "path", "lines that run (files)", "without checks", "budget"]
    paths = table[2:]
    assert len(paths) == 5, f"the five paths, found {len(paths)}"
    for row in paths:
        files = re.findall(r"`([\w/]+\.py)`", row.split("|")[1])
        assert files, f"no file named in {row}"
        missing = [f for f in files if not (ROOT / f).is_file()]
        assert not missing, f"the reading order names files that do not exist: {missing}"


def test_the_entrance_links_every_guide():
    text = ENGLISH.read_text(encoding="utf-8")
    unlinked = [rel(g) for g in GUIDES if f"]({rel(g)})" not in text]
    assert not unlinked, f"README.md does not link to {unlinked}"


def test_the_entrance_leaves_internals_to_the_guides():
    text = ENGLISH.read_text(encoding="utf-8").lower()
    found = [w for w in ("malloc", "fsync", "umask", "ctypes", "openblas") if w in text]
    assert not found, f"README.md mentions {found}: that belongs in a guide"


@pytest.mark.parametrize("path", DOCUMENTS, ids=rel)
def test_links_stay_inside_the_repository(path):
    """Relative links resolve to a file or folder of this checkout; nothing cites a document
    outside it (the design notes the project was built from are not part of it)."""
    text = path.read_text(encoding="utf-8")
    for target in LINK.findall(text):
        target = target.split("#")[0]
        if re.match(r"[a-z]+:", target) or not target:
            assert path not in (ENGLISH, TWINS[0].chinese), f"{rel(path)} links outside: {target}"
            continue
        resolved = (path.parent / target).resolve()
        assert resolved.is_relative_to(ROOT) and resolved.exists(), (
            f"{rel(path)} links to {target}, which is not a file of this repository")
    cited = [w for w in ("DESIGN.md", "STYLE.md", "../shared", "/shared/") if w in text]
    assert not cited, f"{rel(path)} cites {cited}, outside the repository"


@pytest.mark.parametrize("part", readme_figures.PARTS)
def test_each_figure_is_beside_its_command(part):
    """The files readme_figures.WHERE names hold the command that regenerates the part's
    figures, and so do their Chinese twins."""
    command = f"python -m benchmarks.readme_figures --only {part}"
    twins = {t.english: t.chinese for t in TWINS}
    for name in readme_figures.WHERE[part]:
        for path in (ROOT / name, twins[ROOT / name]):
            text = " ".join(path.read_text(encoding="utf-8").split())  # a command may wrap
            assert command in text, f"{rel(path)} does not name `{command}`"
