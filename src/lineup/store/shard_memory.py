"""What a writer shard keeps from one transaction to its next: each workspace's counters and
its tasks' rows, as the shard's last commit in that workspace left them (PostgreSQL).

An agent's report is a transaction of its own when it comes alone, and on PostgreSQL every
statement is a round trip: reading the workspace's counters and the task's row again each
time costs two of them. A batch's first round trip instead checks the kept counters against
the workspaces' rows once it holds their locks (``write_locks.take``). When they still hold,
nobody wrote the workspace since: every event appended to it moves its counter, and tasks'
rows change only with events (their projections) — so the batch counts on from the kept
counters and starts from the kept rows.

Two kinds of write change tasks' rows without an event. A job on the raw connection makes
the transaction forget the rows it kept (``task_rows.forget``, as a rolled-back savepoint
does), so what it keeps at COMMIT was read after it. A global job — a replay of the log,
say — makes the writer empty every shard's memory when it starts and when it ends
(``forget_all``), and a batch that began before it ended keeps nothing. (A replay on
another node writes the rows the log already made: the same values.)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from lineup.store.records import Task
from lineup.store.write_locks import Counters, Scope

WORKSPACES_KEPT = 4096
"""Workspaces a shard remembers at most (then it starts over)."""
TASKS_KEPT = 64
"""Task rows a shard remembers per workspace at most (a batch that read more keeps none)."""

TaskKey = tuple[str, str]
"""A task's workspace and id."""


@dataclass
class ShardMemory:
    counters: dict[str, tuple[int, int]] = field(default_factory=dict)
    tasks: dict[str, dict[TaskKey, Task]] = field(default_factory=dict)

    def known(self, scope: Scope) -> Counters | None:
        """The kept counters of every workspace of ``scope``, or ``None`` if one is missing."""
        if scope is None:
            return None
        known = {}
        for workspace in scope:
            counter = self.counters.get(workspace)
            if counter is None:
                return None
            known[workspace] = counter
        return known

    def rows(self, scope: frozenset[str]) -> dict[TaskKey, Task]:
        """The kept task rows of these workspaces (for a batch whose check found their
        counters unchanged)."""
        found: dict[TaskKey, Task] = {}
        for workspace in scope:
            found.update(self.tasks.get(workspace, ()))
        return found

    def remember(
        self,
        scope: frozenset[str],
        counters: Counters,
        rows: Mapping[TaskKey, Task] | None,
    ) -> None:
        """A batch over ``scope`` committed, leaving these counters and task rows (``None``:
        rows it cannot vouch for)."""
        if len(self.counters) >= WORKSPACES_KEPT:
            self.forget_all()
        for workspace in scope:
            counter = counters.get(workspace)
            if counter is None:
                self.forget((workspace,))
                continue
            self.counters[workspace] = counter
            mine = None if rows is None else {k: t for k, t in rows.items() if k[0] == workspace}
            if mine is None or len(mine) > TASKS_KEPT:
                self.tasks.pop(workspace, None)
            else:
                self.tasks[workspace] = mine

    def forget(self, workspaces: frozenset[str] | tuple[str, ...]) -> None:
        for workspace in workspaces:
            self.counters.pop(workspace, None)
            self.tasks.pop(workspace, None)

    def forget_all(self) -> None:
        self.counters.clear()
        self.tasks.clear()


__all__ = ["ShardMemory", "TaskKey"]
