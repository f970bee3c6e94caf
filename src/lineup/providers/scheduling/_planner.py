"""The scheduler: a deterministic greedy plan of a plant's open orders on its resources.

Orders go in priority order (1 is the most urgent), then by due date, then by id, so the same
plant always gives the same plan. An order's operations run in sequence, each no earlier than
the end of the one before; each operation takes the first place on its resource, at or after
the resource's last planned minute, where it fits whole within one day's available minutes
(operations are not split across days). A day's minutes count from the start of its first
shift (06:00).

Pure: data in, plan out; the provider reads and stores around it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

SHIFT_START_MINUTE = 6 * 60


@dataclass(frozen=True, slots=True)
class Order:
    id: str
    product: str
    quantity: int
    due_date: str
    priority: int
    status: str


@dataclass(frozen=True, slots=True)
class Operation:
    order_id: str
    sequence: int
    resource_id: str
    duration_minutes: int

    @property
    def id(self) -> str:
        return f"{self.order_id}/{self.sequence}"


@dataclass(frozen=True, slots=True)
class Plan:
    assignments: list[dict[str, Any]]
    late_orders: list[dict[str, Any]]
    load: list[dict[str, Any]]


def clock_time(minute_of_day: int) -> str:
    """``HH:MM`` of a minute counted from the first shift's start."""
    minute = SHIFT_START_MINUTE + minute_of_day
    return f"{minute // 60:02d}:{minute % 60:02d}"


def plan(
    *,
    orders: Iterable[Order],
    operations: Iterable[Operation],
    calendars: Mapping[str, Mapping[str, int]],
    days: Sequence[str],
) -> Plan:
    """Plan ``orders`` (their ``operations``) over ``days`` (ISO dates, ascending), with
    ``calendars[resource][day]`` minutes available on each resource each day."""
    by_order: dict[str, list[Operation]] = {}
    for operation in operations:
        by_order.setdefault(operation.order_id, []).append(operation)
    free: dict[str, tuple[int, int]] = {}
    assignments: list[dict[str, Any]] = []
    late: list[dict[str, Any]] = []
    for order in sorted(orders, key=lambda o: (o.priority, o.due_date, o.id)):
        ready = (0, 0)
        finish_day: int | None = None
        complete = True
        for operation in sorted(by_order.get(order.id, []), key=lambda op: op.sequence):
            resource = operation.resource_id
            day, minute = max(ready, free.get(resource, (0, 0)))
            available = calendars.get(resource, {})
            while day < len(days) and minute + operation.duration_minutes > available.get(
                days[day], 0
            ):
                day, minute = day + 1, 0
            if day >= len(days):
                complete = False
                break
            end = minute + operation.duration_minutes
            assignments.append(
                {
                    "operationId": operation.id,
                    "orderId": order.id,
                    "sequence": operation.sequence,
                    "resourceId": resource,
                    "date": days[day],
                    "start": clock_time(minute),
                    "end": clock_time(end),
                    "minutes": operation.duration_minutes,
                }
            )
            free[resource] = ready = (day, end)
            finish_day = day
        if not complete or finish_day is None:
            late.append(
                {
                    "orderId": order.id,
                    "dueDate": order.due_date,
                    "finishDate": None,
                    "daysLate": None,
                }
            )
        elif days[finish_day] > order.due_date:
            days_late = (
                date.fromisoformat(days[finish_day]) - date.fromisoformat(order.due_date)
            ).days
            late.append(
                {
                    "orderId": order.id,
                    "dueDate": order.due_date,
                    "finishDate": days[finish_day],
                    "daysLate": days_late,
                }
            )
    return Plan(assignments, late, load(assignments, calendars, days))


def load(
    assignments: Iterable[Mapping[str, Any]],
    calendars: Mapping[str, Mapping[str, int]],
    days: Sequence[str],
) -> list[dict[str, Any]]:
    """Planned against available minutes, per resource (sorted) per day of ``days``."""
    planned: dict[tuple[str, str], int] = {}
    for assignment in assignments:
        key = (str(assignment["resourceId"]), str(assignment["date"]))
        planned[key] = planned.get(key, 0) + int(assignment["minutes"])
    rows: list[dict[str, Any]] = []
    for resource in sorted(calendars):
        for day in days:
            available = calendars[resource].get(day, 0)
            minutes = planned.get((resource, day), 0)
            rows.append(
                {
                    "resourceId": resource,
                    "date": day,
                    "availableMinutes": available,
                    "plannedMinutes": minutes,
                    "loadPercent": round(minutes * 100 / available, 1) if available else 0.0,
                }
            )
    return rows


@dataclass(frozen=True, slots=True)
class Changes:
    moved: int
    added: int
    removed: int
    resources: list[str]


def compare(published: Iterable[Mapping[str, Any]], draft: Iterable[Mapping[str, Any]]) -> Changes:
    """How ``draft`` differs from ``published``, operation by operation: moved (another
    resource, day or time), added, removed, and the resources whose plan changes."""
    before = {str(a["operationId"]): a for a in published}
    after = {str(a["operationId"]): a for a in draft}
    place = ("resourceId", "date", "start", "end")
    moved = added = removed = 0
    touched: set[str] = set()
    for operation, new in after.items():
        old = before.get(operation)
        if old is None:
            added += 1
            touched.add(str(new["resourceId"]))
        elif any(old[k] != new[k] for k in place):
            moved += 1
            touched.update({str(old["resourceId"]), str(new["resourceId"])})
    for operation, old in before.items():
        if operation not in after:
            removed += 1
            touched.add(str(old["resourceId"]))
    return Changes(moved, added, removed, sorted(touched))
