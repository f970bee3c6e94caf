"""Agents' diagnostic lines (``agent.logs``): kept per agent, read by the Agents screen.

An agent redacts its lines before sending them; the hub redacts them again with the rules
that need no knowledge of the agent's secrets (LineUp's token shapes, bearer tokens, URLs'
secrets, fields whose names look secret), in case a line came from an adapter that skipped
its own step. Then it keeps the newest ``Settings.agent_log_lines`` per agent
(:mod:`lineup.store.agent_logs`). The lines are not recorded facts: they are the agent's
say about itself, shown as such, and a replay of the log neither makes nor needs them.
"""

from __future__ import annotations

from typing import Any

from lineup.hub.actors import AgentIdentity
from lineup.hub.state import HubState
from lineup.protocol.agent_logs import AgentLogs, LogLine
from lineup.protocol.redaction import Redactor
from lineup.protocol.times import datetime_to_ms, iso
from lineup.store import agent_logs as store

HUB_REDACTION = Redactor()


def _redacted(line: LogLine) -> store.NewLine:
    message, fields = HUB_REDACTION.line(line.message, line.fields)
    return store.NewLine(
        line_id=line.id,
        at=datetime_to_ms(line.ts),
        level=line.level.value,
        logger=HUB_REDACTION.text(line.logger)[:100],
        message=message,
        fields=fields,
    )


async def keep(hub: HubState, agent: AgentIdentity, payload: AgentLogs) -> int:
    """Keep a batch; how many of its lines were new."""
    lines = [_redacted(line) for line in payload.lines]
    now = hub.clock()
    ring = hub.settings.agent_log_lines
    return await hub.store.write(
        lambda tx: store.keep_lines(
            tx.connection,
            agent.workspace_id,
            agent.agent_id,
            lines,
            received_at=now,
            keep=ring,
        ),
        lane=agent.actor,
        workspace=agent.workspace_id,
    )


def view(line: store.StoredLine) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": line.line_id,
        "position": line.position,
        "at": iso(line.at),
        "receivedAt": iso(line.received_at),
        "level": line.level,
        "logger": line.logger,
        "message": line.message,
    }
    if line.fields:
        out["fields"] = line.fields
    return out
