"""The articles' worked examples, run by this package.

    python -m attention                  # run every demo, in order
    python -m attention --list           # name the demos
    python -m attention 004-example      # one demo (or several names)
    python -m attention --out DIR ...    # folder for the SVG pictures (default ./attention-demos)
    python -m attention --no-svg ...     # terminal output only
    python -m attention --lang zh ...    # the messages in Chinese (default: from the locale)

Each demo writes only its own file names in the output folder (``004_weights_vs_state.svg``,
``004_graph.svg``, ``004_explore.html`` …), replacing an earlier run's picture of the same
name (a file there that is not the demo's own page is kept).
The demos that train a model train it with the kernels (``attention/kernels.py``) switched on;
the graph drawings show the composed core.
"""
from __future__ import annotations

import argparse
import os
import sys

from attention.demos import DEMOS, run
from minigrad import i18n
from minigrad.draw.console import run_main

_ = i18n.translator("attention")


def main(argv=None) -> int:
    return run_main(_main, argv)  # any encoding; `| head` stops it quietly


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m attention",
                                     description=_("Run the source articles' worked examples."))
    parser.add_argument("demos", nargs="*", metavar="DEMO",
                        help=_("demo names (default: all); see --list"))
    parser.add_argument("--list", action="store_true", help=_("name the demos and exit"))
    parser.add_argument("--out", default="attention-demos", metavar="DIR",
                        help=_("folder for SVG pictures (default: ./attention-demos)"))
    parser.add_argument("--no-svg", action="store_true", help=_("write no SVG files"))
    i18n.add_argument(parser)
    return parser


def _main(argv=None) -> int:
    early = argparse.ArgumentParser(add_help=False)  # --lang first, so that --help speaks it
    early.add_argument("--lang")
    lang = early.parse_known_args(argv)[0].lang
    i18n.set_language(lang if lang in i18n.LANGUAGES else None)  # the parser refuses others
    parser = _parser()
    args = parser.parse_args(argv)
    i18n.apply(args)
    if args.list:
        for name, demo in DEMOS.items():
            print(f"{name:<16} {_(demo.about)}")
        return 0
    unknown = [d for d in args.demos if d not in DEMOS]
    if unknown:
        parser.error(_("unknown demo {unknown}; choose from {choices}").format(
            unknown=", ".join(unknown), choices=", ".join(DEMOS)))
    out = None if args.no_svg else args.out
    if out is not None and os.path.exists(out) and not os.path.isdir(out):
        parser.error(_("--out {out!r} exists and is not a folder").format(out=out))
    for i, name in enumerate(args.demos or DEMOS):
        if i:
            print("\n" + "=" * 76 + "\n")
        print(run(name, out_dir=out).text)  # the demos that train use the kernels
    return 0


if __name__ == "__main__":
    sys.exit(main())
