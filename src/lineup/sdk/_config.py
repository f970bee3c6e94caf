"""An agent's identity: where its hub is and the credential pairing gave it.

Credentials are saved as JSON readable only by the owner (mode 0600), written to a temporary
file and renamed over the old one so a crash never leaves half a file.
"""

from __future__ import annotations

import json
import os
import secrets
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from lineup.protocol.ids import new_id
from lineup.sdk._direct import DirectOptions
from lineup.sdk._relay import RelayOptions
from lineup.sdk._tls import TlsOptions

_CREDENTIALS_FILE = "credentials.json"


def agent_home() -> Path:
    """``$LINEUP_AGENT_HOME``, by default ``~/.lineup-agent``: credentials and state live here."""
    return Path(os.environ.get("LINEUP_AGENT_HOME") or Path.home() / ".lineup-agent").expanduser()


def default_credentials_path() -> Path:
    """Where :func:`lineup.sdk.pair` saves and :meth:`AgentConfig.load` reads by default."""
    return agent_home() / _CREDENTIALS_FILE


@dataclass(frozen=True, slots=True)
class AgentConfig:
    """What an agent needs to connect: made by :func:`lineup.sdk.pair`, read by :meth:`load`.

    The credential is a secret; it is left out of ``repr()``. ``tls`` says how the hub's
    certificate is trusted (a pinned fingerprint, a CA file, or the system's authorities) and
    whether plain text to another machine is allowed; it is saved with the credential, and
    ``LINEUP_TLS_FINGERPRINT``, ``LINEUP_TLS_CA_FILE`` and ``LINEUP_ALLOW_INSECURE`` override
    it when :meth:`load` reads the file.

    In direct mode (``direct`` set, see :meth:`for_direct`) the agent serves LineUp itself
    and needs no hub: :meth:`~lineup.sdk.Agent.run` starts it; the other fields are then made
    for the one run.
    """

    hub_url: str
    websocket_url: str
    agent_id: str
    workspace_id: str
    credential: str = field(repr=False)
    direct: DirectOptions | None = None
    tls: TlsOptions = field(default_factory=TlsOptions)
    relay: RelayOptions | None = None

    @property
    def mode(self) -> Literal["hub", "direct", "relay"]:
        """``"direct"`` when the agent serves LineUp itself to people who connect to it,
        ``"relay"`` when it serves it through a WuKongIM server, else ``"hub"``."""
        if self.relay is not None:
            return "relay"
        return "hub" if self.direct is None else "direct"

    @property
    def hosted(self) -> bool:
        """Whether the agent serves LineUp itself (direct or relay mode): a host runs it."""
        return self.direct is not None or self.relay is not None

    @classmethod
    def for_relay(cls, options: RelayOptions) -> AgentConfig:
        """A relay-mode configuration. The identity here is a placeholder: the relay host
        keeps the agent's real one with its data (``$LINEUP_HOME/relay/<uid>/``), so tasks
        and the agent's state outlive a restart, and runs the agent as that."""
        return cls(
            hub_url="http://127.0.0.1:0",
            websocket_url="ws://127.0.0.1:0/ws/agent",
            agent_id=new_id("agent"),
            workspace_id=new_id("ws"),
            credential=f"lna_{secrets.token_urlsafe(32)}",
            relay=options,
        )

    @classmethod
    def for_direct(cls, options: DirectOptions) -> AgentConfig:
        """A direct-mode configuration: the agent's identity is made for this run, and the
        hub address is its own (loopback), completed with the real port when it listens."""
        return cls(
            hub_url=f"http://127.0.0.1:{options.port}",
            websocket_url=f"ws://127.0.0.1:{options.port}/ws/agent",
            agent_id=new_id("agent"),
            workspace_id=new_id("ws"),
            credential=f"lna_{secrets.token_urlsafe(32)}",
            direct=options,
        )

    @classmethod
    def load(cls, path: str | os.PathLike[str] | None = None) -> AgentConfig:
        """Read saved credentials (default ``$LINEUP_AGENT_HOME/credentials.json``).

        ``LINEUP_MODE=direct`` or ``relay`` selects that mode from the environment instead
        (see :meth:`DirectOptions.from_env`, :meth:`RelayOptions.from_env`); the file is then
        not read.
        """
        mode = os.environ.get("LINEUP_MODE", "").strip().lower()
        if mode == "direct":
            return cls.for_direct(DirectOptions.from_env())
        if mode == "relay":
            return cls.for_relay(RelayOptions.from_env())
        if mode not in ("", "hub"):
            raise ValueError(f"LINEUP_MODE must be 'hub', 'direct' or 'relay', not {mode!r}.")
        source = Path(path) if path is not None else default_credentials_path()
        try:
            data = json.loads(source.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise FileNotFoundError(
                f"No agent credentials at {source}. Pair this agent first: get a pairing code "
                "in LineUp (Agents → Connect my agent) and call lineup.sdk.pair()."
            ) from None
        saved = cls.from_json(data, source=str(source))
        return replace(saved, tls=TlsOptions.from_env().over(saved.tls))

    @classmethod
    def from_json(cls, data: Any, *, source: str = "credentials") -> AgentConfig:
        """Build from the saved JSON object (camelCase keys, as written by :meth:`to_json`)."""
        keys = ("hubUrl", "websocketUrl", "agentId", "workspaceId", "credential")
        if not isinstance(data, dict):
            raise ValueError(f"{source} must hold a JSON object.")
        mode = data.get("mode", "hub")
        if mode == "direct":
            return cls.for_direct(DirectOptions.from_json(data, source=source))
        if mode == "relay":
            return cls.for_relay(RelayOptions.from_json(data, source=source))
        if mode != "hub":
            raise ValueError(f'{source}: "mode" must be "hub", "direct" or "relay", not {mode!r}.')
        missing = [k for k in keys if not isinstance(data.get(k), str) or not data.get(k)]
        if missing:
            raise ValueError(f"{source} lacks {', '.join(missing)}; pair the agent again.")
        return cls(
            hub_url=data["hubUrl"],
            websocket_url=data["websocketUrl"],
            agent_id=data["agentId"],
            workspace_id=data["workspaceId"],
            credential=data["credential"],
            tls=TlsOptions.from_json(data, source=source),
        )

    def to_json(self) -> dict[str, Any]:
        if self.relay is not None:
            return self.relay.to_json()
        if self.direct is not None:
            return self.direct.to_json()
        return {
            "hubUrl": self.hub_url,
            "websocketUrl": self.websocket_url,
            "agentId": self.agent_id,
            "workspaceId": self.workspace_id,
            "credential": self.credential,
            **self.tls.to_json(),
        }

    def save(self, path: str | os.PathLike[str] | None = None) -> Path:
        """Write the credentials with mode 0600, atomically; returns the path written."""
        target = Path(path) if path is not None else default_credentials_path()
        write_private_file(target, json.dumps(self.to_json(), indent=2) + "\n")
        return target


def write_private_file(target: Path, text: str) -> None:
    """Create ``target`` readable and writable by its owner only, replacing it atomically."""
    target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    temporary = target.with_name(f".{target.name}.{secrets.token_hex(6)}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            os.fchmod(handle.fileno(), 0o600)  # the mode given to open() obeys the umask
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, target)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
