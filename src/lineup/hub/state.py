"""The hub's running parts, built once at start and shared by every request."""

from __future__ import annotations

from dataclasses import dataclass, field

from lineup.hub.config import Settings
from lineup.hub.fanout import Broker
from lineup.hub.presence import Presence
from lineup.hub.ratelimit import AttemptLimiter
from lineup.hub.recorder import Clock, Recorder, system_clock
from lineup.store import Store


@dataclass
class Limits:
    pairing_by_ip: AttemptLimiter
    pairing_by_code: AttemptLimiter
    signin_by_ip: AttemptLimiter

    @classmethod
    def from_settings(cls, settings: Settings) -> Limits:
        window = settings.pairing_window
        return cls(
            pairing_by_ip=AttemptLimiter(settings.pairing_attempts_per_ip, window),
            pairing_by_code=AttemptLimiter(settings.pairing_attempts_per_code, window * 10),
            signin_by_ip=AttemptLimiter(settings.signin_attempts_per_ip, window),
        )


@dataclass
class HubState:
    settings: Settings
    store: Store
    broker: Broker
    recorder: Recorder
    presence: Presence = field(default_factory=Presence)
    clock: Clock = system_clock
    limits: Limits | None = None
    started_ms: int = 0

    @classmethod
    def create(cls, settings: Settings, store: Store, clock: Clock = system_clock) -> HubState:
        broker = Broker()
        store.add_commit_listener(broker.publish)
        return cls(
            settings=settings,
            store=store,
            broker=broker,
            recorder=Recorder(store, clock),
            clock=clock,
            limits=Limits.from_settings(settings),
            started_ms=clock(),
        )
