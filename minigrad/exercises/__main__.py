"""The command line: list, start, check, hint. Run ``python -m minigrad.exercises -h``."""
from __future__ import annotations

import os
import sys

try:
    HERE = os.getcwd()
except OSError:  # the current folder was deleted: nothing can be imported from it
    HERE = ""
if __name__ == "__main__" and sys.path and sys.path[0] in ("", HERE):
    del sys.path[0]  # `python -m` put the current folder first: import nothing more from it

try:  # Ctrl-C while the program starts: it ends quietly (exercises/__init__ does the same)
    import argparse
    import errno
    import signal
    import threading
    from concurrent.futures import ThreadPoolExecutor
    from pathlib import Path

    from minigrad import i18n
    from minigrad.draw.common import pad  # by terminal columns: a Chinese character takes 2
    from minigrad.draw.console import closed_pipe
    from minigrad.exercises import (all_exercises, check_file, child, copy_stubs, find,
                                    integrity, report)
except KeyboardInterrupt:
    raise SystemExit(130) from None

_ = i18n.translator("minigrad")
PROGRAM = report.PROGRAM


def _check_all(folder: Path) -> list:
    """``check_file`` for every exercise, a few child processes at a time, in order."""
    with ThreadPoolExecutor(max_workers=min(4, os.cpu_count() or 1)) as pool:
        try:
            return list(pool.map(lambda e: check_file(e, folder), all_exercises()))
        except BaseException:  # Ctrl-C or SIGTERM: kill the running children, start no more
            child.stop_all()
            raise


def cmd_list(args) -> int:
    folder = Path(args.dir)
    if not folder.is_dir():  # every status would be "-": say why once instead
        print(_("error: there is no folder {folder}: make it with `{program} start {folder}`, "
                "or name your exercise folder with --dir").format(
                    folder=integrity.printable(args.dir), program=PROGRAM), file=sys.stderr)
        return 2
    print(_(" #  name                level  status           formula"))  # the columns below
    for e, rep in zip(all_exercises(), _check_all(folder)):
        status = report.status_word(rep) if (folder / e.file).exists() else "-"
        print(f"{e.number:2d}  {e.name:<19} {'★' * e.stars:<6} {pad(status, 16)} "
              f"{_(e.formula)}")
    print("\n" + _("status is for the files in {folder}; copy the stubs with `{program} start "
                   "DIR`, then `{program} check NAME --dir DIR`").format(
                       folder=folder.resolve(), program=PROGRAM))
    return 0


def cmd_start(args) -> int:
    try:
        copied, kept = copy_stubs(args.dir)
    except ValueError as e:
        print(_("error: {problem}").format(problem=e), file=sys.stderr)
        return 2
    folder = Path(args.dir)
    if copied:
        print(_("copied {n} stub(s) into {folder}: {files}").format(
            n=len(copied), folder=folder, files=", ".join(copied)))
    if kept:
        print(_("kept {n} file(s) already there (not overwritten): {files}").format(
            n=len(kept), files=", ".join(kept)))
    done = 0  # the exercises passing, in order, up to the first that does not (a kept file)
    for e in all_exercises():
        if e.file in copied or check_file(e, folder).status != "done":
            break
        done += 1
    else:
        print("\n" + _("All {n} exercises pass: nothing left to do (`{program} list --dir "
                       "{folder}` shows them)").format(n=done, program=PROGRAM, folder=folder))
        return 0
    print("\n" + (_("{done} exercise(s) already pass. ").format(done=done) if done else "") +
          _("Next: open {path}, write {function}, then run\n"
            "  {program} check {name} --dir {folder}").format(
                path=folder / e.file, function=e.function, program=PROGRAM, name=e.name,
                folder=folder))
    return 0


def cmd_check(args) -> int:
    if args.all == bool(args.name):
        print(_("check: give an exercise NAME or --all"), file=sys.stderr)
        return 2
    folder = Path(args.dir)
    if args.all:
        reports = _check_all(folder)
        print(report.summary(reports))
        return 0 if all(r.status == "done" for r in reports) else 1
    rep = check_file(_find(args.name), folder)
    print(report.full(rep))
    return 0 if rep.status == "done" else 1


def cmd_hint(args) -> int:
    e = _find(args.name)
    level = min(max(args.level, 1), len(e.hints))
    title = [_("shape bookkeeping"), _("the formula")][level - 1]
    print(_("{name}, hint {level} of {total} ({title}):").format(
        name=e.name, level=level, total=len(e.hints), title=title) + "\n")
    print("\n".join(report.wrap(_(e.hints[level - 1]), "", "")))
    if level < len(e.hints):
        print("\n" + _("Still stuck? {program} hint {name} --level {level}").format(
            program=PROGRAM, name=e.name, level=level + 1))
    return 0


def cmd_digests(args) -> int:
    print(_("wrote {path} ({n} files)").format(path=integrity.write(), n=len(integrity.files())))
    return 0


def cmd_overview(args) -> int:
    """The bare command: the list, then the other commands in one line."""
    cmd_list(args)
    print("\n" + _("usage: {program} start DIR | check NAME [--dir DIR] | check --all | "
                   "hint NAME [--level 2]   (-h for more)").format(program=PROGRAM))
    return 0


def _find(name):
    try:
        return find(name)
    except KeyError:  # registry.find's message, in the learner's language
        names = ", ".join(e.name for e in all_exercises())
        print(_("no exercise called {name!r}; the exercises are: {names}").format(
            name=name, names=names), file=sys.stderr)
        raise SystemExit(2)


def _folder_problem(folder: str) -> str | None:
    """Why ``--dir`` cannot be the exercise folder (a file, or in a deleted folder), or None."""
    if not HERE and not os.path.isabs(folder):
        return _("the current folder no longer exists: cd to your exercise folder, or give "
                 "--dir DIR")
    if os.path.exists(folder) and not os.path.isdir(folder):
        return _("--dir {folder} is a file, not a folder: name the folder of your exercise "
                 "files").format(folder=integrity.printable(folder))
    return None


def _language(argv) -> None:
    """Set the language from ``--lang`` wherever it stands (before or after the command),
    before the help texts are made; the parser checks the value."""
    early = argparse.ArgumentParser(add_help=False, exit_on_error=False)
    i18n.add_argument(early)
    try:
        i18n.apply(early.parse_known_args(argv)[0])
    except argparse.ArgumentError:  # e.g. --lang fr: the parser below says so
        i18n.set_language(None)


def main(argv=None, program: bool = False) -> int:
    encoding = getattr(sys.stdout, "encoding", None)  # no stdout (`>&-`): print writes nothing
    if encoding and encoding.lower().replace("-", "") != "utf8":
        sys.stdout.reconfigure(errors="replace")  # ★, ⊙ and ᵀ on a terminal that lacks them
    _language(argv)
    parser = argparse.ArgumentParser(prog=PROGRAM, description=_(
        "Gradient-check exercises: write VJPs in plain NumPy and have them checked."))
    i18n.add_argument(parser)
    sub = parser.add_subparsers(dest="command")  # none: the list, then how to go on
    folder_help = _("your exercise folder (default: .)")
    p = sub.add_parser("list", help=_("the exercises, easy to hard, and which are done"))
    p.add_argument("--dir", default=".", help=folder_help)
    p.set_defaults(run=cmd_list)
    p = sub.add_parser("start", help=_("copy the stubs into DIR (never overwrites a file)"))
    p.add_argument("dir", metavar="DIR")
    p.set_defaults(run=cmd_start)
    p = sub.add_parser("check", help=_("check NAME (or --all) against finite differences"))
    p.add_argument("name", nargs="?", metavar="NAME")
    p.add_argument("--all", action="store_true", help=_("check every exercise, one line each"))
    p.add_argument("--dir", default=".", help=folder_help)
    p.set_defaults(run=cmd_check)
    p = sub.add_parser("hint", help=_("a graded hint: level 1 shapes, level 2 the formula"))
    p.add_argument("name", metavar="NAME")
    p.add_argument("--level", type=int, default=1, choices=(1, 2))
    p.set_defaults(run=cmd_hint)
    p = sub.add_parser("digests", help=_("for contributors: record the digests of the "
                                         "checker's files after changing them"))
    p.set_defaults(run=cmd_digests)
    for p in sub.choices.values():  # --lang after the command, too (_language reads it)
        i18n.add_argument(p)
    parser.set_defaults(run=cmd_overview, dir=".")
    args = parser.parse_args(argv)
    checking = args.run in (cmd_list, cmd_check, cmd_overview)
    refusal = (integrity.problem() or _folder_problem(args.dir)) if checking else None
    if refusal:
        print(_("error: {problem}").format(problem=refusal), file=sys.stderr)
        return 2
    stopped = []
    def stop(signum, frame):  # SIGTERM, SIGHUP... end checks as Ctrl-C does; once: more wait
        stopped.append(signum)
        if len(stopped) == 1:
            raise KeyboardInterrupt
    main_thread = threading.current_thread() is threading.main_thread()
    signals = child.STOPS if main_thread else ()
    previous = {s: signal.signal(s, stop) for s in signals}
    child.STOPPING.clear()
    try:
        status = args.run(args)
        if sys.stdout is not None:
            sys.stdout.flush()  # a closed pipe shows up here, not at exit
        return status
    except OSError as e:  # `... list | head`: quietly, as other tools do; `> /dev/full`: one line
        if e.errno not in (errno.EPIPE, errno.ENOSPC, errno.EIO, errno.EDQUOT, errno.EBADF):
            raise
        closed_pipe()
        if e.errno != errno.EPIPE:
            print(_("error: the output could not be written: {why}").format(
                why=e.strerror or e), file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # every child is dead by now (each check kills its own)
        child.stop_all()
        print(_("stopped: the check was interrupted, nothing was judged"), file=sys.stderr)
        return 128 + (stopped[0] if stopped else signal.SIGINT)
    finally:  # signals held while the handlers change, so none lands between two of them
        masked = signals and hasattr(signal, "pthread_sigmask")
        held = signal.pthread_sigmask(signal.SIG_BLOCK, signals) if masked else None
        for s, handler in previous.items():  # as the program, the check is over: a late Ctrl-C
            signal.signal(s, signal.SIG_IGN if program else  # or SIGTERM prints no traceback
                          signal.SIG_DFL if handler is None else handler)
        if masked:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)


if __name__ == "__main__":
    sys.exit(main(program=True))
