"""``python -m models.app.tours 004``: walk through one source, section by section.

``--list`` names them; ``--lang zh`` prints in Chinese (the same walkthrough, its messages from
the ``models`` catalog; ``python -m models.app.tours.zh 004`` writes it with its Markdown in
Chinese, to read as a notebook). The walkthroughs call all three layers (minigrad,
attention, models), so they live here, in the top one. Exit status 1 when a number the source
printed does not come out of the code.
"""
from __future__ import annotations

import argparse
import sys

from minigrad import i18n
from minigrad.draw.console import run_main
from models.app.tours import TOURS, run
from models.app.runs import writable_folder
from models.app.tours.book import _


def main(argv=None) -> int:
    return run_main(_main, argv)  # any encoding; `| head` stops it quietly


def _main(argv=None) -> int:
    first = argparse.ArgumentParser(prog="python -m models.app.tours", add_help=False)
    i18n.add_argument(first)
    i18n.apply(first.parse_known_args(argv)[0])  # the language first: --help is printed in it
    parser = argparse.ArgumentParser(prog="python -m models.app.tours",
                                     description=_("Walk through one source, section by section."))
    parser.add_argument("source", nargs="?", choices=sorted(TOURS), help=_("which source"))
    parser.add_argument("--list", action="store_true", help=_("name the walkthroughs and exit"))
    parser.add_argument("--out", default="attention-tour", metavar="DIR",
                        help=_("folder for SVG figures (default: ./attention-tour)"))
    parser.add_argument("--no-svg", action="store_true", help=_("write no SVG files"))
    i18n.add_argument(parser)
    args = parser.parse_args(argv)
    i18n.apply(args)
    if args.list or args.source is None:
        for name, (_file, about) in TOURS.items():
            print(f"{name}  {_(about)}")
        return 0
    try:  # before the first section: a folder it cannot write in is said in one line
        if not args.no_svg:
            writable_folder(args.out)
    except ValueError as e:
        print(_("error: {e}").format(e=e), file=sys.stderr)
        return 2
    book = run(args.source, None if args.no_svg else args.out)
    differ = [c for c in book.checks if not c.agrees]
    if book.checks:
        summary = _("{agree} of {total} numbers agree with the source's printed digits").format(
            agree=len(book.checks) - len(differ), total=len(book.checks))
        if differ:
            summary += _("; differ: {names}").format(names=", ".join(c.what for c in differ))
        print("\n" + summary)
    else:
        print(_("\n(the source prints no worked numbers to compare; its claims are measured "
                "above)"))
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
