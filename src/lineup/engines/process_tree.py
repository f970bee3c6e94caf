"""An engine's whole process tree, so closing a session leaves nothing behind.

Killing the engine's process group is not enough: Codex starts each command in a session
of its own (``setsid``), so a ``sleep 300`` it runs would outlive it. The tree is read from
``/proc`` (Linux); elsewhere only the engine's own group is known.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from pathlib import Path

PROC = Path("/proc")


def _parents() -> dict[int, int]:
    """Every live process's parent, zombies left out."""
    parents: dict[int, int] = {}
    if not PROC.is_dir():
        return parents
    for entry in PROC.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if fields and fields[0] != "Z":
            parents[int(entry.name)] = int(fields[1])
    return parents


def descendants(pid: int) -> list[int]:
    """The processes below ``pid``, nearest first."""
    children: dict[int, list[int]] = {}
    for child, parent in _parents().items():
        children.setdefault(parent, []).append(child)
    found: list[int] = []
    queue = list(children.get(pid, []))
    while queue:
        current = queue.pop(0)
        found.append(current)
        queue.extend(children.get(current, []))
    return found


def alive(pids: list[int]) -> list[int]:
    """Those of ``pids`` still running (not zombies)."""
    running = _parents()
    return [p for p in pids if p in running]


def kill_all(pids: list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


async def end_tree(process: asyncio.subprocess.Process, grace: float) -> None:
    """End an engine started in a session of its own, and everything it started: its
    commands are found (and killed) before it goes, then its group is terminated and, after
    ``grace`` seconds, killed with whatever of the tree is left."""
    tree = descendants(process.pid)
    kill_all(tree)
    if process.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            await asyncio.wait_for(process.wait(), grace)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            await process.wait()
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)  # whatever of its group is left
    kill_all(alive(tree) + descendants(process.pid))


__all__ = ["alive", "descendants", "end_tree", "kill_all"]
