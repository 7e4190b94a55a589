"""``python -m tilecheck`` runs the CLI."""

import sys

from tilecheck.cli import main

sys.exit(main())
