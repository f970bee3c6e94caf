"""Waiting without sleeping blindly: poll a condition until it holds or a deadline passes.

``until`` is for synchronous tests (the in-process app, processes, Playwright); ``until_async``
polls from a coroutine without blocking the event loop, and awaits the predicate's value when
it is awaitable. Both return the first truthy value and fail naming what they waited for.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Callable
from typing import Any

DEADLINE = 60.0
"""Generous: a loaded CI machine is slow, and a wait that holds ends as soon as it holds."""


def until(
    predicate: Callable[[], Any], what: str, timeout: float = DEADLINE, interval: float = 0.01
) -> Any:
    """Return the first truthy value of ``predicate``; fail naming ``what`` after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(interval)


async def until_async(
    predicate: Callable[[], Any],
    what: str,
    timeout: float = DEADLINE,  # noqa: ASYNC109 - a deadline for polling, not for one await
    interval: float = 0.02,
) -> Any:
    """``until`` for coroutines: ``predicate`` may be a plain or an async function."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if inspect.isawaitable(value):
            value = await value
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        await asyncio.sleep(interval)
