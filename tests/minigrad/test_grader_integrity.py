"""The checker refuses to run when its own files or reference data differ from their digests,
and a learner's file cannot change them (so it cannot change a later verdict)."""
import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from minigrad.exercises import integrity

PACKAGE = Path(integrity.__file__).parent.parent  # minigrad/
FILTERED = sys.platform.startswith("linux") and platform.machine() == "x86_64"


def test_the_digests_are_current():
    problem = integrity.problem()
    assert problem is None, (f"{problem}\nAfter changing minigrad/exercises on purpose, run "
                             f"`{integrity.REGENERATE}` and commit {integrity.DIGESTS}")


def test_a_changed_extra_or_missing_file_is_refused_in_one_line(tmp_path):
    shutil.copytree(PACKAGE, tmp_path / "minigrad", ignore=shutil.ignore_patterns("__pycache__"))
    root = tmp_path / "minigrad" / "exercises"
    assert integrity.problem(root) is None
    diagnose = root / "diagnose.py"
    kept = diagnose.read_bytes()
    diagnose.write_bytes(kept.replace(b"TOL = 1e-5", b"TOL = 9e+9"))
    (root / "stubs" / "99_extra.py").write_text("")
    line = integrity.problem(root)
    assert "\n" not in line and line.startswith("refusing to check: the checker's own files "
                                                "changed since installation (diagnose.py, "
                                                "stubs/99_extra.py in ")
    assert integrity.REGENERATE in line
    diagnose.write_bytes(kept)
    (root / "stubs" / "99_extra.py").unlink()
    (root / "catalog.py").unlink()
    os.mkfifo(root / "catalog.py")  # a FIFO in a file's place is refused, never waited on
    assert "catalog.py: it is not a regular file" in integrity.problem(root)
    (root / integrity.DIGESTS).unlink()
    assert integrity.problem(root).startswith("refusing to check: the checker's files cannot "
                                              f"be verified (cannot read {integrity.DIGESTS}: ")


TAMPER = """import mmap, os, sys
import minigrad.exercises.diagnose as d
here = os.path.dirname(d.__file__)
digests = os.path.join(here, 'digests.sha256')
def mmap_edit():
    with open(d.__file__, 'r+b') as f:
        m = mmap.mmap(f.fileno(), 0)
        at = m.find(b'TOL = 1e-5')
        m[at:at + 10] = b'TOL = 9e+9'
def tries():
    yield lambda: open(d.__file__, 'a').write('\\nTOL = 1e300\\n')
    yield mmap_edit
    yield lambda: os.replace(digests, digests + '.old')
    yield lambda: os.remove(os.path.join(here, 'checker.py'))
    yield lambda: os.symlink(digests, os.path.join(here, 'evil.py'))
    yield lambda: os.chmod(d.__file__, 0o777)
    yield lambda: os.truncate(d.__file__, 0)
tampered = 0
for t in tries():
    try:
        t()
        tampered += 1
    except (OSError, ValueError):
        pass
def tanh_vjp(g, x):
    raise RuntimeError(f'tampered {tampered}')
"""


def test_a_learners_file_cannot_change_a_later_verdict(tmp_path):
    """On a copy of the package: the learner's code tries to write into the checker (append,
    mmap, rename, delete, symlink, chmod, truncate); every attempt fails, the files stay as
    they were, and a wrong VJP checked afterwards still fails."""
    copy = tmp_path / "pkg"
    shutil.copytree(PACKAGE, copy / "minigrad", ignore=shutil.ignore_patterns("__pycache__"))
    env = {**os.environ, "PYTHONPATH": str(copy)}
    run = lambda *args: subprocess.run([sys.executable, "-B", *args], cwd=copy, env=env,
                                       capture_output=True, text=True, timeout=120)
    where = run("-c", "import minigrad; print(minigrad.__file__)").stdout.strip()
    assert where == str(copy / "minigrad" / "__init__.py")  # never the real package
    before = {p: p.read_bytes() for p in (copy / "minigrad" / "exercises").rglob("*.*")}
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "02_tanh.py").write_text(TAMPER)
    first = run("-m", "minigrad.exercises", "check", "tanh", "--dir", str(tmp_path / "a"))
    assert first.returncode == 1 and "tanh_vjp raised RuntimeError: tampered" in first.stdout
    if FILTERED:
        assert "tampered 0" in first.stdout
        after = {p: p.read_bytes() for p in (copy / "minigrad" / "exercises").rglob("*.*")}
        assert after == before
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "02_tanh.py").write_text("def tanh_vjp(g, x):\n    return g * 0.5\n")
    later = run("-m", "minigrad.exercises", "check", "tanh", "--dir", str(tmp_path / "b"))
    assert later.returncode in (1, 2) and "done." not in later.stdout
    if FILTERED:  # nothing changed, so it is checked, and fails
        assert later.returncode == 1 and "tanh: 0 of " in later.stdout

    # code running as the same user outside the check can change the files: then it refuses
    diagnose = copy / "minigrad" / "exercises" / "diagnose.py"
    diagnose.write_bytes(diagnose.read_bytes().replace(b"TOL = 1e-5", b"TOL = 9e+9"))
    refused = run("-m", "minigrad.exercises", "check", "tanh", "--dir", str(tmp_path / "b"))
    assert refused.returncode == 2 and refused.stdout == ""
    assert refused.stderr.startswith("error: refusing to check: the checker's own files changed "
                                     "since installation (diagnose.py in ")
    assert refused.stderr.count("\n") == 1


@pytest.mark.parametrize("command", ["list", "check --all"])
def test_every_checking_command_refuses(tmp_path, monkeypatch, capsys, command):
    from minigrad.exercises.__main__ import main
    monkeypatch.setattr(integrity, "problem", lambda root=None: "refusing to check: test")
    assert main(command.split() + ["--dir", str(tmp_path)]) == 2
    assert capsys.readouterr().err == "error: refusing to check: test\n"


def test_the_digests_ship_with_the_package():
    """Without them an installed (not editable) checker would refuse to run."""
    import configparser
    cfg = configparser.ConfigParser()
    cfg.read(PACKAGE.parent / "setup.cfg")
    shipped = cfg["options.package_data"]["minigrad"].replace(",", " ").split()
    assert f"exercises/{integrity.DIGESTS}" in shipped and "exercises/stubs/*.py" in shipped
