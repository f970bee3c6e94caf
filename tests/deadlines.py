"""Waiting without sleeping blindly: poll a condition until it holds or a deadline passes."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

DEADLINE = 30.0


def wait_until(predicate: Callable[[], Any], what: str, timeout: float = DEADLINE) -> Any:
    """Return the first truthy value of ``predicate``; fail naming ``what`` after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.01)
