"""Production scheduling (an APS system in small): orders, resources and their calendars, a
greedy scheduler that makes trial schedules, and publishing a trial schedule as the plant's
next version, through the core's approval.

One SQLite database per plant (instance), ``<root>/<instance>.db``. A provider package like
any other: ``provider.json`` is its manifest, :func:`make` its entry point and
``tests/contract.py`` its contract fixture.
"""

from ._capabilities import (
    ORDERS_QUERY,
    PROVIDER_ID,
    RESOURCES_LOAD,
    SCHEDULE_PREVIEW,
    SCHEDULE_PUBLISH,
)
from ._provider import Faults, SchedulingProvider, make

__all__ = [
    "ORDERS_QUERY",
    "PROVIDER_ID",
    "RESOURCES_LOAD",
    "SCHEDULE_PREVIEW",
    "SCHEDULE_PUBLISH",
    "Faults",
    "SchedulingProvider",
    "make",
]
