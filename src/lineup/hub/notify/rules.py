"""Which committed events reach people, and what a notification says.

A notification names the agent, the kind of request and where to answer it — never the
request's title, details, arguments or any message text (seed 001 §11: no raw sensitive input
in notification bodies). The link opens the exact card.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlencode

from lineup.domain import ACTIVE_STATUSES
from lineup.protocol import facts
from lineup.store import Reader, StoredEvent, fact_of

REQUEST_WORDS = {
    "approval": "approval",
    "choice": "choice",
    "input": "answer",
    "review": "review",
}

PERSON_TOOLS = {"choice": "choice", "confirm": "confirmation", "input": "answer"}
"""Tools of the app (seed 000) that ask a person something, and what they ask for."""

WATCHED = frozenset(
    {"interaction.requested", "task.status_changed", "agent.status_changed", "tool.called"}
)
"""Event types that may notify."""

NOTIFYING_STATUSES: Mapping[str, frozenset[str]] = {
    "task.status_changed": frozenset({"failed", "succeeded"}),
    "agent.status_changed": frozenset({"offline"}),
}
"""Watched types that notify only in these statuses: a progress report never does."""


@dataclass(frozen=True, slots=True)
class Notice:
    """One thing worth telling the workspace's people about."""

    kind: str  # a preference event: waiting | failed | done
    subject_type: str  # interaction | task | agent | tool_call
    subject_id: str
    key: str  # unique per subject: with the person, channel and device, the dedupe key
    title: str
    body: str
    link: str  # a path in the web app
    tag: str  # the notification's tag on the device: a resend replaces, never repeats


def _link(path: str, workspace_id: str, **query: str | None) -> str:
    params = {"workspace": workspace_id, **{k: v for k, v in query.items() if v}}
    return f"{path}?{urlencode(params)}"


def _agent_name(read: Reader, workspace_id: str, agent_id: str | None) -> str:
    agent = read.get_agent(workspace_id, agent_id) if agent_id else None
    return agent.name if agent is not None else "An agent"


def _actor_agent(event: StoredEvent) -> str | None:
    return event.actor[6:] if event.actor.startswith("agent:") else None


def may_notify(event: StoredEvent) -> bool:
    """Checked on the stored JSON before the payload is parsed: progress reports are most of
    a busy log, and only a task's end or an agent going offline can notify of theirs. The
    worker wakes only for commits with such an event; it reads past the others at its
    interval."""
    statuses = NOTIFYING_STATUSES.get(event.type)
    if statuses is not None:
        return event.payload.get("status") in statuses
    return event.type in WATCHED


def notices_for(event: StoredEvent, read: Reader) -> list[Notice]:
    if not may_notify(event):
        return []
    ws = event.workspace_id
    fact = fact_of(event)
    if isinstance(fact, facts.InteractionRequestedPayload):
        interaction_id = fact.interaction.id
        word = REQUEST_WORDS.get(fact.interaction.type.value, "decision")
        agent = _agent_name(read, ws, _actor_agent(event))
        return [
            Notice(
                kind="waiting",
                subject_type="interaction",
                subject_id=interaction_id,
                key=f"interaction.requested:{ws}:{interaction_id}",
                title="Waiting for you",
                body=f"{agent} asks for your {word}.",
                link=_link("/inbox", ws, interaction=interaction_id, task=event.task_id),
                tag=f"lineup:interaction:{interaction_id}",
            )
        ]
    if isinstance(fact, facts.ToolCalledPayload):
        # An agent's call of a tool that asks a person (choice, confirm, input) waits for
        # them like an interaction. Its arguments are never part of the notice.
        call_id = fact.tool_call_id
        name = fact.name
        if not call_id or name not in PERSON_TOOLS:
            return []
        agent = _agent_name(read, ws, _actor_agent(event))
        return [
            Notice(
                kind="waiting",
                subject_type="tool_call",
                subject_id=call_id,
                key=f"tool.called:{ws}:{call_id}",
                title="Waiting for you",
                body=f"{agent} asks for your {PERSON_TOOLS[name]}.",
                link=_link("/inbox", ws, toolCall=call_id, task=event.task_id),
                tag=f"lineup:tool-call:{call_id}",
            )
        ]
    if isinstance(fact, facts.TaskStatusChangedPayload) and fact.status in ("failed", "succeeded"):
        task_id = fact.task_id or event.task_id or ""
        task = read.get_task(ws, task_id)
        agent = _agent_name(read, ws, task.target_agent_id if task else _actor_agent(event))
        failed = fact.status == "failed"
        if failed and fact.error == "agent_unreachable":
            body = f"{agent} did not come back in time; its task failed."
        elif failed:
            body = f"A task of {agent} failed."
        else:
            body = f"{agent} finished a task."
        return [
            Notice(
                kind="failed" if failed else "done",
                subject_type="task",
                subject_id=task_id,
                key=f"task.{'failed' if failed else 'done'}:{ws}:{task_id}",
                title="A task failed" if failed else "A task finished",
                body=body,
                link=_link(f"/tasks/{task_id}", ws),
                tag=f"lineup:task:{task_id}",
            )
        ]
    if isinstance(fact, facts.AgentStatusChangedPayload) and fact.status == "offline":
        agent_id = fact.agent_id
        working = [
            t
            for t in read.list_tasks(ws, statuses=ACTIVE_STATUSES, limit=500)
            if t.target_agent_id == agent_id
        ]
        if not working:
            return []  # an idle agent going away is not worth waking anyone for
        agent = _agent_name(read, ws, agent_id)
        count = f"{len(working)} task{'s' if len(working) != 1 else ''}"
        return [
            Notice(
                kind="failed",
                subject_type="agent",
                subject_id=agent_id,
                key=f"agent.unreachable:{ws}:{event.id}",
                title="Agent unreachable",
                body=f"{agent} lost its connection while working on {count}.",
                link=_link(f"/agents/{agent_id}", ws),
                tag=f"lineup:agent:{agent_id}",
            )
        ]
    return []
