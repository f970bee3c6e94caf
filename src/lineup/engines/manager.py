"""The process manager: one engine process per session, started lazily on the session's first
message, stopped when idle, capped in number, restarted after a crash.

The decisions are :class:`~lineup.engines.table.ProcessTable`'s (pure, tested with a fake
clock); this module carries them out on real sessions. A session is keyed by whatever the
host chooses (the hosted agent uses its id and the conversation's).

A crash is an engine that stops in the middle of a turn: the turn ends ``failed`` with an
``unavailable`` error, the process is forgotten, and the next message starts a fresh one from
the :class:`~lineup.engines.runtime.SessionSpec` the host builds then — with LineUp's own
history of the session, the engine's native id only a hint. The interrupted turn is not sent
again on its own: what the engine did before it stopped stays done, and replaying the turn
could do it twice. A process found dead before it even started the turn is the exception:
nothing of the turn ran, so it is retried once on a fresh process.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Hashable, Mapping
from dataclasses import dataclass

from lineup.engines.runtime import (
    AgentRuntime,
    ApprovalDecision,
    ApprovalRequest,
    EngineError,
    RuntimeEvent,
    RuntimeHost,
    RuntimeSession,
    SessionSpec,
    ToolInvocation,
    ToolOutcome,
    TurnFinished,
    TurnStarted,
)
from lineup.engines.table import ProcessTable, Refuse, Reuse, Start
from lineup.protocol.errors import (
    Conflict,
    ErrorCode,
    InvalidArgument,
    LineupError,
    RateLimited,
    Unavailable,
)

log = logging.getLogger("lineup.engines")

Clock = Callable[[], int]

SpecFactory = Callable[[], SessionSpec | Awaitable[SessionSpec]]
"""Makes the spec of a session about to start (building its context may need I/O)."""


def monotonic_ms() -> int:
    return time.monotonic_ns() // 1_000_000


class _SwitchingHost:
    """The host a session was started with: each turn's questions go to that turn's host."""

    def __init__(self) -> None:
        self.current: RuntimeHost | None = None

    def _host(self) -> RuntimeHost:
        if self.current is None:
            raise Unavailable("No turn is running to answer the engine.")
        return self.current

    async def approve(self, request: ApprovalRequest) -> ApprovalDecision:
        return await self._host().approve(request)

    async def call_tool(self, call: ToolInvocation) -> ToolOutcome:
        return await self._host().call_tool(call)


@dataclass
class _Live:
    session: RuntimeSession
    host: _SwitchingHost
    engine: str


_ERRORS: Mapping[ErrorCode, type[LineupError]] = {
    ErrorCode.RATE_LIMITED: RateLimited,
    ErrorCode.UNAVAILABLE: Unavailable,
    ErrorCode.CONFLICT: Conflict,
}


class EngineManager:
    """Runs turns on engine sessions, holding at most ``cap`` processes."""

    def __init__(
        self,
        runtimes: Mapping[str, AgentRuntime],
        *,
        cap: int = 4,
        idle_seconds: float = 600.0,
        clock: Clock = monotonic_ms,
    ) -> None:
        self.runtimes = dict(runtimes)
        self.table = ProcessTable(cap=cap, idle_ms=int(idle_seconds * 1000))
        self.clock = clock
        self._live: dict[Hashable, _Live] = {}
        self._locks: dict[Hashable, asyncio.Lock] = {}
        self._turning: set[Hashable] = set()
        self.started = 0
        """How many processes were started (restarts included): for tests and metrics."""

    def pid(self, key: Hashable) -> int | None:
        live = self._live.get(key)
        return live.session.pid if live is not None else None

    def running(self) -> list[Hashable]:
        return list(self._live)

    def native_session_id(self, key: Hashable) -> str | None:
        live = self._live.get(key)
        return live.session.native_session_id if live is not None else None

    def busy(self, key: Hashable) -> bool:
        """Whether a turn of ``key``'s session is running now."""
        return key in self._turning

    async def steer(self, key: Hashable, text: str) -> bool:
        """Give the running turn of ``key``'s session a follow-up message; False when none
        runs (the message is then a turn of its own)."""
        live = self._live.get(key)
        if key not in self._turning or live is None:
            return False
        await live.session.steer(text)
        return True

    async def interrupt(self, key: Hashable) -> bool:
        """Stop the running turn of ``key``'s session (it ends ``interrupted``); False when
        none runs."""
        live = self._live.get(key)
        if key not in self._turning or live is None:
            return False
        await live.session.interrupt()
        return True

    async def turn(
        self,
        key: Hashable,
        engine: str,
        spec: SpecFactory,
        host: RuntimeHost,
        text: str,
    ) -> AsyncGenerator[RuntimeEvent, None]:
        """Run one turn of ``key``'s session, starting its process if it has none.

        Turns of one session run one after another. Raises ``rate_limited`` when the cap is
        reached with every process busy, ``unavailable`` when the engine cannot start (or
        keeps crashing), before any event. A turn abandoned half-way (its reader was
        cancelled) leaves the process in a state nobody knows: it is stopped, and the next
        turn starts a fresh one from the record."""
        if engine not in self.runtimes:
            raise InvalidArgument(f"There is no engine {engine!r} on this hub.")
        lock = self._locks.setdefault(key, asyncio.Lock())
        async with lock:
            for attempt in (1, 2):
                live = await self._admit(key, engine, spec)
                live.host.current = host
                started = False
                crashed = False
                finished = False
                self._turning.add(key)
                try:
                    async for event in live.session.turn(text):
                        if isinstance(event, TurnStarted):
                            started = True
                        if isinstance(event, EngineError) and event.code == ErrorCode.UNAVAILABLE:
                            crashed = True
                        if isinstance(event, TurnFinished):
                            finished = True
                            if event.status != "failed":
                                crashed = False
                        if crashed and not started and attempt == 1:
                            continue  # nothing of the turn ran: it is retried
                        yield event
                except Exception as exc:  # a driver that broke: the same as a crash
                    log.warning("engine session %s failed: %s", key, exc)
                    crashed = True
                    if started or attempt == 2:
                        yield EngineError(ErrorCode.UNAVAILABLE, "The engine stopped unexpectedly.")
                        yield TurnFinished(turn_id="", status="failed")
                finally:
                    self._turning.discard(key)
                    live.host.current = None
                    if crashed:
                        await self._forget(key, crashed=True)
                    elif not finished:
                        log.info("engine session %s left mid-turn; stopping it", key)
                        await self._forget(key, crashed=False)
                    else:
                        self.table.idle(key, self.clock())
                if not crashed or started or attempt == 2:
                    return
                log.info("engine session %s was found dead before its turn; restarting", key)

    async def _admit(self, key: Hashable, engine: str, spec: SpecFactory) -> _Live:
        decision = self.table.admit(key, self.clock())
        if isinstance(decision, Refuse):
            raise _ERRORS.get(decision.code, Unavailable)(decision.message)
        if isinstance(decision, Reuse):
            return self._live[key]
        assert isinstance(decision, Start)
        if decision.evict is not None:
            log.info("engine session %s stopped to make room (process cap)", decision.evict)
            await self._close(decision.evict)
        host = _SwitchingHost()
        try:
            made = spec()
            session = await self.runtimes[engine].start(
                await made if inspect.isawaitable(made) else made, host
            )
        except LineupError:
            self.table.gone(key, self.clock(), crashed=True)
            raise
        except Exception as exc:
            self.table.gone(key, self.clock(), crashed=True)
            log.warning("engine %s did not start for %s: %s", engine, key, exc)
            raise Unavailable(f"The {engine} engine did not start; see its log.") from None
        self.started += 1
        live = _Live(session, host, engine)
        self._live[key] = live
        return live

    async def _forget(self, key: Hashable, *, crashed: bool) -> None:
        self.table.gone(key, self.clock(), crashed=crashed)
        await self._close(key)

    async def _close(self, key: Hashable) -> None:
        live = self._live.pop(key, None)
        if live is not None:
            with contextlib.suppress(Exception):
                await live.session.close()

    async def stop(self, key: Hashable) -> None:
        """Stop ``key``'s process now (its agent was deleted, say)."""
        self.table.gone(key, self.clock(), crashed=False)
        await self._close(key)

    async def reap(self) -> list[Hashable]:
        """Stop the processes idle longer than the idle time; returns their keys."""
        expired = self.table.expired(self.clock())
        for key in expired:
            log.info("engine session %s stopped after being idle", key)
            await self._close(key)
        return expired

    async def run_reaper(self, interval: float = 5.0) -> None:
        """Reap every ``interval`` seconds, until cancelled."""
        while True:
            await asyncio.sleep(interval)
            await self.reap()

    async def close(self) -> None:
        """Stop every process (the hub is stopping)."""
        keys = list(self._live)
        for key in keys:
            self.table.gone(key, self.clock(), crashed=False)
        await asyncio.gather(*(self._close(k) for k in keys), return_exceptions=True)
