"""``python -m models.app``: what there is to run in the application (it runs nothing)."""
import sys

from minigrad.draw.console import run_main
from minigrad.i18n import translator

_ = translator("models")
PROGRAMS = (("python -m models", "train Bahdanau attention on dates, then translate unseen ones"),
            ("python -m models --help", "train, translate, inspect, compare-*, graph"),
            ("python -m models.app.tours", "walk through a source, section by section"),
            ("python -m models.app.nanotrain", "the dates model trained in one short file"),
            ("python -m attention", "the sources' worked examples"))


def main(argv=None) -> int:
    print(_("models.app is the application around the models; to run:"))
    for command, what in PROGRAMS:
        print(f"  {command:<32}  {_(what)}")
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main, sys.argv[1:]))
