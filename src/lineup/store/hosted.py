"""Hosted agents' definitions (``hosted_agents``): the engine, its working directory and model
endpoint, and — sealed — the agent's credential and the endpoint's key.

Not event-sourced: the agent's existence is in the log (``agent.paired``), the secrets never
are. Each sealed value is bound to its row and column by its context, so a value copied into
another row does not open.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from sqlalchemy import delete, insert, select, update
from sqlalchemy.engine import Connection

from lineup.store.records import _FromRow
from lineup.store.schema import hosted_agents
from lineup.store.sealed import Keyring


@dataclass(frozen=True)
class HostedAgentRow(_FromRow):
    agent_id: str
    workspace_id: str
    engine: str
    cwd: str
    api: str
    base_url: str
    model: str
    sealed_credential: str
    sealed_api_key: str | None
    created_by: str
    created_at: int
    project_id: str | None = None


def credential_context(agent_id: str) -> str:
    return f"hosted_agents.credential:{agent_id}"


def api_key_context(agent_id: str) -> str:
    return f"hosted_agents.api_key:{agent_id}"


def insert_hosted(conn: Connection, row: HostedAgentRow) -> None:
    conn.execute(insert(hosted_agents).values(**asdict(row)))


def get_hosted(conn: Connection, agent_id: str) -> HostedAgentRow | None:
    found = conn.execute(select(hosted_agents).where(hosted_agents.c.agent_id == agent_id)).first()
    return HostedAgentRow.from_row(found) if found is not None else None


def list_hosted(conn: Connection, workspace_id: str | None = None) -> list[HostedAgentRow]:
    stmt = select(hosted_agents).order_by(hosted_agents.c.created_at, hosted_agents.c.agent_id)
    if workspace_id is not None:
        stmt = stmt.where(hosted_agents.c.workspace_id == workspace_id)
    return [HostedAgentRow.from_row(r) for r in conn.execute(stmt)]


def projects_of(conn: Connection, workspace_id: str, agent_ids: list[str]) -> dict[str, str]:
    """The project of each of these agents that is hosted in one, by agent id."""
    if not agent_ids:
        return {}
    stmt = select(hosted_agents.c.agent_id, hosted_agents.c.project_id).where(
        hosted_agents.c.workspace_id == workspace_id,
        hosted_agents.c.agent_id.in_(agent_ids),
        hosted_agents.c.project_id.is_not(None),
    )
    return {str(r.agent_id): str(r.project_id) for r in conn.execute(stmt)}


def delete_hosted(conn: Connection, agent_id: str) -> bool:
    return bool(
        conn.execute(delete(hosted_agents).where(hosted_agents.c.agent_id == agent_id)).rowcount
    )


def reseal(conn: Connection, keyring: Keyring) -> int:
    """Seal again under the current key what an older key sealed; raises ``UnreadableSecret``
    when a value opens with no key. How many values changed."""
    changed = 0
    for row in list_hosted(conn):
        values: dict[str, str] = {}
        if keyring.needs_resealing(row.sealed_credential):
            context = credential_context(row.agent_id)
            values["sealed_credential"] = keyring.seal(
                keyring.open(row.sealed_credential, context), context
            )
        if row.sealed_api_key is not None and keyring.needs_resealing(row.sealed_api_key):
            context = api_key_context(row.agent_id)
            values["sealed_api_key"] = keyring.seal(
                keyring.open(row.sealed_api_key, context), context
            )
        if values:
            conn.execute(
                update(hosted_agents)
                .where(hosted_agents.c.agent_id == row.agent_id)
                .values(**values)
            )
            changed += len(values)
    return changed
