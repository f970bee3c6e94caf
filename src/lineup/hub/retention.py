"""Compacting the event log by each workspace's retention policy (seed 001 §10.3, §11).

The monitor runs :func:`compact` on the node holding the ``monitor`` lease, once every
``retention_interval``; ``lineup log compact`` runs it on demand (``--dry-run`` counts only).
Per workspace: the effective policy (``retention.*`` settings, else ``LINEUP_RETENTION_*``),
the next horizon by :func:`lineup.domain.retention.plan_horizon` — pinned at the first event
the notification worker has not read — then the events below it deleted chunk by chunk, each
chunk in its own write with the horizon moved in the same transaction. What the keep rules
hold stays (``lineup.store.retention``). Running it twice, or on two nodes, is harmless: a
horizon only moves forward and a chunk deletes what is no longer needed.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from lineup.domain.retention import RetentionPolicy, age_cutoff, plan_horizon
from lineup.hub.config import Settings
from lineup.hub.scoped_settings import retention_policy_of
from lineup.store import Reader, Store, WriteTx
from lineup.store import retention as rows

log = logging.getLogger("lineup.hub.retention")


@dataclass(frozen=True, slots=True)
class Compaction:
    """One workspace's figures: the horizon before and after, what was (or, in a dry run,
    would be) deleted, what the keep rules hold below the new horizon."""

    workspace_id: str
    policy: RetentionPolicy
    last_sequence: int
    horizon_before: int
    horizon_after: int
    deleted: int
    kept: int
    seconds: float

    @property
    def moved(self) -> bool:
        return self.horizon_after > self.horizon_before


async def compact(
    store: Store, settings: Settings, now_ms: int, *, dry_run: bool = False
) -> list[Compaction]:
    """Compact every workspace's log by its policy at ``now_ms``; the figures of each."""
    ids = await store.read(lambda r: rows.workspace_ids(r.connection))
    done = []
    for workspace_id in ids:
        try:
            done.append(
                await compact_workspace(store, settings, workspace_id, now_ms, dry_run=dry_run)
            )
        except Exception:  # one workspace's failure must not stop the others
            log.exception("could not compact the log of %s", workspace_id)
    return done


async def compact_workspace(
    store: Store, settings: Settings, workspace_id: str, now_ms: int, *, dry_run: bool = False
) -> Compaction:
    started = time.perf_counter()
    notifications = settings.notify_enabled

    def plan(r: Reader) -> tuple[RetentionPolicy, rows.LogShape, int, int | None]:
        policy = retention_policy_of(r, settings, workspace_id)
        shape = rows.shape_of(
            r.connection, workspace_id, age_cutoff(policy, now_ms), notifications=notifications
        )
        pins = [] if shape.notification_pin is None else [shape.notification_pin]
        horizon = plan_horizon(
            policy,
            last_sequence=shape.last_sequence,
            current_horizon=shape.horizon,
            first_recent=shape.first_recent,
            pins=pins,
        )
        return policy, shape, horizon, rows.first_stored(r.connection, workspace_id, horizon)

    policy, shape, target, start = await store.read(plan)
    deleted = kept = 0
    if start is not None and dry_run:
        deleted, kept = await store.read(
            lambda r: rows.count_deletable(r.connection, workspace_id, start, target)
        )
    elif start is not None:
        low: int | None = start
        while low is not None and low < target:
            high = min(low + rows.CHUNK, target)

            def chunk(tx: WriteTx, lo: int = low, hi: int = high) -> tuple[int, int | None]:
                gone = rows.compact_range(tx.connection, workspace_id, lo, hi, now_ms)
                # the next chunk starts at the next stored event: long runs of sequences
                # compacted before (below an old open task's kept events) are stepped over
                following = rows.first_stored(tx.connection, workspace_id, target, since=hi)
                if following is None and hi < target:  # nothing left below: the horizon moves
                    rows.compact_range(tx.connection, workspace_id, target, target, now_ms)
                return gone, following

            gone, low = await store.write(chunk)
            deleted += gone
        _, kept = await store.read(
            lambda r: rows.count_deletable(r.connection, workspace_id, start, target)
        )
    elif target > shape.horizon and not dry_run:  # nothing stored below: the horizon moves
        await store.write(
            lambda tx: rows.compact_range(tx.connection, workspace_id, target, target, now_ms)
        )
    if deleted:
        log.info(
            "compacted %d events of %s up to sequence %d (%d kept below it)",
            deleted,
            workspace_id,
            target,
            kept,
        )
    return Compaction(
        workspace_id=workspace_id,
        policy=policy,
        last_sequence=shape.last_sequence,
        horizon_before=shape.horizon,
        horizon_after=target,
        deleted=deleted,
        kept=kept,
        seconds=time.perf_counter() - started,
    )


__all__ = ["Compaction", "compact", "compact_workspace"]
