"""A small machining plant for demos and tests: four resources, two weeks of calendars
(weekdays only), eight orders, and schedule version 1 published before the last (rush) order
came in, so a trial schedule has something to move."""

from __future__ import annotations

from datetime import date, timedelta

from ._planner import Operation, Order

FIRST_DAY = date(2026, 12, 7)
"""A Monday."""

RESOURCES = {
    "saw-1": "Band saw 1",
    "cnc-1": "CNC mill 1 (two shifts)",
    "cnc-2": "CNC mill 2",
    "asm-1": "Assembly line",
}

SHIFT_MINUTES = {"saw-1": 480, "cnc-1": 960, "cnc-2": 480, "asm-1": 480}

ORDERS = [
    Order("ORD-0998", "Pump housing", 20, "2026-12-04", 2, "done"),
    Order("ORD-1001", "Hydraulic bracket", 40, "2026-12-09", 2, "open"),
    Order("ORD-1002", "Pump housing", 25, "2026-12-10", 1, "open"),
    Order("ORD-1003", "Valve block", 60, "2026-12-14", 3, "open"),
    Order("ORD-1004", "Gearbox cover", 30, "2026-12-11", 2, "in_progress"),
    Order("ORD-1005", "Shaft coupling", 120, "2026-12-15", 3, "open"),
    Order("ORD-1006", "Motor flange", 50, "2026-12-16", 2, "open"),
    Order("ORD-1007", "Mounting plate", 80, "2026-12-10", 4, "open"),
]

RUSH_ORDER = Order("ORD-1008", "Pump housing", 15, "2026-12-09", 1, "open")
"""Came in after version 1 was published."""

_ROUTINGS: dict[str, list[tuple[str, int]]] = {
    "ORD-0998": [("saw-1", 60), ("cnc-1", 240)],
    "ORD-1001": [("saw-1", 120), ("cnc-1", 360), ("asm-1", 180)],
    "ORD-1002": [("saw-1", 90), ("cnc-1", 300), ("asm-1", 240)],
    "ORD-1003": [("saw-1", 180), ("cnc-2", 420), ("asm-1", 300)],
    "ORD-1004": [("cnc-2", 240), ("asm-1", 120)],
    "ORD-1005": [("saw-1", 240), ("cnc-1", 480), ("cnc-2", 360)],
    "ORD-1006": [("saw-1", 150), ("cnc-2", 300), ("asm-1", 240)],
    "ORD-1007": [("saw-1", 300), ("cnc-1", 420), ("asm-1", 360)],
    "ORD-1008": [("saw-1", 60), ("cnc-1", 240), ("asm-1", 180)],
}


def operations(order_ids: set[str]) -> list[Operation]:
    return [
        Operation(order, (index + 1) * 10, resource, minutes)
        for order, route in _ROUTINGS.items()
        if order in order_ids
        for index, (resource, minutes) in enumerate(route)
    ]


def calendars() -> dict[str, dict[str, int]]:
    days = [FIRST_DAY + timedelta(days=n) for n in range(14)]
    return {
        resource: {day.isoformat(): (minutes if day.weekday() < 5 else 0) for day in days}
        for resource, minutes in SHIFT_MINUTES.items()
    }
