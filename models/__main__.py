"""``python -m models``: see ``models/app/cli.py`` (no arguments: the main demo).

Only running this file as a program starts the CLI and sets glibc's malloc thresholds
(process-wide, see ``minigrad/runtime/malloc.py``); importing it does neither.
"""
import sys

if __name__ == "__main__":
    try:
        from minigrad.runtime.malloc import keep_freed_memory
        from models.app.cli import main
    except KeyboardInterrupt:  # Ctrl-C while NumPy and the models load: no traceback
        sys.exit(130)
    keep_freed_memory()  # this process is ours: let glibc keep freed memory for the next step
    sys.exit(main())
