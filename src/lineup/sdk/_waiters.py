"""Futures waiting for a value by key — the hub's answers that handlers wait for."""

from __future__ import annotations

import asyncio
from typing import Generic, TypeVar

V = TypeVar("V")


class Waiters(Generic[V]):
    """Futures waiting for a value by key; a cancelled waiter leaves the others alone."""

    def __init__(self) -> None:
        self._by_key: dict[str, list[asyncio.Future[V]]] = {}

    async def wait(self, key: str) -> V:
        future: asyncio.Future[V] = asyncio.get_running_loop().create_future()
        self._by_key.setdefault(key, []).append(future)
        try:
            return await future
        finally:
            waiting = self._by_key.get(key)
            if waiting is not None and future in waiting:
                waiting.remove(future)
                if not waiting:
                    del self._by_key[key]

    def resolve(self, key: str, value: V) -> None:
        for future in self._by_key.pop(key, []):
            if not future.done():
                future.set_result(value)

    def fail(self, key: str, error: BaseException) -> None:
        for future in self._by_key.pop(key, []):
            if not future.done():
                future.set_exception(error)

    def cancel_all(self) -> None:
        """Cancel every waiter (the agent is stopping: nobody will resolve them here)."""
        waiting, self._by_key = self._by_key, {}
        for futures in waiting.values():
            for future in futures:
                future.cancel()
