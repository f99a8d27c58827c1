"""The articles' worked examples, run by this package.

    python -m attention                  # run every demo, in order
    python -m attention --list           # name the demos
    python -m attention 004-example      # one demo (or several names)
    python -m attention --out DIR ...    # folder for the SVG pictures (default ./attention-demos)
    python -m attention --no-svg ...     # terminal output only

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


def _main(argv=None) -> int:
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
