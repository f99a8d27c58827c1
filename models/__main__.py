"""``python -m models``: see ``models/cli.py`` (no arguments: the main demo)."""
import sys

from models.cli import main

sys.exit(main())
