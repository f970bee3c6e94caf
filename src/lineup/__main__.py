"""``python -m lineup``: the ``lineup`` command, for a caller that runs it by interpreter
(the hub runs ``python -m lineup provider test`` in a subprocess)."""

import sys

from lineup.cli import main

sys.exit(main())
