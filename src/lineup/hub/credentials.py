"""Agent credentials: what a pairing code is exchanged for, scoped to one workspace and one
agent identity (seed 001 §11). Stored only as a hash; revocation is checked on every use.
A credential lives until it is revoked, or rotated: a new one for the same agent, made by a
person or by the agent itself, without pairing again."""

from __future__ import annotations

from dataclasses import dataclass

from lineup.hub import audit
from lineup.hub.actors import AgentIdentity
from lineup.hub.recorder import Writing
from lineup.hub.security import new_token, token_hash
from lineup.hub.state import HubState
from lineup.protocol.errors import Conflict, NotFound, Unauthenticated
from lineup.protocol.ids import new_id
from lineup.store import Agent, AgentCredentialRecord, Reader
from lineup.store import auth as store_auth

CREDENTIAL_PREFIX = "lna"

_PAIR_AGAIN = (
    "Ask for a new pairing code in LineUp (Agents → Connect my agent) and run the pairing "
    "command it shows on the agent's machine."
)


def refused(diagnostic: str, message: str, next_step: str = _PAIR_AGAIN) -> Unauthenticated:
    return Unauthenticated(message, details={"diagnostic": diagnostic, "nextStep": next_step})


async def authenticate_agent(hub: HubState, authorization: str) -> AgentIdentity:
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise refused(
            "LNP-AUTH-MISSING",
            "The connection carried no agent credential (Authorization: Bearer …).",
        )
    secret_hash = token_hash(token.strip())

    def read(r: Reader) -> tuple[AgentCredentialRecord | None, Agent | None]:
        credential = store_auth.get_agent_credential_by_hash(r.connection, secret_hash)
        if credential is None or credential.revoked_at is not None:
            return credential, None
        return credential, r.get_agent(credential.workspace_id, credential.agent_id)

    credential, agent = await hub.store.read(read, brief=True)
    if credential is None:
        raise refused("LNP-AUTH-UNKNOWN", "This agent credential is not known to this hub.")
    if credential.revoked_at is not None:
        raise refused("LNP-AUTH-REVOKED", "This agent's access was revoked.")
    if agent is None or agent.status == "revoked":
        raise refused("LNP-AUTH-REVOKED", "This agent's access was revoked.")
    return AgentIdentity(agent.id, agent.workspace_id, agent.name, agent.confirmed)


@dataclass(frozen=True, slots=True)
class Rotated:
    agent_id: str
    credential: str
    rotated_at: int


def rotate(w: Writing, workspace_id: str, agent_id: str, actor: str) -> Rotated:
    """Give the agent a new credential and end its old ones: no new pairing, the same agent,
    its history and settings kept. The new secret is returned this once."""
    agent = w.read.get_agent(workspace_id, agent_id)
    if agent is None:
        raise NotFound(f"No agent {agent_id!r} in this workspace.")
    if agent.status == "revoked":
        raise Conflict(
            f"Agent {agent.name!r} was revoked; pair it again.", details={"reason": "revoked"}
        )
    ended = store_auth.revoke_agent_credentials(w.connection, agent_id, w.now_ms)
    credential = new_token(CREDENTIAL_PREFIX)
    store_auth.insert_agent_credential(
        w.connection,
        AgentCredentialRecord(
            id=new_id("cred"),
            agent_id=agent_id,
            workspace_id=workspace_id,
            secret_hash=token_hash(credential),
            created_at=w.now_ms,
        ),
    )
    audit.record(
        w,
        "agent.credential_rotated",
        workspace_id=workspace_id,
        actor=actor,
        subject=f"agent:{agent_id}",
        data={"endedCredentials": ended},
    )
    return Rotated(agent_id, credential, w.now_ms)
