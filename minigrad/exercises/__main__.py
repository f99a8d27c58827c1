"""The command line: list, start, check, hint. Run ``python -m minigrad.exercises -h``."""
from __future__ import annotations

import os
import sys

if __name__ == "__main__" and sys.path and sys.path[0] in ("", os.getcwd()):
    del sys.path[0]  # `python -m` put the current folder first: import nothing more from it

import argparse  # noqa: E402 (after the line above)
import signal  # noqa: E402
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from minigrad.exercises import all_exercises, check_file, child, copy_stubs, find, integrity, report

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
    print(f"{'#':>2}  {'name':<19} {'level':<6} {'status':<16} formula")
    for e, rep in zip(all_exercises(), _check_all(folder)):
        status = report.status_word(rep) if (folder / e.file).exists() else "-"
        print(f"{e.number:2d}  {e.name:<19} {'★' * e.stars:<6} {status:<16} {e.formula}")
    print(f"\nstatus is for the files in {folder.resolve()}; copy the stubs with `{PROGRAM} "
          f"start DIR`, then `{PROGRAM} check NAME --dir DIR`")
    return 0


def cmd_start(args) -> int:
    try:
        copied, kept = copy_stubs(args.dir)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    folder = Path(args.dir)
    if copied:
        print(f"copied {len(copied)} stub(s) into {folder}: {', '.join(copied)}")
    if kept:
        print(f"kept {len(kept)} file(s) already there (not overwritten): {', '.join(kept)}")
    first = all_exercises()[0]
    print(f"\nNext: open {folder / first.file}, write {first.function}, then run\n"
          f"  {PROGRAM} check {first.name} --dir {folder}")
    return 0


def cmd_check(args) -> int:
    if args.all == bool(args.name):
        print("check: give an exercise NAME or --all", file=sys.stderr)
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
    title = ["shape bookkeeping", "the formula"][level - 1]
    print(f"{e.name}, hint {level} of {len(e.hints)} ({title}):\n")
    print("\n".join(report.wrap(e.hints[level - 1], "", "")))
    if level < len(e.hints):
        print(f"\nStill stuck? {PROGRAM} hint {e.name} --level {level + 1}")
    return 0


def cmd_digests(args) -> int:
    print(f"wrote {integrity.write()} ({len(integrity.files())} files)")
    return 0


def cmd_overview(args) -> int:
    """The bare command: the list, then the other commands in one line."""
    cmd_list(args)
    print(f"\nusage: {PROGRAM} start DIR | check NAME [--dir DIR] | check --all | "
          f"hint NAME [--level 2]   (-h for more)")
    return 0


def _find(name):
    try:
        return find(name)
    except KeyError as err:
        print(err.args[0], file=sys.stderr)
        raise SystemExit(2)


def main(argv=None, program: bool = False) -> int:
    if sys.stdout.encoding and sys.stdout.encoding.lower().replace("-", "") != "utf8":
        sys.stdout.reconfigure(errors="replace")  # ★, ⊙ and ᵀ on a terminal that lacks them
    parser = argparse.ArgumentParser(prog=PROGRAM, description="Gradient-check exercises: "
                                     "write VJPs in plain NumPy and have them checked.")
    sub = parser.add_subparsers(dest="command")  # none: the list, then how to go on
    p = sub.add_parser("list", help="the exercises, easy to hard, and which are done")
    p.add_argument("--dir", default=".", help="your exercise folder (default: .)")
    p.set_defaults(run=cmd_list)
    p = sub.add_parser("start", help="copy the stubs into DIR (never overwrites a file)")
    p.add_argument("dir", metavar="DIR")
    p.set_defaults(run=cmd_start)
    p = sub.add_parser("check", help="check NAME (or --all) against finite differences")
    p.add_argument("name", nargs="?", metavar="NAME")
    p.add_argument("--all", action="store_true", help="check every exercise, one line each")
    p.add_argument("--dir", default=".", help="your exercise folder (default: .)")
    p.set_defaults(run=cmd_check)
    p = sub.add_parser("hint", help="a graded hint: level 1 shapes, level 2 the formula")
    p.add_argument("name", metavar="NAME")
    p.add_argument("--level", type=int, default=1, choices=(1, 2))
    p.set_defaults(run=cmd_hint)
    p = sub.add_parser("digests", help="for contributors: record the digests of the "
                       "checker's files after changing them")
    p.set_defaults(run=cmd_digests)
    parser.set_defaults(run=cmd_overview, dir=".")
    args = parser.parse_args(argv)
    refusal = integrity.problem() if args.run in (cmd_list, cmd_check, cmd_overview) else None
    if refusal:
        print(f"error: {refusal}", file=sys.stderr)
        return 2
    stopped = []
    def stop(signum, frame):  # SIGTERM ends the checks as Ctrl-C does; once: more wait for it
        stopped.append(signum)
        if len(stopped) == 1:
            raise KeyboardInterrupt
    main_thread = threading.current_thread() is threading.main_thread()
    signals = (signal.SIGINT, signal.SIGTERM) if main_thread else ()
    previous = {s: signal.signal(s, stop) for s in signals}
    child.STOPPING.clear()
    try:
        status = args.run(args)
        sys.stdout.flush()  # a closed pipe shows up here, not at exit
        return status
    except BrokenPipeError:  # e.g. `... list | head`: stop quietly, as other tools do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except KeyboardInterrupt:  # every child is dead by now (each check kills its own)
        child.stop_all()
        print("stopped: the check was interrupted, nothing was judged", file=sys.stderr)
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
