"""Project files: the directories an operator names, listed, read, and written through a
person's approval. A provider package: ``provider.json`` is its manifest, :func:`make` its
entry point and ``tests/contract.py`` its contract fixture."""

from ._provider import FilesProvider, make
from ._tree import ABSENT

__all__ = ["ABSENT", "FilesProvider", "make"]
