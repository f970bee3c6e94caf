"""The hub's monitor driven by the test: with a ``FakeClock`` and ``monitor_interval`` long
enough that the app's own monitor passes only once (at start), silence, offline and grace
periods happen when the test moves the clock and ticks — not after real seconds, which a loaded
machine stretches."""

from __future__ import annotations

from starlette.testclient import TestClient

from lineup.hub.cluster import MONITOR_LEASE
from lineup.hub.monitor import Monitor
from lineup.hub.state import HubState
from tests.support.clock import FakeClock
from tests.support.waiting import until

ONCE = 3600.0
"""A ``monitor_interval`` for such tests: the app's own monitor never passes again."""


class TickedMonitor:
    def __init__(self, client: TestClient, clock: FakeClock) -> None:
        assert client.portal is not None, "the app is not running (use TestClient as a context)"
        state: HubState = client.app.state.hub  # type: ignore[attr-defined]
        self.state = state
        self.monitor = Monitor(state)
        self._client = client
        self._clock = clock
        # on PostgreSQL the once-per-cluster work waits for this node's lease
        until(lambda: state.leases.held(MONITOR_LEASE), "the node to hold the monitor lease")

    def tick(self, seconds: float = 0.0) -> None:
        """Move the clock ``seconds`` on, then run one monitor pass at its time."""
        self._clock.advance(seconds)
        assert self._client.portal is not None
        self._client.portal.call(self.monitor.tick, self._clock())
