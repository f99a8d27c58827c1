"""``python -m minigrad``: what there is to run (it runs nothing)."""
import sys

from minigrad.draw.console import list_programs, run_main
from minigrad.i18n import translator

_ = translator("minigrad")
PROGRAMS = (("python -m models", "the main demo: Bahdanau attention trained on dates"),
            ("python -m attention", "the sources' worked examples, each number recomputed"),
            ("python -m models.app.tours", "walk through a source, section by section"),
            ("python -m minigrad.exercises", "write the VJPs yourself; the checker grades them"),
            ("python -m minigrad.gradcheck", "check each op's gradient against finite differences"),
            ("python -m minigrad.viz", "draw a computation graph, with values and gradients"))
main = list_programs("python -m minigrad",
                     "minigrad is a library (import minigrad as mg); to run:", PROGRAMS, _)

if __name__ == "__main__":
    sys.exit(run_main(main, sys.argv[1:]))
