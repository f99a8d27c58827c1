"""``python -m minigrad``: what there is to run (it runs nothing)."""
import argparse
import sys

from minigrad import i18n
from minigrad.draw.console import run_main
from minigrad.i18n import translator

_ = translator("minigrad")
PROGRAMS = (("python -m models", "the main demo: Bahdanau attention trained on dates"),
            ("python -m attention", "the sources' worked examples, each number recomputed"),
            ("python -m models.app.tours", "walk through a source, section by section"),
            ("python -m minigrad.exercises", "write the VJPs yourself; the checker grades them"),
            ("python -m minigrad.gradcheck", "check each op's gradient against finite differences"),
            ("python -m minigrad.viz", "draw a computation graph, with values and gradients"))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m minigrad")
    i18n.add_argument(parser)
    i18n.apply(parser.parse_args(argv))
    print(_("minigrad is a library (import minigrad as mg); to run:"))
    for command, what in PROGRAMS:
        print(f"  {command:<30}  {_(what)}")
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main, sys.argv[1:]))
