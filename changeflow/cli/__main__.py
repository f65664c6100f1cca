"""``python -m changeflow.cli``: the same as the ``changeflow`` command."""

import sys

from changeflow.cli.main import main

sys.exit(main())
