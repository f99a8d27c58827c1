"""``python -m models.app``: what there is to run in the application (it runs nothing)."""
import sys

from minigrad.draw.console import list_programs, run_main
from minigrad.i18n import translator

_ = translator("models")
PROGRAMS = (("python -m models", "train Bahdanau attention on dates, then translate unseen ones"),
            ("python -m models --help", "train, translate, inspect, compare-*, graph"),
            ("python -m models.app.tours", "walk through a source, section by section"),
            ("python -m models.app.nanotrain", "the dates model trained in one short file"),
            ("python -m attention", "the sources' worked examples"))


main = list_programs("python -m models.app",
                     "models.app is the application around the models; to run:", PROGRAMS, _)


if __name__ == "__main__":
    sys.exit(run_main(main, sys.argv[1:]))
