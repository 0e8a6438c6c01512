"""``python -m toolsel.cli``: the ``toolsel`` command."""

import sys

from . import main

sys.exit(main())
