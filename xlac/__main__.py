"""``python -m xlac``: the command line (see xlac/cli.py)."""
import sys

from .cli import main

sys.exit(main())
