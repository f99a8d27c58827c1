"""The terminal the drawings and tables print to: any encoding, and a pipe that closes early.

- ``tolerant_output()``: a character the output's encoding cannot write (``≤``, ``░``, ``┌``
  under ``PYTHONIOENCODING=ascii`` or ``latin-1``) is written as ASCII (``<=``, ``.``, ``+``;
  ``?`` for one with no stand-in) instead of raising ``UnicodeEncodeError`` mid-run. Under
  UTF-8 nothing changes.
- ``run_main(main, argv)``: runs a command-line ``main`` with tolerant output; when the reader
  of a pipe goes away (``python -m minigrad.gradcheck | head -1``) it stops quietly, exit
  status 0, instead of a ``BrokenPipeError`` traceback: the reader took what it wanted, so a
  script under ``set -o pipefail`` does not fail on it (a shell would report 141, 128 +
  SIGPIPE, for a program the signal killed). ``closed_pipe()`` is that exit, for a ``main``
  that catches the error itself. Output that cannot be written (a full disk, ``> /dev/full``)
  gives one line on stderr and status 1, never a traceback.
"""
from __future__ import annotations

import argparse
import codecs
import errno
import os
import sys

from minigrad import i18n

CLOSED_PIPE = 0  # the reader stopped reading: not a failure of ours
# Stand-ins for the symbols this project prints (shades, box drawing, math); the shades keep
# their order from light to dark.
ASCII = {"≤": "<=", "≥": ">=", "≠": "!=", "≈": "~", "×": "x", "·": "*", "−": "-", "→": "->",
         "←": "<-", "…": "...", "–": "-", "—": "-", "’": "'", "‘": "'", "“": '"', "”": '"',
         "░": ".", "▒": ":", "▓": "x", "█": "#", "─": "-", "━": "-", "│": "|", "┃": "|",
         "┌": "+", "┐": "+", "└": "+", "┘": "+", "├": "+", "┤": "+", "┬": "+", "┴": "+",
         "┼": "+", "␣": "_", "∅": "{}", "α": "a", "β": "b", "θ": "th", "λ": "lambda", "Σ": "sum",
         "∂": "d", "√": "sqrt", "²": "^2", "ᵀ": "^T", "\u0303": "~", "✓": "ok", "✗": "x",
         "•": "*", "±": "+-", "°": "deg", "§": "S", "‖": "|", "¹": "^1", "⁻": "^-", "δ": "d",
         "ε": "eps", "π": "pi", "σ": "sigma", "∇": "grad", "∈": "in", "⊙": "*", "⌈": "ceil(",
         "⌉": ")", "▸": ">", "␄": "<eos>", "␡": "<del>"}
HANDLER = "minigrad-ascii"


def _ascii(error: UnicodeEncodeError):
    """The codec error handler: the unwritable run of characters, in ASCII stand-ins."""
    bad = error.object[error.start:error.end]
    return "".join(ASCII.get(c, "?") for c in bad), error.end


def tolerant_output(*streams) -> None:
    """Let ``streams`` (default: stdout and stderr) write what their encoding cannot as ASCII."""
    codecs.register_error(HANDLER, _ascii)  # here, not at import: importing changes nothing
    for stream in streams or (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)  # not on every stand-in (pytest's)
        if reconfigure is not None:
            reconfigure(errors=HANDLER)


def closed_pipe() -> int:
    """The reader of stdout went away: send what is left to devnull (so the flush at exit
    cannot fail again) and return the exit status ``CLOSED_PIPE``."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout is no file (a test's stand-in): nothing to redirect
        pass
    return CLOSED_PIPE


def list_programs(prog: str, title: str, programs, _):
    """A ``main(argv)`` for ``python -m <package>``: ``title``, then each program and what it
    does (translated by ``_``, which ``--lang`` sets); it runs nothing."""
    def main(argv=None) -> int:
        parser = argparse.ArgumentParser(prog=prog)
        i18n.add_argument(parser)
        i18n.apply(parser.parse_args(argv))
        print(_(title))
        for command, what in programs:
            print(f"  {command:<32}  {_(what)}")
        return 0
    return main


def run_main(main, argv=None) -> int:
    """``main(argv)`` with tolerant output; a closed pipe ends it quietly (``CLOSED_PIPE``), an
    output that cannot be written (``> /dev/full``) with one line on stderr and status 1."""
    tolerant_output()
    try:
        status = main(argv)
        if sys.stdout is not None:  # None: started with stdout closed (`>&-`), print is a no-op
            sys.stdout.flush()  # a closed pipe shows up here, not at exit
        return status
    except BrokenPipeError:
        return closed_pipe()
    except OSError as e:
        if e.errno not in (errno.ENOSPC, errno.EIO, errno.EDQUOT, errno.EBADF):
            raise
        closed_pipe()  # the rest goes to devnull, so the flush at exit cannot fail again
        if sys.stderr is not None:
            print(f"error: the output could not be written: {e.strerror or e}", file=sys.stderr)
        return 1
