"""Prometheus metrics of one hub node, served at ``/metrics``.

Each app has its own registry (tests build many apps in one process). The figures:

- ``lineup_connections{kind="agent"|"person"}``: open WebSockets (agents: handshake done).
- ``lineup_events_committed_total``: events this node committed (``rate()`` is events/s).
- ``lineup_fanout_latency_seconds``: an event's commit (its ``recorded_at``) → a live
  follower handed it to its socket, on this node, whichever node committed it.
- ``lineup_stream_lag_seconds``: commit on another node → read here from Redis Streams.
- ``lineup_replays_total`` / ``lineup_replayed_events_total``: replays from the database
  (a connection catching up) and the events they sent.
- ``lineup_stream_gap_fills_total``: holes the node healed from the database (an event the
  stream dropped or delayed, Redis down); ``lineup_stream_dropped_total``: events not put on
  the stream (Redis down; other nodes then catch up from the database).
- ``lineup_errors_total{code, surface}``: error answers by taxonomy code, for HTTP
  (``surface="http"``) and the agents' socket (``surface="agent_ws"``).
- ``lineup_lease_held{name}``, ``lineup_stream_healthy``, ``lineup_subscribers``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from lineup.protocol.times import now_ms
from lineup.store import StoredEvent

if TYPE_CHECKING:
    from lineup.hub.state import HubState

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

LATENCY_BUCKETS = (
    0.001,
    0.0025,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
    5.0,
    10.0,
)

_HTTP_CODES = {
    400: "invalid_argument",
    401: "unauthenticated",
    403: "forbidden",
    404: "not_found",
    409: "conflict",
    429: "rate_limited",
    500: "unknown_result",
    503: "unavailable",
}


class Metrics:
    def __init__(self, node_id: str, wall_ms: Callable[[], int] | None = None) -> None:
        self.node_id = node_id
        self._wall_ms = wall_ms or now_ms
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.people_sockets = 0
        self.events_committed = Counter(
            "lineup_events_committed", "Events committed by this node.", registry=r
        )
        self.fanout_latency = Histogram(
            "lineup_fanout_latency_seconds",
            "From an event's commit to a live follower on this node handing it to its socket.",
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.stream_lag = Histogram(
            "lineup_stream_lag_seconds",
            "From an event's commit on another node to this node reading it from the stream.",
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.replays = Counter("lineup_replays", "Replays from the database.", registry=r)
        self.replayed_events = Counter(
            "lineup_replayed_events", "Events sent by replays from the database.", registry=r
        )
        self.gap_fills = Counter(
            "lineup_stream_gap_fills",
            "Holes in the live stream healed from the database.",
            registry=r,
        )
        self.stream_dropped = Counter(
            "lineup_stream_dropped", "Events not published on the stream (Redis down).", registry=r
        )
        self.errors = Counter(
            "lineup_errors", "Error answers by code.", ["code", "surface"], registry=r
        )

    # --- fan-out observer (see lineup.hub.fanout.FanoutObserver) ---------------------------

    def delivered(self, event: StoredEvent) -> None:
        self.fanout_latency.observe(max(0, self._wall_ms() - event.recorded_at) / 1000)

    def replayed(self, count: int) -> None:
        self.replays.inc()
        if count:
            self.replayed_events.inc(count)

    def committed(self, events: Iterable[StoredEvent]) -> None:
        self.events_committed.inc(sum(1 for _ in events))

    def stream_received(self, events: Iterable[StoredEvent]) -> None:
        now = self._wall_ms()
        for event in events:
            self.stream_lag.observe(max(0, now - event.recorded_at) / 1000)

    def error(self, code: str, surface: str) -> None:
        self.errors.labels(code=code, surface=surface).inc()

    def http_status(self, status: int) -> None:
        code = _HTTP_CODES.get(status)
        if code is not None:
            self.error(code, "http")

    @contextlib.contextmanager
    def person_socket(self) -> Iterator[None]:
        self.people_sockets += 1
        try:
            yield
        finally:
            self.people_sockets -= 1

    def watch(self, hub: HubState) -> None:
        """Gauges read from the hub's state at scrape time."""
        self.registry.register(_HubCollector(hub))

    def render(self) -> bytes:
        return generate_latest(self.registry)


class _HubCollector(Collector):
    def __init__(self, hub: HubState) -> None:
        self.hub = hub

    def collect(self) -> Iterator[GaugeMetricFamily]:
        hub = self.hub
        connections = GaugeMetricFamily(
            "lineup_connections", "Open WebSockets by kind.", labels=["kind"]
        )
        connections.add_metric(["agent"], len(hub.presence))
        connections.add_metric(["person"], hub.metrics.people_sockets)
        yield connections
        yield GaugeMetricFamily(
            "lineup_subscribers",
            "Live followers on this node.",
            value=hub.broker.subscriber_count(),
        )
        held = GaugeMetricFamily(
            "lineup_lease_held", "1 while this node holds the lease.", labels=["name"]
        )
        for name in hub.leases.held_names():
            held.add_metric([name], 1)
        yield held
        yield GaugeMetricFamily(
            "lineup_stream_healthy",
            "1 while Redis Streams carries events between nodes (1 without Redis: not needed).",
            value=1 if hub.cluster.stream_healthy else 0,
        )
        info = GaugeMetricFamily("lineup_node_info", "This node.", labels=["node", "instance"])
        info.add_metric([hub.settings.node_id, hub.cluster.instance], 1)
        yield info
