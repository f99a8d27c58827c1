"""What the checker trusts: its own files, by digest; a learner's file, by kind and size; a
learner's text, once made printable.

``DIGESTS`` (``digests.sha256``, shipped beside this file) holds the sha256 of every module of
``minigrad.exercises`` and every stub -- the checker and its reference data -- and of what
else decides a verdict: minigrad's own modules and its message catalogs. ``problem()``
compares them with the files as they are now; the checker refuses to run, in one line, when
they differ. After a deliberate change to any of them (the core too), contributors regenerate
the list with

    python -m minigrad.exercises digests

(``tests/minigrad/test_grader_integrity.py`` fails, naming this command, until they do).
"""
from __future__ import annotations

import hashlib
import os
import stat
import unicodedata
from pathlib import Path

from minigrad.i18n import translator

_ = translator("minigrad")

HERE = Path(__file__).parent
DIGESTS = "digests.sha256"
REGENERATE = "python -m minigrad.exercises digests"
MAX_FILE = 1 << 20   # bytes: a learner's file, or one of the checker's
NOT_IMPORTED = {"__main__.py", "gradcheck_cases.py", "higher.py", "i18n_build.py"}  # by it


def read_file(path: Path, limit: int = MAX_FILE, learners: bool = False) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes (a FIFO or device is refused
    without blocking), or a one-line ValueError saying why not. A ``learners`` file is read
    as the learner would: never through a symbolic link, nor, as root, through a second
    name (a hard link): either could name a file only the checker may read."""
    path = Path(path)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)
                     | (getattr(os, "O_NOFOLLOW", 0) if learners else 0))
    except OSError as e:
        why = (_("it is a symbolic link: put the file itself in the folder") if learners
               and os.path.islink(path) else e.strerror or e)
        raise ValueError(_("cannot read {file}: {why}").format(file=path.name, why=why)) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ValueError(_("cannot read {file}: it is not a regular file").format(
                file=path.name))
        if learners and info.st_nlink > 1 and getattr(os, "geteuid", lambda: 1)() == 0:
            raise ValueError(_("cannot read {file}: it has other names (hard links): put a "
                               "copy of it in the folder").format(file=path.name))
        data = b""
        while len(data) <= limit and (chunk := os.read(fd, limit + 1 - len(data))):
            data += chunk
    except OSError as e:
        raise ValueError(_("cannot read {file}: {why}").format(file=path.name,
                                                               why=e.strerror or e)) from None
    finally:
        os.close(fd)
    if len(data) > limit:
        raise ValueError(_("cannot read {file}: it is larger than {kib} KiB").format(
            file=path.name, kib=limit >> 10))
    if learners and b"\0" in data:  # Python source is text: UTF-16 is full of NUL bytes
        raise ValueError(_("cannot read {file}: it holds NUL bytes (saved as UTF-16?): save it "
                           "as UTF-8 text").format(file=path.name))
    return data


def files(root: Path = HERE) -> list:
    """The files the digests cover, relative to ``root``: every module and every stub, and
    what else decides a verdict: minigrad's modules (the ops the forwards call, the numerics
    of ``gradcheck``, ``i18n``) and the message catalogs (``../locale/zh/...``)."""
    package = root.parent
    found = [*root.glob("*.py"), *root.glob("stubs/*.py"), *package.glob("locale/*/*/*.mo"),
             *(p for p in package.glob("*.py") if p.name not in NOT_IMPORTED)]
    return sorted(Path(os.path.relpath(p, root)).as_posix() for p in found)


def digests(root: Path = HERE) -> dict:
    """{relative path: sha256 hex digest}, of the files as they are now."""
    return {name: hashlib.sha256(read_file(root / name)).hexdigest() for name in files(root)}


def problem(root: Path = HERE) -> str | None:
    """None when the checker's files match their digests; else one line saying which differ."""
    try:
        recorded = dict(line.split("  ", 1)[::-1] for line in
                        read_file(root / DIGESTS).decode().splitlines() if line.strip())
        current = digests(root)
    except (ValueError, UnicodeDecodeError) as e:
        return _("refusing to check: the checker's files cannot be verified ({error}); "
                 "reinstall minigrad").format(error=e)
    changed = sorted(set(recorded) ^ set(current)
                     | {k for k in current if recorded.get(k) != current[k]})
    if not changed:
        return None
    shown = ", ".join(changed[:3]) + (" …" if len(changed) > 3 else "")
    return _("refusing to check: the checker's own files changed since installation ({files} "
             "in {folder}); reinstall minigrad (contributors: {command})").format(
                 files=shown, folder=root, command=REGENERATE)


def write(root: Path = HERE) -> Path:
    """Record the digests of the files as they are now."""
    out = root / DIGESTS
    out.write_text("".join(f"{d}  {name}\n" for name, d in digests(root).items()))
    return out


def printable(text: str, limit: int = 2000) -> str:
    """Text that came from the learner (a message, an exception, a file name) as plain
    printable text of at most ``limit`` characters: control codes (which could move the cursor
    over the verdict), lone surrogates (which cannot be printed), and Unicode's spaces other
    than " ", line separators, bidi controls and other invisible format characters all
    become "?". Newlines are kept."""
    return "".join(c if c in "\n " or unicodedata.category(c) not in BAD else "?"
                   for c in text[:limit])


BAD = {"Cc", "Cf", "Cs", "Co", "Cn", "Zs", "Zl", "Zp"}  # control, format, surrogate, ..., spaces
