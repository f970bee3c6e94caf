"""Pairing (seed 001 §7.1): a one-time code, valid 10 minutes, exchanged by the agent's adapter
for a credential. Codes are stored hashed; redemption is throttled per IP and per code.

Binding finishes when a person confirms the agent (its name, version, runtime and
capabilities shown in the app), maybe under another name; until then the agent may connect
but gets no work. A person who does not recognise it rejects it instead: its credential
stops working and it leaves the workspace."""

from __future__ import annotations

import shlex
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from lineup.hub.actors import Person
from lineup.hub.commands import agent_in
from lineup.hub.credentials import CREDENTIAL_PREFIX
from lineup.hub.recorder import Writing
from lineup.hub.security import (
    new_pairing_code,
    new_token,
    normalise_pairing_code,
    token_hash,
)
from lineup.protocol import facts
from lineup.protocol.errors import Conflict, NotFound
from lineup.protocol.ids import new_id
from lineup.store import AgentCredentialRecord, PairingCodeRecord
from lineup.store import auth as store_auth

_NEW_CODE = "Ask for a new pairing code in LineUp (Agents → Connect my agent); codes last 10 min."


def lineup_program(
    executable: str,
    cwd: Path,
    which: Callable[[str], str | None] = shutil.which,
) -> str:
    """How a person on this machine starts ``lineup``: the bare name when that is the one
    beside this hub's Python, else that one's path (a checkout's ``.venv/bin/lineup``, which a
    newcomer has without ``lineup`` on their PATH), relative to where the hub was started."""
    beside = Path(executable).with_name("lineup")
    found = which("lineup")
    if not beside.exists() or (found is not None and Path(found).absolute() == beside.absolute()):
        return "lineup"
    try:
        shown = str(beside.absolute().relative_to(cwd.absolute()))
    except ValueError:
        shown = str(beside.absolute())
    return shlex.quote(shown)


@cache
def this_lineup() -> str:
    return lineup_program(sys.executable, Path.cwd())


@dataclass(frozen=True, slots=True)
class IssuedCode:
    code: str
    expires_at_ms: int
    record_id: str


@dataclass(frozen=True, slots=True)
class Paired:
    agent_id: str
    workspace_id: str
    credential: str
    name: str
    awaiting_confirmation: bool = True


def code_hash(code: str) -> str:
    return token_hash("pairing:" + normalise_pairing_code(code))


def issue_code(
    w: Writing, person: Person, ttl_ms: int, agent_name: str | None = None
) -> IssuedCode:
    code = new_pairing_code()
    record = PairingCodeRecord(
        id=new_id("pair"),
        workspace_id=person.workspace_id,
        code_hash=code_hash(code),
        created_by=person.actor,
        created_at=w.now_ms,
        expires_at=w.now_ms + ttl_ms,
        agent_name=agent_name,
    )
    store_auth.insert_pairing_code(w.connection, record)
    return IssuedCode(code, record.expires_at, record.id)


def _invalid() -> NotFound:
    return NotFound(
        "This pairing code is not valid: it may be mistyped, already used or expired.",
        details={"diagnostic": "LNP-PAIR-INVALID", "nextStep": _NEW_CODE},
    )


def redeem(
    w: Writing,
    code: str,
    *,
    name: str | None,
    runtime: str | None,
    agent_version: str | None,
    capabilities: list[str] | None = None,
) -> Paired:
    record = store_auth.get_pairing_code_by_hash(w.connection, code_hash(code))
    if record is None or record.used_at is not None or record.expires_at <= w.now_ms:
        raise _invalid()
    if not store_auth.use_pairing_code(w.connection, record.id, w.now_ms):
        raise _invalid()
    agent_id = new_id("agent")
    agent_name = (name or record.agent_name or "My agent").strip()[:100] or "My agent"
    fact = facts.AgentPairedPayload(
        agent_id=agent_id,
        name=agent_name,
        runtime=runtime[:100] if runtime else None,
        agent_version=agent_version[:100] if agent_version else None,
        awaiting_confirmation=True,
        capabilities=list(capabilities) if capabilities else None,
    )
    w.append(record.workspace_id, fact, actor=record.created_by)
    credential = new_token(CREDENTIAL_PREFIX)
    store_auth.insert_agent_credential(
        w.connection,
        AgentCredentialRecord(
            id=new_id("cred"),
            agent_id=agent_id,
            workspace_id=record.workspace_id,
            secret_hash=token_hash(credential),
            created_at=w.now_ms,
        ),
    )
    return Paired(agent_id, record.workspace_id, credential, agent_name)


def revoke(w: Writing, person: Person, agent_id: str, event_id: str | None = None) -> bool:
    agent = w.read.get_agent(person.workspace_id, agent_id)
    if agent is None:
        raise NotFound(f"No agent {agent_id!r} in this workspace.")
    store_auth.revoke_agent_credentials(w.connection, agent_id, w.now_ms)
    if agent.status == "revoked":
        return False
    w.append(
        person.workspace_id,
        facts.AgentRevokedPayload(agent_id=agent_id),
        actor=person.actor,
        event_id=event_id,
    )
    return True


def confirm(
    w: Writing, person: Person, agent_id: str, name: str | None, event_id: str | None = None
) -> bool:
    """A person confirms the agent (maybe renaming it): from now on it may get work.
    Confirming a confirmed agent changes nothing (renaming is ``agent.renamed``'s job)."""
    agent = agent_in(w, person.workspace_id, agent_id)
    if agent.status == "revoked":
        raise Conflict(
            f"Agent {agent.name!r} was revoked; pair it again.", details={"reason": "revoked"}
        )
    if agent.confirmed:
        return False
    w.append(
        person.workspace_id,
        facts.AgentConfirmedPayload(
            agent_id=agent_id,
            name=(name or "").strip() or agent.name,
            confirmed_by=person.actor,
            target_agent_id=agent_id,
        ),
        actor=person.actor,
        event_id=event_id,
    )
    return True


def reject(w: Writing, person: Person, agent_id: str, event_id: str | None = None) -> None:
    """A person does not recognise a newly paired agent: its credential stops working and it
    leaves the workspace. Only an unconfirmed agent can be rejected (a confirmed one is
    revoked, which keeps its history attached to its tasks)."""
    agent = agent_in(w, person.workspace_id, agent_id)
    if agent.confirmed:
        raise Conflict(
            f"Agent {agent.name!r} is confirmed already; revoke it instead.",
            details={"reason": "already_confirmed"},
        )
    store_auth.revoke_agent_credentials(w.connection, agent_id, w.now_ms)
    w.append(
        person.workspace_id,
        facts.AgentRejectedPayload(agent_id=agent_id, rejected_by=person.actor),
        actor=person.actor,
        event_id=event_id,
    )
