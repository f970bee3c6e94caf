"""Hub settings, read once from the environment (and the command line) at start."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path


def lineup_home() -> Path:
    return Path(os.environ.get("LINEUP_HOME") or Path.home() / ".lineup").expanduser()


def _seconds(name: str, default: float) -> float:
    raw = os.environ.get(name)
    return float(raw) if raw else default


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything the hub needs to know; tests build one directly with short timings."""

    database_url: str
    home: Path = field(default_factory=lineup_home)
    redis_url: str | None = None
    host: str = "127.0.0.1"
    port: int = 8000
    public_url: str | None = None
    heartbeat_interval: float = 25.0
    missed_heartbeats: int = 2
    grace_period: float = 15 * 60.0
    monitor_interval: float = 1.0
    session_ttl: float = 30 * 24 * 3600.0
    pairing_ttl: float = 10 * 60.0
    secure_cookies: bool = False
    allowed_origins: tuple[str, ...] = ()
    node_id: str = "node-1"
    pairing_attempts_per_ip: int = 10
    pairing_attempts_per_code: int = 5
    pairing_window: float = 60.0
    signin_attempts_per_ip: int = 20
    static_dir: Path | None = None

    @property
    def offline_after(self) -> float:
        return self.heartbeat_interval * self.missed_heartbeats

    @property
    def base_url(self) -> str:
        return self.public_url or f"http://{self.host}:{self.port}"

    @classmethod
    def from_env(cls, **overrides: object) -> Settings:
        from lineup.store import database_url_from_env

        home = lineup_home()
        values: dict[str, object] = {
            "home": home,
            "database_url": database_url_from_env(home),
            "redis_url": os.environ.get("LINEUP_REDIS_URL") or None,
            "public_url": os.environ.get("LINEUP_PUBLIC_URL") or None,
            "heartbeat_interval": _seconds("LINEUP_HEARTBEAT_INTERVAL", 25.0),
            "grace_period": _seconds("LINEUP_GRACE_PERIOD", 15 * 60.0),
            "secure_cookies": os.environ.get("LINEUP_SECURE_COOKIES", "") in ("1", "true"),
            "allowed_origins": tuple(
                o for o in os.environ.get("LINEUP_ALLOWED_ORIGINS", "").split(",") if o
            ),
            "node_id": os.environ.get("LINEUP_NODE_ID", "node-1"),
            "pairing_attempts_per_ip": int(os.environ.get("LINEUP_PAIRING_ATTEMPTS_PER_IP", "10")),
        }
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)  # type: ignore[arg-type]
