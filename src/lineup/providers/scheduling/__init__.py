"""Production scheduling (an APS system in small): orders, resources and their calendars, a
greedy scheduler that makes trial schedules, and publishing a trial schedule as the plant's
next version, through the core's approval.

One SQLite database per plant (instance), ``<root>/<instance>.db``.
"""

from lineup.providers.scheduling._capabilities import (
    ORDERS_QUERY,
    PROVIDER_ID,
    RESOURCES_LOAD,
    SCHEDULE_PREVIEW,
    SCHEDULE_PUBLISH,
)
from lineup.providers.scheduling._provider import Faults, SchedulingProvider

__all__ = [
    "ORDERS_QUERY",
    "PROVIDER_ID",
    "RESOURCES_LOAD",
    "SCHEDULE_PREVIEW",
    "SCHEDULE_PUBLISH",
    "Faults",
    "SchedulingProvider",
]
