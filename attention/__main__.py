"""The articles' worked examples, run by this package.

    python -m attention                  # run every demo, in order
    python -m attention --list           # name the demos
    python -m attention 004-example      # one demo (or several names)
    python -m attention --out DIR ...    # folder for the SVG pictures (default ./attention-demos)
    python -m attention --no-svg ...     # terminal output only
    python -m attention tour 004         # a walkthrough of one source (attention/tours/)
    python -m attention tour --list      # name the walkthroughs

Each demo writes only its own file names in the output folder (``004_weights_vs_state.svg``,
``004_graph.svg``, ``000_path_length.svg``), replacing an earlier run's picture of the same name.
The demos that train a model train it with the kernels (``attention/kernels.py``) switched on;
the graph drawings show the composed core.
"""
from __future__ import annotations

import argparse
import os
import sys

from attention.demos import DEMOS, run
from minigrad.draw.console import run_main


def main(argv=None) -> int:
    return run_main(_main, argv)  # any encoding; `| head` stops it quietly


def _tour(argv) -> int:
    from attention.tours import TOURS, run as run_tour
    parser = argparse.ArgumentParser(prog="python -m attention tour",
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
    book = run_tour(args.source, None if args.no_svg else args.out)
    differ = [c for c in book.checks if not c.agrees]
    if book.checks:
        print(f"\n{len(book.checks) - len(differ)} of {len(book.checks)} numbers agree with the "
              f"source's printed digits" + (f"; differ: {', '.join(c.what for c in differ)}" if differ else ""))
    else:
        print("\n(the source prints no worked numbers to compare; its claims are measured above)")
    return 1 if differ else 0


def _main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["tour"]:
        return _tour(argv[1:])
    parser = argparse.ArgumentParser(prog="python -m attention",
                                     description="Run the source articles' worked examples.")
    parser.add_argument("demos", nargs="*", metavar="DEMO",
                        help="demo names (default: all); see --list")
    parser.add_argument("--list", action="store_true", help="name the demos and exit")
    parser.add_argument("--out", default="attention-demos", metavar="DIR",
                        help="folder for SVG pictures (default: ./attention-demos)")
    parser.add_argument("--no-svg", action="store_true", help="write no SVG files")
    args = parser.parse_args(argv)
    if args.list:
        for name, demo in DEMOS.items():
            print(f"{name:<16} {demo.about}")
        return 0
    unknown = [d for d in args.demos if d not in DEMOS]
    if unknown:
        parser.error(f"unknown demo {', '.join(unknown)}; choose from {', '.join(DEMOS)}")
    out = None if args.no_svg else args.out
    if out is not None and os.path.exists(out) and not os.path.isdir(out):
        parser.error(f"--out {out!r} exists and is not a folder")
    for i, name in enumerate(args.demos or DEMOS):
        if i:
            print("\n" + "=" * 76 + "\n")
        print(run(name, out_dir=out).text)  # the demos that train use the kernels
    return 0


if __name__ == "__main__":
    sys.exit(main())
