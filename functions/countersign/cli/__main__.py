"""``python -m countersign.cli``: the ``countersign`` command."""

import sys

from . import main

sys.exit(main())
