"""``python -m cooked_mcp`` runs the same entry point as ``cooked-mcp``."""

import sys

from .cli import main

sys.exit(main())
