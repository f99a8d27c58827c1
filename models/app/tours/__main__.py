"""``python -m models.app.tours 004``: walk through one source, section by section (``--list``: which).

The walkthroughs call all three layers (minigrad, attention, models), so they live here, in the
top one. Exit status 1 when a number the source printed does not come out of the code.
"""
from __future__ import annotations

import argparse
import os
import sys

from minigrad.draw.console import run_main
from models.app.tours import TOURS, run


def main(argv=None) -> int:
    return run_main(_main, argv)  # any encoding; `| head` stops it quietly


def _main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m models.app.tours",
                                     description="Walk through one source, section by section.")
    parser.add_argument("source", nargs="?", choices=sorted(TOURS), help="which source")
    parser.add_argument("--list", action="store_true", help="name the walkthroughs and exit")
    parser.add_argument("--out", default="attention-tour", metavar="DIR",
                        help="folder for SVG figures (default: ./attention-tour)")
    parser.add_argument("--no-svg", action="store_true", help="write no SVG files")
    args = parser.parse_args(argv)
    if args.list or args.source is None:
        for name, (_, about) in TOURS.items():
            print(f"{name}  {about}")
        return 0
    if not args.no_svg and os.path.exists(args.out) and not os.path.isdir(args.out):
        parser.error(f"--out {args.out!r} exists and is not a folder")
    book = run(args.source, None if args.no_svg else args.out)
    differ = [c for c in book.checks if not c.agrees]
    if book.checks:
        print(f"\n{len(book.checks) - len(differ)} of {len(book.checks)} numbers agree with the "
              f"source's printed digits" + (f"; differ: {', '.join(c.what for c in differ)}" if differ else ""))
    else:
        print("\n(the source prints no worked numbers to compare; its claims are measured above)")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
