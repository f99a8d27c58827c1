"""``python -m models``: see ``models/cli.py`` (no arguments: the main demo)."""
import sys

try:
    from models.cli import main
except KeyboardInterrupt:  # Ctrl-C while NumPy and the models load: no traceback
    sys.exit(130)

sys.exit(main())
