"""``python -m toolsel.cli``: the same as the ``toolsel`` command."""

import sys

from . import main

sys.exit(main())
