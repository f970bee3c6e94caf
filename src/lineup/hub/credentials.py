"""Agent credentials: what a pairing code is exchanged for, scoped to one workspace and one
agent identity (seed 001 §11). Stored only as a hash; revocation is checked on every use."""

from __future__ import annotations

from lineup.hub.actors import AgentIdentity
from lineup.hub.security import token_hash
from lineup.hub.state import HubState
from lineup.protocol.errors import Unauthenticated
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

    credential, agent = await hub.store.read(read)
    if credential is None:
        raise refused("LNP-AUTH-UNKNOWN", "This agent credential is not known to this hub.")
    if credential.revoked_at is not None:
        raise refused("LNP-AUTH-REVOKED", "This agent's access was revoked.")
    if agent is None or agent.status == "revoked":
        raise refused("LNP-AUTH-REVOKED", "This agent's access was revoked.")
    return AgentIdentity(agent.id, agent.workspace_id, agent.name, agent.confirmed)
