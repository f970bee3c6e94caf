"""The hub's running parts, built once at start and shared by every request."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lineup.hub.config import Settings
from lineup.hub.fanout import Broker
from lineup.hub.in_flight import InFlight
from lineup.hub.live_sessions import LiveSessions
from lineup.hub.presence import Presence
from lineup.hub.ratelimit import AttemptLimiter, FailureBackoff
from lineup.hub.recorder import Clock, Recorder
from lineup.protocol.times import now_ms
from lineup.store import Store
from lineup.store.sealed import Keyring

if TYPE_CHECKING:
    from lineup.hub.cluster import Cluster
    from lineup.hub.governance import Governance
    from lineup.hub.leases import LeaseBook
    from lineup.hub.metrics import Metrics


@dataclass
class Limits:
    pairing_by_ip: AttemptLimiter
    pairing_by_code: AttemptLimiter
    signin_by_ip: AttemptLimiter
    signin_by_account: FailureBackoff
    binding_by_person: AttemptLimiter
    """Account binding attempts (a password exchanged, an OAuth flow started) per person."""

    @classmethod
    def from_settings(cls, settings: Settings, clock: Clock = now_ms) -> Limits:
        window = settings.pairing_window
        return cls(
            pairing_by_ip=AttemptLimiter(settings.pairing_attempts_per_ip, window),
            pairing_by_code=AttemptLimiter(settings.pairing_attempts_per_code, window * 10),
            signin_by_ip=AttemptLimiter(settings.signin_attempts_per_ip, window),
            signin_by_account=FailureBackoff(clock),
            binding_by_person=AttemptLimiter(settings.signin_attempts_per_ip, window),
        )


@dataclass
class HubState:
    settings: Settings
    store: Store
    broker: Broker
    recorder: Recorder
    presence: Presence = field(default_factory=Presence)
    in_flight: InFlight = field(default_factory=InFlight)
    """The frames of each workspace's agents this node works on (``lineup.hub.in_flight``)."""
    live_sessions: LiveSessions = field(default_factory=LiveSessions)
    clock: Clock = now_ms
    limits: Limits | None = None
    started_ms: int = 0
    notifier: Any = None  # the NotificationWorker, once started
    keyring: Keyring = None  # type: ignore[assignment]
    """Seals and opens the secrets stored in the database; set by create()."""
    # set by create(); Optional only for hand-built states in tests
    cluster: Cluster = None  # type: ignore[assignment]
    metrics: Metrics = None  # type: ignore[assignment]
    governance: Governance = None  # type: ignore[assignment]
    """Capabilities, approvals and executions (``lineup.hub.governance``)."""
    engine_host: Any = None
    """Runs hosted agents (a ``lineup.hub.hosted.EngineHost``), when the hub was composed
    with one (``lineup serve``); None: this hub hosts no engines."""
    engine_statuses: tuple[float, tuple[Any, ...]] | None = None
    """What the engine host last said of its engines, and when (``time.monotonic``)."""

    @property
    def leases(self) -> LeaseBook:
        """Once-only work across nodes: ``hub.leases.keep(name)``, then ``held(name)``."""
        return self.cluster.leases

    @classmethod
    def create(
        cls,
        settings: Settings,
        store: Store,
        clock: Clock = now_ms,
        keyring: Keyring | None = None,
    ) -> HubState:
        # commits reach followers here and on every other node
        from lineup.hub.cluster import Cluster
        from lineup.hub.metrics import Metrics
        from lineup.hub.secret_keys import load_keyring

        broker = Broker()
        metrics = Metrics(settings.node_id)
        broker.observer = metrics
        cluster = Cluster(settings, store, broker, metrics, clock)
        store.add_commit_listener(cluster.on_commit)
        hub = cls(
            settings=settings,
            store=store,
            broker=broker,
            recorder=Recorder(store, clock),
            in_flight=InFlight(settings.workspace_in_flight),
            clock=clock,
            limits=Limits.from_settings(settings, clock),
            started_ms=clock(),
            cluster=cluster,
            metrics=metrics,
            keyring=keyring or load_keyring(settings),
        )
        metrics.watch(hub)
        from lineup.hub.governance import Governance
        from lineup.hub.governance.providers import configured_providers

        hub.governance = Governance(hub, configured_providers(settings))
        return hub
