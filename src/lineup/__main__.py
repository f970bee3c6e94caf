"""``python -m lineup``: the same commands as ``lineup``."""

from lineup.cli import main

main()
