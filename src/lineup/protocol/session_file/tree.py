"""The tree a session file's entries make, and its one active branch.

Entries are appended, never changed: a new branch is a new entry whose ``parentId`` is an
earlier entry that already has a child. So every ``parentId`` names an entry *above* it in
the file, which makes the entries a forest by construction (no cycles), and a file can be
checked in one pass. As in Pi, the **active branch** is the path from the file's last entry
back to its root: the conversation as it stands; every other branch stays in the file.
"""

from __future__ import annotations

from collections.abc import Sequence

from lineup.protocol.errors import InvalidArgument
from lineup.protocol.session_file.lines import Entry


def line_error(line: int, problem: str, **details: object) -> InvalidArgument:
    """The error for a problem on one line of a file: the line says where."""
    return InvalidArgument(f"Line {line}: {problem}", details={"line": line, **details})


def check_tree(entries: Sequence[Entry], lines: Sequence[int] | None = None) -> None:
    """Ids are unique, and every ``parentId`` and every other id an entry names
    (``callId``, ``requestId``, ``covers`` …) is an entry above it. ``lines`` are the
    entries' line numbers in their file (default: the header is line 1, then one a line)."""
    numbers = list(lines) if lines is not None else list(range(2, len(entries) + 2))
    seen: dict[str, int] = {}
    for entry, line in zip(entries, numbers, strict=True):
        earlier = seen.get(entry.id)
        if earlier is not None:
            raise line_error(
                line, f"the id {entry.id!r} is already the id of line {earlier}", field="id"
            )
        if entry.parent_id is not None and entry.parent_id not in seen:
            raise line_error(
                line,
                f"parentId {entry.parent_id!r} names no entry above this line "
                "(an entry follows one written before it)",
                field="parentId",
            )
        for field, ident in entry.references():
            if ident not in seen:
                raise line_error(
                    line, f"{field} {ident!r} names no entry above this line", field=field
                )
        seen[entry.id] = line


def active_branch(entries: Sequence[Entry]) -> list[str]:
    """The ids on the path from the root to the last entry, root first (empty for none)."""
    if not entries:
        return []
    parents = {e.id: e.parent_id for e in entries}
    path: list[str] = []
    current: str | None = entries[-1].id
    while current is not None:
        path.append(current)
        current = parents.get(current)
    path.reverse()
    return path


def path_to(entries: Sequence[Entry], entry_id: str | None) -> list[str]:
    """The ids from the root to ``entry_id`` (inclusive), root first."""
    parents = {e.id: e.parent_id for e in entries}
    path: list[str] = []
    current = entry_id
    while current is not None and current in parents:
        path.append(current)
        current = parents[current]
    path.reverse()
    return path


def branch_count(entries: Sequence[Entry]) -> int:
    """How many leaves the tree has: 1 for a conversation that never branched."""
    parents = {e.parent_id for e in entries}
    return sum(1 for e in entries if e.id not in parents)


__all__ = ["active_branch", "branch_count", "check_tree", "line_error", "path_to"]
