"""Hub settings, read once from the environment (and the command line) at start."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lineup.hub.tls import ServedTls


def lineup_home() -> Path:
    return Path(os.environ.get("LINEUP_HOME") or Path.home() / ".lineup").expanduser()


def _seconds(name: str, default: float) -> float:
    raw = os.environ.get(name)
    return float(raw) if raw else default


@dataclass(frozen=True, slots=True)
class DirectMode:
    """The hub embedded in one agent's process (``lineup direct``): one workspace, one person,
    one agent, all made at start with these ids; the person signs in with ``token``, the
    agent in the same process connects with ``agent_credential``. Both secrets stay out of
    ``repr()``. Built by :mod:`lineup.direct`; ``None`` in :class:`Settings` is a normal hub."""

    token: str = field(repr=False)
    agent_credential: str = field(repr=False)
    workspace_id: str
    user_id: str
    agent_id: str
    agent_name: str = "agent"
    person_name: str = "you"


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything the hub needs to know; tests build one directly with short timings."""

    database_url: str
    home: Path = field(default_factory=lineup_home)
    writer_connections: int = 4
    """``LINEUP_WRITER_CONNECTIONS``: on PostgreSQL, how many writer transactions (of
    different workspaces) this node runs at once; SQLite has one writer."""
    redis_url: str | None = None
    host: str = "127.0.0.1"
    port: int = 8000
    public_url: str | None = None
    heartbeat_interval: float = 25.0
    session_check_interval: float = 30.0
    """How often a person's open socket checks that its session still holds (a sign-out on
    another node of a cluster ends it within this time; on this node at once)."""
    missed_heartbeats: int = 2
    grace_period: float = 15 * 60.0
    cancel_timeout: float = 10 * 60.0
    """``LINEUP_CANCEL_TIMEOUT`` (seconds): how long a requested cancel waits for the agent to
    confirm before the hub records the task cancelled; a workspace may set its own
    ``tasks.cancelTimeoutMinutes``."""
    monitor_interval: float = 1.0
    session_ttl: float = 30 * 24 * 3600.0
    """``LINEUP_SESSION_TTL``: seconds a person's session lasts from sign-in; refreshing its
    access token never takes it further."""
    access_token_ttl: float = 15 * 60.0
    """``LINEUP_ACCESS_TOKEN_TTL``: seconds an access token opens the API before the app must
    refresh it (ending a session ends its access tokens at once regardless)."""
    pairing_ttl: float = 10 * 60.0
    secure_cookies: bool = False
    allowed_origins: tuple[str, ...] = ()
    node_id: str = "node-1"
    pairing_attempts_per_ip: int = 10
    workspace_in_flight: int = 256
    """Frames of one workspace's agents a node works on at once (``lineup.hub.in_flight``)."""
    pairing_attempts_per_code: int = 5
    pairing_window: float = 60.0
    signin_attempts_per_ip: int = 20
    signup: str = "open"
    """Who may create an account: ``open`` (anyone; an invitation joins its workspace),
    ``invite`` (only with an invitation) or ``closed`` (only ``lineup user create``)."""
    invitation_ttl: float = 7 * 24 * 3600.0
    static_dir: Path | None = None
    artifact_max_bytes: int = 10 * 1024 * 1024
    """The largest file an agent may upload (``POST /api/agent/artifacts``)."""
    agent_log_lines: int = 500
    """``LINEUP_AGENT_LOG_LINES``: diagnostic lines kept per agent (``agent.logs``); older
    ones are dropped as new ones arrive."""
    direct: DirectMode | None = None  # see DirectMode
    tls: ServedTls | None = None
    """The certificate this process serves itself (``--tls-cert``/``--tls-self-signed``); None
    when it speaks plain HTTP, alone on loopback or behind a proxy that terminates TLS."""
    secret_keys: tuple[str, ...] = field(default=(), repr=False)
    """``LINEUP_SECRET_KEY``: the keys sealing stored secrets, current first; empty means the
    key file under ``home`` (see :mod:`lineup.hub.secret_keys`)."""
    # LINEUP_SMTP_*, LINEUP_VAPID_SUBJECT, LINEUP_NOTIFY_*
    smtp_host: str | None = None
    smtp_port: int = 587
    smtp_username: str | None = None
    smtp_password: str | None = field(default=None, repr=False)
    smtp_tls: str = "starttls"  # starttls | tls | none
    smtp_from: str | None = None
    vapid_subject: str | None = None
    notify_interval: float = 2.0
    notify_retry_base: float = 5.0
    notify_retry_max: float = 600.0
    notify_max_attempts: int = 8
    notify_enabled: bool = True
    push_allow_http: bool = False
    """Allow http:// push endpoints on the hosts of ``push_hosts`` (a local test service)."""
    push_hosts: tuple[str, ...] = ()
    """Push services besides the browsers' own (``LINEUP_PUSH_HOSTS``): ``host`` or
    ``*.domain``. The hub posts to these even on private addresses: the operator vouches."""
    lease_ttl: float = 10.0
    """Seconds a lease (and a node's liveness) lasts without renewal; renewed every third."""
    cluster_check_interval: float = 1.0
    """Seconds between checks of the database for events the stream did not bring."""
    # --- the HTTP edge: request bodies, connections, operators' endpoints ---
    max_body_bytes: int = 1024 * 1024
    """The largest request body the hub reads (413 above it); a few routes allow more
    (``lineup.hub.request_guard.LARGER_BODIES``)."""
    metrics_token: str | None = field(default=None, repr=False)
    """Bearer token for ``/metrics`` and ``/readyz/cluster``; without one, only callers on
    this machine (loopback) may read them."""
    header_timeout: float = 10.0
    """Seconds a new connection (or the next request on a kept-alive one) may take to send
    its request's headers before the hub closes it."""
    keep_alive_timeout: float = 5.0
    """Seconds an idle kept-alive connection stays open between requests."""
    max_connections_per_address: int = 256
    """HTTP connections one client address may hold open at once (0: no cap). WebSockets
    count until their upgrade; behind a reverse proxy every client shares its address."""
    # --- governance ---
    providers: tuple[str, ...] = ("scheduling",)
    """``LINEUP_PROVIDERS``: the in-tree providers to run (comma-separated; empty: none)."""
    provider_modules: tuple[str, ...] = ()
    """``LINEUP_PROVIDER_MODULES``, for developing a provider: ``module:factory`` entries, each
    a function of these settings that returns a provider. Its code runs unchecked, in the hub:
    never point it at code you have not read."""
    scheduling_dir: Path | None = None
    """``LINEUP_SCHEDULING_DIR``: where the in-tree scheduling system keeps its plants
    (default ``$LINEUP_HOME/providers/scheduling``); one directory shared by every node."""
    provider_dir: Path | None = None
    """``LINEUP_PROVIDER_DIR``: where the operator puts provider packages (``.lineup-provider``
    archives or package directories) for workspaces to discover and install (default
    ``$LINEUP_HOME/providers/available``). Discovery reads manifests only."""
    provider_trusted_keys: Path | None = None
    """``LINEUP_PROVIDER_TRUSTED_KEYS``: a file of the Ed25519 public keys whose signatures
    this hub accepts, one ``ed25519 <base64> [comment]`` per line. Without it no package
    installs (bundled providers still run)."""
    provider_dev_keys: Path | None = None
    """``LINEUP_PROVIDER_DEV_KEYS``: development keys the operator allows, same format;
    packages they sign install, marked "development" in the console. Unsigned packages never
    install."""
    provider_config: dict[str, dict[str, Any]] = field(default_factory=dict)
    """``LINEUP_PROVIDER_CONFIG``: a JSON file of each provider's configuration by id (its
    instances, addresses…; never secrets: those are ``lineup credentials``)."""
    provider_health_interval: float = 300.0
    """``LINEUP_PROVIDER_HEALTH_INTERVAL``: seconds between scheduled health probes."""
    contract_timeout: float = 120.0
    """Seconds the contract kit may run on a package being installed before it fails."""
    extra_providers: tuple[Any, ...] = field(default=(), repr=False)
    """Provider objects given by whoever builds the hub (tests, an embedding program)."""
    approval_ttl: float = 24 * 3600.0
    """``LINEUP_APPROVAL_TTL``: seconds a confirm card waits for a decision before it expires."""
    job_poll_interval: float = 1.0
    """Seconds between the core's looks at an async provider job."""
    # --- the log's retention (lineup.hub.retention) ---
    retention_days: int = 90
    """``LINEUP_RETENTION_DAYS``: events older than this many days are compacted (0: kept
    however old); a workspace may set its own ``retention.maxAgeDays``."""
    retention_max_events: int = 0
    """``LINEUP_RETENTION_MAX_EVENTS``: at most this many of a workspace's latest events are
    kept in full (0: no limit); a workspace may set its own ``retention.maxEvents``."""
    retention_interval: float = 3600.0
    """``LINEUP_RETENTION_INTERVAL``: seconds between the monitor's compaction passes."""

    # --- hosted engines (lineup.engines) ---
    engine_roots: tuple[Path, ...] = field(default_factory=lambda: (Path.home(),))
    """``LINEUP_ENGINE_ROOTS`` (``:``-separated): the directories hosted engines may work in
    (a working directory outside them, or a symlink out of them, is refused)."""
    engine_cap: int = 4
    """``LINEUP_ENGINE_CAP``: at most this many engine processes at once."""
    engine_idle_seconds: float = 600.0
    """``LINEUP_ENGINE_IDLE_SECONDS``: an engine process idle this long is stopped (the next
    message starts it again, with the conversation so far)."""
    engine_context_tokens: int = 24_000
    """``LINEUP_ENGINE_CONTEXT_TOKENS``: the budget of what a (re)started engine session is
    given of its conversation (recent turns, a summary of older ones, pinned references)."""
    engine_fake: bool = False
    """``LINEUP_ENGINE_FAKE``: offer the fake engine (LineUp's scriptable test engine, which
    needs no model and only echoes) to people creating hosted agents; off unless set to 1."""

    def __post_init__(self) -> None:
        if self.agent_log_lines < 1:
            raise ValueError("LINEUP_AGENT_LOG_LINES must be at least 1")
        if not self.cancel_timeout > 0:  # also NaN
            raise ValueError("LINEUP_CANCEL_TIMEOUT must be a positive number of seconds")
        if not 0 < self.access_token_ttl <= self.session_ttl:
            raise ValueError(
                "LINEUP_ACCESS_TOKEN_TTL must be more than 0 and at most the session's"
            )
        # A hub people reach over https must never send its session cookie over http.
        if self.tls is not None or (self.public_url or "").lower().startswith("https://"):
            object.__setattr__(self, "secure_cookies", True)

    @property
    def cookie_prefix(self) -> str:
        """The start of this LineUp's cookie names. Cookies are shared by every port of a host,
        so an agent in direct mode names its own (with its agent id, known before it binds a
        port): a hub and direct-mode agents on one machine then keep separate sessions."""
        return "lineup" if self.direct is None else f"lineup_direct_{self.direct.agent_id}"

    @property
    def offline_after(self) -> float:
        return self.heartbeat_interval * self.missed_heartbeats

    @property
    def base_url(self) -> str:
        scheme = "https" if self.tls is not None else "http"
        return self.public_url or f"{scheme}://{self.host}:{self.port}"

    @classmethod
    def from_env(cls, **overrides: object) -> Settings:
        from lineup.store import database_url_from_env

        home = lineup_home()
        values: dict[str, object] = {
            "home": home,
            "database_url": database_url_from_env(home),
            "writer_connections": max(1, int(os.environ.get("LINEUP_WRITER_CONNECTIONS") or 4)),
            "redis_url": os.environ.get("LINEUP_REDIS_URL") or None,
            "public_url": os.environ.get("LINEUP_PUBLIC_URL") or None,
            "heartbeat_interval": _seconds("LINEUP_HEARTBEAT_INTERVAL", 25.0),
            "grace_period": _seconds("LINEUP_GRACE_PERIOD", 15 * 60.0),
            "cancel_timeout": _seconds("LINEUP_CANCEL_TIMEOUT", 10 * 60.0),
            "session_ttl": _seconds("LINEUP_SESSION_TTL", 30 * 24 * 3600.0),
            "access_token_ttl": _seconds("LINEUP_ACCESS_TOKEN_TTL", 15 * 60.0),
            "secure_cookies": os.environ.get("LINEUP_SECURE_COOKIES", "") in ("1", "true"),
            "allowed_origins": tuple(
                o for o in os.environ.get("LINEUP_ALLOWED_ORIGINS", "").split(",") if o
            ),
            "node_id": os.environ.get("LINEUP_NODE_ID", "node-1"),
            "pairing_attempts_per_ip": int(os.environ.get("LINEUP_PAIRING_ATTEMPTS_PER_IP", "10")),
            "workspace_in_flight": int(os.environ.get("LINEUP_WORKSPACE_IN_FLIGHT") or 256),
            "signin_attempts_per_ip": int(os.environ.get("LINEUP_SIGNIN_ATTEMPTS_PER_IP") or 20),
            "artifact_max_bytes": int(
                os.environ.get("LINEUP_ARTIFACT_MAX_BYTES") or 10 * 1024 * 1024
            ),
            "agent_log_lines": int(os.environ.get("LINEUP_AGENT_LOG_LINES") or 500),
            "signup": _signup_mode(os.environ.get("LINEUP_SIGNUP", "")),
            "invitation_ttl": _seconds("LINEUP_INVITATION_TTL", 7 * 24 * 3600.0),
            "secret_keys": _secret_keys_env(),
            **_notification_env(),
            "lease_ttl": _seconds("LINEUP_LEASE_TTL", 10.0),
            "cluster_check_interval": _seconds("LINEUP_CLUSTER_CHECK_INTERVAL", 1.0),
            **_edge_env(),
            "providers": tuple(
                p.strip()
                for p in os.environ.get("LINEUP_PROVIDERS", "scheduling").split(",")
                if p.strip()
            ),
            "approval_ttl": _seconds("LINEUP_APPROVAL_TTL", 24 * 3600.0),
            "provider_modules": tuple(
                m.strip()
                for m in os.environ.get("LINEUP_PROVIDER_MODULES", "").split(",")
                if m.strip()
            ),
            "scheduling_dir": (
                Path(os.environ["LINEUP_SCHEDULING_DIR"]).expanduser()
                if os.environ.get("LINEUP_SCHEDULING_DIR")
                else None
            ),
            **_provider_env(),
            **_retention_env(),
            **_engine_env(),
        }
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)  # type: ignore[arg-type]


def _provider_env() -> dict[str, object]:
    env = os.environ

    def path(name: str) -> Path | None:
        return Path(env[name]).expanduser() if env.get(name) else None

    config: dict[str, dict[str, Any]] = {}
    config_file = path("LINEUP_PROVIDER_CONFIG")
    if config_file is not None:
        loaded = json.loads(config_file.read_text())
        if not isinstance(loaded, dict) or not all(isinstance(v, dict) for v in loaded.values()):
            raise ValueError("LINEUP_PROVIDER_CONFIG is a JSON object of objects by provider id")
        config = loaded
    return {
        "provider_dir": path("LINEUP_PROVIDER_DIR"),
        "provider_trusted_keys": path("LINEUP_PROVIDER_TRUSTED_KEYS"),
        "provider_dev_keys": path("LINEUP_PROVIDER_DEV_KEYS"),
        "provider_config": config,
        "provider_health_interval": _seconds("LINEUP_PROVIDER_HEALTH_INTERVAL", 300.0),
    }


def _engine_env() -> dict[str, object]:
    from lineup.engines.process import engine_roots

    env = os.environ
    return {
        "engine_roots": engine_roots(env),
        "engine_cap": max(1, int(env.get("LINEUP_ENGINE_CAP") or 4)),
        "engine_idle_seconds": float(env.get("LINEUP_ENGINE_IDLE_SECONDS") or 600),
        "engine_context_tokens": max(1000, int(env.get("LINEUP_ENGINE_CONTEXT_TOKENS") or 24_000)),
        "engine_fake": env.get("LINEUP_ENGINE_FAKE", "").strip().lower() in ("1", "true", "yes"),
    }


def _retention_env() -> dict[str, object]:
    env = os.environ
    values: dict[str, object] = {
        "retention_days": int(env.get("LINEUP_RETENTION_DAYS") or 90),
        "retention_max_events": int(env.get("LINEUP_RETENTION_MAX_EVENTS") or 0),
        "retention_interval": _seconds("LINEUP_RETENTION_INTERVAL", 3600.0),
    }
    for name in ("LINEUP_RETENTION_DAYS", "LINEUP_RETENTION_MAX_EVENTS"):
        if int(env.get(name) or 0) < 0:
            raise ValueError(f"{name} must be 0 (no limit) or more")
    return values


def _edge_env() -> dict[str, object]:
    env = os.environ
    return {
        "max_body_bytes": int(env.get("LINEUP_MAX_BODY_BYTES") or 1024 * 1024),
        "metrics_token": env.get("LINEUP_METRICS_TOKEN") or None,
        "header_timeout": _seconds("LINEUP_HEADER_TIMEOUT", 10.0),
        "keep_alive_timeout": _seconds("LINEUP_KEEP_ALIVE_TIMEOUT", 5.0),
        "max_connections_per_address": int(env.get("LINEUP_MAX_CONNECTIONS_PER_ADDRESS") or 256),
    }


SIGNUP_MODES = ("open", "invite", "closed")


def _signup_mode(raw: str) -> str:
    mode = raw.strip().lower() or "open"
    if mode not in SIGNUP_MODES:
        raise ValueError("LINEUP_SIGNUP must be open, invite or closed")
    return mode


def _secret_keys_env() -> tuple[str, ...]:
    from lineup.hub.secret_keys import parse_key_list

    return parse_key_list(os.environ.get("LINEUP_SECRET_KEY") or "")


def _notification_env() -> dict[str, object]:
    env = os.environ
    tls = (env.get("LINEUP_SMTP_TLS") or "starttls").strip().lower()
    tls = {"1": "starttls", "true": "starttls", "0": "none", "false": "none", "ssl": "tls"}.get(
        tls, tls
    )
    if tls not in ("starttls", "tls", "none"):
        raise ValueError("LINEUP_SMTP_TLS must be starttls, tls or none")
    default_port = {"tls": 465, "starttls": 587, "none": 25}[tls]
    return {
        "smtp_host": env.get("LINEUP_SMTP_HOST") or None,
        "smtp_port": int(env.get("LINEUP_SMTP_PORT") or default_port),
        "smtp_username": env.get("LINEUP_SMTP_USERNAME") or None,
        "smtp_password": env.get("LINEUP_SMTP_PASSWORD") or None,
        "smtp_tls": tls,
        "smtp_from": env.get("LINEUP_SMTP_FROM") or None,
        "vapid_subject": env.get("LINEUP_VAPID_SUBJECT") or None,
        "notify_interval": _seconds("LINEUP_NOTIFY_INTERVAL", 2.0),
        "push_allow_http": env.get("LINEUP_PUSH_ALLOW_HTTP", "") in ("1", "true"),
        "push_hosts": tuple(
            h.strip() for h in (env.get("LINEUP_PUSH_HOSTS") or "").split(",") if h.strip()
        ),
    }
