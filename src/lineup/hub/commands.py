"""What people and agents can ask the hub to do: each command checks the workspace boundary
and the domain rules, then records facts as events (seed 001 §7, §10, §11).

Every function is a synchronous job for :meth:`Recorder.run`, so its checks and its appends
share one transaction. A command that would change nothing (the same answer again, a second cancel
request) records nothing and says so.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from lineup import domain
from lineup.domain import interactions, pending
from lineup.hub import sight
from lineup.hub.actors import AgentIdentity, Person
from lineup.hub.recorder import Writing
from lineup.hub.translate import (
    domain_rules,
    interaction_pending,
    interaction_request,
    interaction_state,
    lineup_error,
    response_to_domain,
    response_to_wire,
    task_state,
    with_default_options,
)
from lineup.protocol import agent_settings, facts
from lineup.protocol import events as ev
from lineup.protocol.errors import (
    Conflict,
    Forbidden,
    InvalidArgument,
    LineupError,
    NotFound,
)
from lineup.protocol.ids import new_id
from lineup.protocol.interaction import Attachment, InteractionResponse
from lineup.protocol.links import hub_file
from lineup.store import AppendResult, Reader, records
from lineup.store import governance as governance_store
from lineup.store import hosted as hosted_store


def derived_id(prefix: str, *parts: str) -> str:
    """A stable id made from an idempotency key, so a resent command names the same object."""
    digest = hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()[:24]
    return f"{prefix}_{digest}"


def check_hub_files(w: Writing, workspace_id: str, urls: list[str]) -> None:
    """Every hub file among ``urls`` was uploaded to this workspace: a link to another
    workspace's file, or to none, would be a dead link for everyone who sees it."""
    for url in urls:
        ref = hub_file(url)
        if ref is None:
            continue
        if ref.workspace_id != workspace_id or w.read.file_info(workspace_id, ref.file_id) is None:
            raise InvalidArgument(
                f"{url} is not a file stored in this workspace; upload it first "
                "(POST /api/agent/artifacts) and use the url it answers.",
                details={"url": url},
            )


def _attachment_urls(attachments: list[Attachment] | None) -> list[str]:
    return [a.url for a in attachments or ()]


@dataclass(frozen=True, slots=True)
class Recorded:
    """The outcome of a command: its event (if any) and whether it was a resend."""

    result: AppendResult | None
    value: Any = None

    @property
    def sequence(self) -> int | None:
        return None if self.result is None else self.result.event.sequence

    @property
    def duplicate(self) -> bool:
        return self.result is not None and self.result.duplicate


def once(
    w: Writing,
    workspace_id: str,
    sender: str,
    event_id: str,
    command: Callable[[], Recorded],
    *,
    fingerprint: str | None = None,
) -> Recorded:
    """Run a sender's command once per event id: a resend is answered with the original.

    The id is ``sender``'s (an actor) in its workspace; ``fingerprint`` digests what was sent
    under it, so the same id with other content is a ``Conflict`` rather than a duplicate.

    In the writer's optimistic pass the common case, a new event, skips looking its id up:
    the command records its event under that id, or the id is looked up after all — when
    the command failed, or recorded nothing (an idempotent no-op). A resend whose command
    did record something fails its INSERT on the unique id, or is made to fail here, and the
    writer re-runs it isolated, where the lookup comes first.
    """
    w.answering(sender, event_id, fingerprint)
    if not w.optimistic:
        before = w.recorded_before(workspace_id, sender, event_id, fingerprint)
        return Recorded(before) if before is not None else command()
    try:
        done = command()
    except LineupError:
        before = w.recorded_before(workspace_id, sender, event_id, fingerprint)
        if before is not None:
            return Recorded(before)
        raise
    if any(event.id == event_id and event.actor == sender for event in w.appended):
        return done
    before = w.recorded_before(workspace_id, sender, event_id, fingerprint)
    if before is None:
        return done
    if w.appended:
        raise Conflict("a resent event recorded something; answer it from an isolated run")
    return Recorded(before)


# --- lookups that enforce the workspace boundary -------------------------------------------


def agent_in(w: Writing, workspace_id: str, agent_id: str) -> records.Agent:
    agent = w.read.get_agent(workspace_id, agent_id)
    if agent is None:
        raise NotFound(f"No agent {agent_id!r} in this workspace.", details={"agentId": agent_id})
    return agent


def live_agent_in(w: Writing, workspace_id: str, agent_id: str) -> records.Agent:
    """An agent that may be given work: neither revoked nor waiting for a person's
    confirmation of its pairing."""
    agent = agent_in(w, workspace_id, agent_id)
    if agent.status == "revoked":
        raise Conflict(f"Agent {agent.name!r} was revoked; pair it again to give it work.")
    if not agent.confirmed:
        raise unconfirmed(agent.id, agent.name)
    return agent


def unconfirmed(agent_id: str, name: str) -> Conflict:
    return Conflict(
        f"Agent {name!r} is waiting for a person to confirm it (Agents → {name} → Confirm); "
        "until then it gets no work.",
        details={"reason": "agent_unconfirmed", "agentId": agent_id},
    )


def conversation_in(read: Reader, workspace_id: str, conversation_id: str) -> records.Conversation:
    conversation = read.get_conversation(workspace_id, conversation_id)
    if conversation is None:
        raise NotFound(
            f"No conversation {conversation_id!r} in this workspace.",
            details={"conversationId": conversation_id},
        )
    return conversation


def task_in(read: Reader, workspace_id: str, task_id: str) -> records.Task:
    task = read.get_task(workspace_id, task_id)
    if task is None:
        raise NotFound(f"No task {task_id!r} in this workspace.", details={"taskId": task_id})
    return task


def agents_task(read: Reader, agent: AgentIdentity, task_id: str | None) -> records.Task:
    if not task_id:
        raise InvalidArgument("This event needs the envelope's taskId.")
    task = task_in(read, agent.workspace_id, task_id)
    if task.target_agent_id != agent.agent_id:
        raise Forbidden(f"Task {task_id!r} is not assigned to this agent.")
    return task


def agents_conversation(
    read: Reader, agent: AgentIdentity, task_id: str | None, conversation_id: str | None
) -> str | None:
    """Where an agent's event belongs: its task's conversation, else a conversation the agent
    is part of (or none). The task, when named, wins over a conversation the envelope names."""
    if task_id is not None:
        return agents_task(read, agent, task_id).conversation_id
    if conversation_id is None:
        return None
    conversation = conversation_in(read, agent.workspace_id, conversation_id)
    if agent.agent_id not in conversation.agent_ids:
        raise Forbidden("This agent is not part of that conversation.")
    return conversation_id


def project_to_start_in(
    read: Reader, person: Person, project_id: str, *, field: str = "projectId"
) -> governance_store.Project:
    """A project of this workspace the person may start work in: its owners and editors."""
    project = governance_store.get_project(read.connection, person.workspace_id, project_id)
    if project is None:
        raise NotFound(
            f"No project {project_id!r} in this workspace.",
            details={"field": field, "projectId": project_id},
        )
    role = governance_store.project_role(read.connection, project_id, person.user_id)
    if role not in ("owner", "editor"):
        raise Forbidden(
            f"Only the owners and editors of project {project.name!r} start work in it.",
            details={"field": field, "projectId": project_id},
        )
    return project


def hosted_agents_project(
    read: Reader, workspace_id: str, agent_ids: list[str], asked: str | None
) -> str | None:
    """The project of a new conversation with these agents: the one asked for, else that of a
    hosted agent among them — a hosted agent given a project works in that project's
    conversations only, so its work has the project's rules, approvers and audit."""
    homes = hosted_store.projects_of(read.connection, workspace_id, agent_ids)
    chosen = asked
    for agent_id in agent_ids:
        home = homes.get(agent_id)
        if home is None or home == chosen:
            continue
        if chosen is None:
            chosen = home
            continue
        raise InvalidArgument(
            f"{_agent_name(read, workspace_id, agent_id)} works in project "
            f"{_project_name(read, workspace_id, home)!r} only; start the conversation there.",
            details={
                "field": "projectId" if asked is not None else "agentIds",
                "agentId": agent_id,
                "projectId": home,
            },
        )
    return chosen


def check_hosted_project(
    read: Reader, workspace_id: str, agent_id: str, project_id: str | None, *, field: str
) -> None:
    """Work for a hosted agent given a project comes from that project's conversations."""
    home = hosted_store.projects_of(read.connection, workspace_id, [agent_id]).get(agent_id)
    if home is not None and home != project_id:
        raise InvalidArgument(
            f"{_agent_name(read, workspace_id, agent_id)} works in project "
            f"{_project_name(read, workspace_id, home)!r} only; talk to it in one of that "
            "project's conversations.",
            details={"field": field, "agentId": agent_id, "projectId": home},
        )


def _agent_name(read: Reader, workspace_id: str, agent_id: str) -> str:
    agent = read.get_agent(workspace_id, agent_id)
    return agent.name if agent is not None else agent_id


def _project_name(read: Reader, workspace_id: str, project_id: str) -> str:
    project = governance_store.get_project(read.connection, workspace_id, project_id)
    return project.name if project is not None else project_id


# --- people ------------------------------------------------------------------------------


def create_conversation(
    w: Writing,
    person: Person,
    title: str,
    agent_ids: list[str],
    *,
    event_id: str | None = None,
    project_id: str | None = None,
) -> Recorded:
    for agent_id in agent_ids:
        live_agent_in(w, person.workspace_id, agent_id)
    project_id = hosted_agents_project(w.read, person.workspace_id, agent_ids, project_id)
    if project_id is not None:
        project_to_start_in(w.read, person, project_id)
    conversation_id = (
        derived_id("conv", person.workspace_id, person.actor, event_id)
        if event_id
        else new_id("conv")
    )
    result = w.append(
        person.workspace_id,
        facts.ConversationCreatedPayload(
            conversation_id=conversation_id,
            title=title,
            agent_ids=list(agent_ids),
            project_id=project_id,
        ),
        actor=person.actor,
        event_id=event_id,
        conversation_id=conversation_id,
    )
    return Recorded(result, result.event.payload["conversationId"])


def post_message(
    w: Writing,
    person: Person,
    conversation_id: str,
    message: ev.MessageCreate,
    *,
    track_as_task: bool = False,
    event_id: str | None = None,
) -> Recorded:
    """A person's message; with ``track_as_task`` the task is created first (seed 001 §7.2)."""
    conversation = conversation_in(w.read, person.workspace_id, conversation_id)
    sight.check_acting(w.read, person, conversation_id)
    target = message.target_agent_id
    if target is not None:
        live_agent_in(w, person.workspace_id, target)
        check_hosted_project(
            w.read,
            person.workspace_id,
            target,
            conversation.project_id,
            field="targetAgentId",
        )
        if target not in conversation.agent_ids:
            # addressing an agent brings it into the conversation, so its replies belong here
            w.append(
                person.workspace_id,
                facts.ConversationAgentJoinedPayload(
                    conversation_id=conversation_id, agent_id=target
                ),
                actor=person.actor,
                event_id=f"{event_id}.join" if event_id else None,
                conversation_id=conversation_id,
            )
    elif track_as_task:
        if not conversation.agent_ids:
            raise InvalidArgument("Choose the agent that should work on this task.")
        target = conversation.agent_ids[0]
    task_id = None
    if track_as_task:
        assert target is not None
        title = message.content.strip().splitlines()[0][:200] if message.content.strip() else ""
        if not title:
            raise InvalidArgument("A tracked task needs some text to say what to do.")
        task = create_task(
            w,
            person,
            ev.TaskCreate(title=title, description=message.content, target_agent_id=target),
            conversation_id=conversation_id,
            event_id=f"{event_id}.task" if event_id else None,
        )
        task_id = task.value
    message_id = (
        derived_id("msg", person.workspace_id, person.actor, event_id)
        if event_id
        else new_id("msg")
    )
    fact = facts.MessageCreatedPayload(
        message_id=message_id,
        author=facts.MessageAuthor(kind="user", id=person.user_id, name=person.display_name),
        content=message.content,
        attachments=message.attachments or None,
        blocks=message.blocks or None,
        steer=True if message.steer else None,
        task_id=task_id,  # the task carries the text to the agent
        target_agent_id=target if task_id is None else None,
    )
    result = w.append(
        person.workspace_id,
        fact,
        actor=person.actor,
        event_id=event_id,
        conversation_id=conversation_id,
        task_id=task_id,
    )
    return Recorded(result, {"messageId": result.event.payload["messageId"], "taskId": task_id})


def create_task(
    w: Writing,
    person: Person,
    task: ev.TaskCreate,
    *,
    conversation_id: str | None = None,
    event_id: str | None = None,
) -> Recorded:
    agent = live_agent_in(w, person.workspace_id, task.target_agent_id)
    if conversation_id is None:
        created = create_conversation(
            w,
            person,
            task.title,
            [agent.id],
            event_id=f"{event_id}.conversation" if event_id else None,
        )
        conversation_id = created.value
    else:
        conversation = conversation_in(w.read, person.workspace_id, conversation_id)
        sight.check_acting(w.read, person, conversation_id)
        check_hosted_project(
            w.read,
            person.workspace_id,
            agent.id,
            conversation.project_id,
            field="targetAgentId",
        )
    task_id = (
        derived_id("task", person.workspace_id, person.actor, event_id)
        if event_id
        else new_id("task")
    )
    fact = facts.TaskCreatedPayload(
        task_id=task_id,
        title=task.title,
        target_agent_id=agent.id,
        created_by=person.actor,
        description=task.description or None,
    )
    result = w.append(
        person.workspace_id,
        fact,
        actor=person.actor,
        event_id=event_id,
        conversation_id=conversation_id,
        task_id=task_id,
    )
    return Recorded(result, result.event.payload["taskId"])


def request_cancel(
    w: Writing,
    person: Person,
    task_id: str,
    reason: str | None,
    *,
    timeout_ms: int,
    event_id: str | None = None,
) -> Recorded:
    """Raise the cancel flag; the task ends when its agent confirms, or ``timeout_ms`` later
    when it has not (principle 4; :func:`cancel_timed_out`)."""
    task = task_in(w.read, person.workspace_id, task_id)
    sight.check_acting(w.read, person, task.conversation_id)
    with domain_rules():
        _, changed = domain.request_cancel(task_state(task), reason)
        deadline = domain.cancel_deadline(w.now_ms, timeout_ms)
    if not changed:
        return Recorded(None, task_id)
    fact = facts.TaskCancelRequestedPayload(
        task_id=task_id,
        target_agent_id=task.target_agent_id,
        reason=reason or None,
        cancel_deadline=deadline,
    )
    result = w.append(
        person.workspace_id,
        fact,
        actor=person.actor,
        event_id=event_id,
        conversation_id=task.conversation_id,
        task_id=task_id,
    )
    withdraw_open_requests(w, task, actor=person.actor)
    return Recorded(result, task_id)


WITHDRAWN_REASON = "The task was cancelled."
"""Why a cancel withdrew a request: shown on the card and told to the agent."""


def withdraw_open_requests(w: Writing, task: records.Task, *, actor: str) -> int:
    """A cancel (requested or confirmed) withdraws every open request of the task and of its
    child tasks: an answer to work that is being stopped would reach nobody who can use it,
    and a card left open invites a person to approve something that will not happen.

    Records ``interaction.cancelled`` / ``tool.cancelled`` (ids derived from the request, so a
    second cancel records nothing twice); the agent gets both on its downlink. Returns how many.
    """
    ws = task.workspace_id
    withdrawn = 0
    for task_id in _task_and_descendants(w, task):
        for row in w.read.list_interactions(ws, statuses=["requested"], task_id=task_id):
            w.append(
                ws,
                facts.InteractionCancelledPayload(
                    interaction_id=row.id,
                    reason=WITHDRAWN_REASON,
                    task_id=task_id,
                    target_agent_id=row.agent_id,
                ),
                actor=actor,
                event_id=derived_id("evt", "withdrawn", ws, row.id),
                conversation_id=row.conversation_id,
                task_id=task_id,
            )
            withdrawn += 1
        for call in w.read.list_tool_calls(ws, statuses=["pending"], task_id=task_id):
            w.append(
                ws,
                facts.ToolCancelledPayload(
                    tool_call_id=call.id,
                    call_id=call.call_id,
                    reason=WITHDRAWN_REASON,
                    task_id=task_id,
                    target_agent_id=call.agent_id,
                ),
                actor=actor,
                event_id=derived_id("evt", "withdrawn", ws, call.id),
                conversation_id=call.conversation_id,
                task_id=task_id,
            )
            withdrawn += 1
    return withdrawn


def _task_and_descendants(w: Writing, task: records.Task) -> list[str]:
    found = [task.id]
    for task_id in found:  # grows while it is walked: breadth first
        found.extend(
            child.id
            for child in w.read.list_child_tasks(task.workspace_id, task_id)
            if child.id not in found
        )
    return found


def refuse_if_cancelling(task: records.Task) -> None:
    """A task being cancelled asks nobody anything new: its requests were just withdrawn."""
    if task.cancel_requested:
        raise Conflict(
            f"Task {task.id!r} is being cancelled; it cannot ask a person anything now.",
            details={"reason": "cancelled", "taskId": task.id},
        )


def withdrawn(row: records.Interaction) -> Conflict:
    """A late answer to a withdrawn request: say why it did not count."""
    if row.cancel_reason == WITHDRAWN_REASON:
        message = "This request was withdrawn because its task was cancelled"
    else:
        why = f" ({row.cancel_reason.rstrip('.')})" if row.cancel_reason else ""
        message = f"This request was withdrawn{why}"
    return Conflict(
        f"{message}; your answer was not recorded and did not reach the agent.",
        details={"reason": "cancelled", "interactionId": row.id, "taskId": row.task_id},
    )


@dataclass(frozen=True, slots=True)
class Expired:
    """An answer arrived after its request's expiry (an interaction's ``expiresAt``, a tool
    call's ``timeout_ms``): the expiry is recorded, the answer is not.

    A value, not an exception, so the expiry commits; the caller then raises ``refusal``,
    which tells the person why their answer did not count."""

    request_id: str
    refusal: Conflict


def respond(
    w: Writing,
    person: Person,
    interaction_id: str,
    response: InteractionResponse,
    *,
    event_id: str | None = None,
) -> Recorded:
    """A person answers a card: the first answer is recorded (``interaction.resolved``); what
    else an answer may meet — the same answer again, a conflict, an expiry, a withdrawal —
    is the pending-request lifecycle's to decide (``lineup.domain.pending``)."""
    row = w.read.get_interaction(person.workspace_id, interaction_id)
    if row is None:
        raise NotFound(
            f"No interaction {interaction_id!r} in this workspace.",
            details={"interactionId": interaction_id},
        )
    sight.check_acting(w.read, person, row.conversation_id, row.task_id)
    with domain_rules():
        decision = interactions.answer(
            interaction_state(row),
            response_to_domain(response),
            by=person.actor,
            now_ms=w.now_ms,
        )
    if isinstance(decision, pending.NoOp):
        return Recorded(None, row)
    if isinstance(decision, pending.Refused) and decision.reason == "cancelled":
        raise withdrawn(row)
    if isinstance(decision, pending.Refused) and decision.record_expiry:
        result = expire_interaction(w, row)
        refusal = Conflict(
            "This request expired before your answer arrived; it can no longer be answered.",
            details={"reason": "expired"},
        )
        return Recorded(result, Expired(interaction_id, refusal))
    if not isinstance(decision, pending.Record):
        raise lineup_error(interactions.refusal(decision))
    answer = decision.pending.answer
    assert answer is not None
    fact = facts.InteractionResolvedPayload(
        interaction_id=interaction_id,
        response=InteractionResponse.model_validate(response_to_wire(answer)),
        responded_by=person.actor,
        responded_by_name=person.display_name,
        responded_at=w.now_ms,
        target_agent_id=row.agent_id,
    )
    result = w.append(
        person.workspace_id,
        fact,
        actor=person.actor,
        event_id=event_id,
        conversation_id=row.conversation_id,
        task_id=row.task_id,
    )
    return Recorded(result, row)


def expire_if_due(w: Writing, workspace_id: str, interaction_id: str) -> bool:
    """The monitor's job for one overdue interaction; one that ended meanwhile is left be."""
    row = w.read.get_interaction(workspace_id, interaction_id)
    if row is None:
        return False
    decision = pending.expire(interaction_pending(row), w.now_ms)
    if not isinstance(decision, pending.Record):
        return False
    expire_interaction(w, row)
    return True


def expire_interaction(w: Writing, row: records.Interaction) -> AppendResult:
    return w.append(
        row.workspace_id,
        facts.InteractionExpiredPayload(
            interaction_id=row.id, expires_at=row.expires_at, target_agent_id=row.agent_id
        ),
        actor="system",
        event_id=derived_id("evt", "expired", row.id),
        conversation_id=row.conversation_id,
        task_id=row.task_id,
    )


# --- agents ------------------------------------------------------------------------------


def agent_connected(w: Writing, agent: AgentIdentity, hello: ev.AgentHello) -> Recorded:
    """Record the connection; the value is the agent's row as it stands after it (whether
    it is confirmed, its name and settings: what the welcome tells it)."""
    row = agent_in(w, agent.workspace_id, agent.agent_id)
    if row.status == "revoked":
        raise Conflict(f"Agent {row.name!r} was revoked; pair it again to give it work.")
    fact = facts.AgentConnectedPayload(
        agent_id=agent.agent_id,
        agent_version=hello.agent_version,
        runtime=hello.runtime,
        capabilities=list(hello.capabilities),
        tools=None if hello.tools is None else [tool.wire() for tool in hello.tools],
        settings_schema=hello.settings_schema,
    )
    result = w.append(agent.workspace_id, fact, actor=agent.actor)
    return Recorded(result, agent_in(w, agent.workspace_id, agent.agent_id))


def save_agent_settings(
    w: Writing,
    person: Person,
    agent_id: str,
    values: dict[str, Any],
    *,
    event_id: str | None = None,
) -> Recorded:
    """A person saves the agent's settings: checked against the schema the agent declared,
    recorded complete (defaults filled in), delivered to the agent. The same values again
    record nothing."""
    agent = agent_in(w, person.workspace_id, agent_id)
    if agent.status == "revoked":
        raise Conflict(
            f"Agent {agent.name!r} was revoked; its settings no longer matter.",
            details={"reason": "revoked"},
        )
    if not agent.settings_schema:
        raise Conflict(
            f"Agent {agent.name!r} declares no settings (its adapter sends a settingsSchema "
            "in agent.hello).",
            details={"reason": "no_settings"},
        )
    complete = agent_settings.checked_values(agent.settings_schema, values)
    if agent.settings == complete:
        return Recorded(None, complete)
    result = w.append(
        person.workspace_id,
        facts.AgentSettingsChangedPayload(
            agent_id=agent_id,
            values=complete,
            changed_by=person.actor,
            target_agent_id=agent_id,
        ),
        actor=person.actor,
        event_id=event_id,
    )
    return Recorded(result, complete)


def agent_went_offline(w: Writing, workspace_id: str, agent_id: str, last_beat_ms: int) -> Recorded:
    row = w.read.get_agent(workspace_id, agent_id)
    if row is None or row.status != "online":
        return Recorded(None)
    result = w.append(
        workspace_id,
        facts.AgentStatusChangedPayload(
            agent_id=agent_id, status="offline", last_heartbeat_at=last_beat_ms
        ),
        actor="system",
    )
    return Recorded(result)


def task_accepted(
    w: Writing,
    agent: AgentIdentity,
    event_id: str,
    task_id: str | None,
    accepted: ev.TaskAccepted,
) -> Recorded:
    """Like every task event it names its task in the envelope; the payload's must agree."""
    if task_id is not None and accepted.task_id != task_id:
        raise InvalidArgument(
            "The envelope's taskId and the payload's taskId differ.",
            details={"taskId": task_id, "payloadTaskId": accepted.task_id},
        )
    task = agents_task(w.read, agent, task_id)
    if task.status in domain.ACTIVE_STATUSES:
        return Recorded(None)  # accepted before; a restarted agent says it again
    if domain.is_terminal(task.status):
        raise task_ended(task)
    with domain_rules():
        domain.transition(task_state(task), domain.TaskStatus.RUNNING)
    result = w.append(
        agent.workspace_id,
        facts.TaskAcceptedPayload(task_id=task.id),
        actor=agent.actor,
        event_id=event_id,
        conversation_id=task.conversation_id,
        task_id=task.id,
    )
    return Recorded(result)


def task_status_changed(
    w: Writing,
    agent: AgentIdentity,
    event_id: str,
    task_id: str | None,
    change: ev.TaskStatusChanged,
) -> Recorded:
    task = agents_task(w.read, agent, task_id)
    if domain.is_terminal(task.status):
        raise task_ended(task)
    before = task_state(task)
    with domain_rules():
        after = domain.report(
            before,
            status=change.status.value,
            progress=change.progress,
            summary=change.summary,
            error=change.error,
        )
    if after == before:
        return Recorded(None)  # the same report again: it changed nothing, so nothing to record
    result = w.append(
        agent.workspace_id,
        facts.TaskStatusChangedPayload(
            task_id=task.id,  # the envelope's: a taskId in the payload is unknown, ignored
            status=change.status.value,
            progress=change.progress,
            summary=change.summary,
            error=change.error,
            **facts.TaskStatusChangedPayload.unknown_fields_of(change),
        ),
        actor=agent.actor,
        event_id=event_id,
        conversation_id=task.conversation_id,
        task_id=task.id,
    )
    if change.status is ev.TaskStatusName.CANCELLED:
        # The hub withdraws them, not the agent: its downlink must still tell it of each.
        withdraw_open_requests(w, task, actor="system")
    return Recorded(result)


def task_ended(task: records.Task) -> Conflict:
    """An agent's report on a task that has ended — by the agent earlier, or by the hub (a
    cancel it did not confirm in time): refused, not retried, and the agent is told why."""
    if task.end_cause == domain.CANCEL_TIMEOUT:
        why = "LineUp cancelled it because the agent did not confirm the cancel in time"
    else:
        why = f"it is already {task.status}"
    return Conflict(
        f"Task {task.id!r} has ended ({why}); this report was not recorded.",
        details={
            "reason": "task_ended",
            "taskId": task.id,
            "status": task.status,
            **({"cause": task.end_cause} if task.end_cause else {}),
        },
    )


def fail_unreachable(w: Writing, *, task: records.Task, last_beat_ms: int | None) -> Recorded:
    """The grace period ran out: the task fails with ``agent_unreachable`` (seed 001 §7.4)."""
    current = w.read.get_task(task.workspace_id, task.id)
    if current is None or current.status not in domain.ACTIVE_STATUSES:
        return Recorded(None)
    result = w.append(
        task.workspace_id,
        facts.TaskStatusChangedPayload(
            task_id=task.id,
            status="failed",
            error="agent_unreachable",
            summary="The agent did not come back within the grace period.",
            last_heartbeat_at=last_beat_ms or None,
        ),
        actor="system",
        event_id=derived_id("evt", "unreachable", task.id),
        conversation_id=task.conversation_id,
        task_id=task.id,
    )
    return Recorded(result)


def cancel_timed_out(w: Writing, *, task: records.Task) -> Recorded:
    """A requested cancel went unconfirmed past its deadline: the hub records the task
    cancelled with the cause, and tells the agent (which may be offline: it hears on resume)."""
    current = w.read.get_task(task.workspace_id, task.id)
    if current is None or not domain.cancel_overdue(
        task_state(current), current.cancel_deadline, w.now_ms
    ):
        return Recorded(None)
    result = w.append(
        task.workspace_id,
        facts.TaskStatusChangedPayload(
            task_id=task.id,
            status="cancelled",
            summary=CANCEL_TIMEOUT_SUMMARY,
            cause=domain.CANCEL_TIMEOUT,
            target_agent_id=current.target_agent_id,
        ),
        actor="system",
        event_id=derived_id("evt", domain.CANCEL_TIMEOUT, task.id),
        conversation_id=task.conversation_id,
        task_id=task.id,
    )
    return Recorded(result)


CANCEL_TIMEOUT_SUMMARY = (
    "The agent did not confirm the cancel in time, so LineUp marked the task cancelled."
)


def task_child_created(
    w: Writing, agent: AgentIdentity, event_id: str, child: ev.TaskChildCreated
) -> Recorded:
    parent = agents_task(w.read, agent, child.parent_task_id)
    if domain.is_terminal(parent.status):
        raise Conflict(f"Task {parent.id!r} is already {parent.status}; it takes no children.")
    child_id = child.child_task_id or derived_id("task", agent.agent_id, event_id)
    existing = w.read.get_task(agent.workspace_id, child_id)
    if existing is not None:
        raise Conflict(f"A task {child_id!r} already exists.", details={"taskId": child_id})
    result = w.append(
        agent.workspace_id,
        facts.TaskChildCreatedPayload(
            child_task_id=child_id,
            parent_task_id=parent.id,
            title=child.title,
            status=child.status.value,
            target_agent_id=agent.agent_id,
        ),
        actor=agent.actor,
        event_id=event_id,
        conversation_id=parent.conversation_id,
        task_id=child_id,
    )
    return Recorded(result, child_id)


def agent_task_created(
    w: Writing,
    agent: AgentIdentity,
    event_id: str,
    conversation_id: str | None,
    task: ev.AgentTaskCreate,
) -> Recorded:
    """A task the agent starts itself, assigned to itself: in a conversation it is part of,
    else in a new one titled like the task. It gets ``task.assigned`` like any other task."""
    task_id = task.task_id or derived_id("task", agent.workspace_id, agent.actor, event_id)
    if w.read.get_task(agent.workspace_id, task_id) is not None:
        raise Conflict(f"A task {task_id!r} already exists.", details={"taskId": task_id})
    if conversation_id is None:
        conversation_id = derived_id("conv", agent.workspace_id, agent.actor, event_id)
        w.append(
            agent.workspace_id,
            facts.ConversationCreatedPayload(
                conversation_id=conversation_id,
                title=task.title,
                agent_ids=[agent.agent_id],
                project_id=hosted_agents_project(
                    w.read, agent.workspace_id, [agent.agent_id], None
                ),
            ),
            actor=agent.actor,
            event_id=f"{event_id}.conversation",
            conversation_id=conversation_id,
        )
    else:
        agents_conversation(w.read, agent, None, conversation_id)
    result = w.append(
        agent.workspace_id,
        facts.TaskCreatedPayload(
            task_id=task_id,
            title=task.title,
            target_agent_id=agent.agent_id,
            created_by=agent.actor,
            description=task.description or None,
        ),
        actor=agent.actor,
        event_id=event_id,
        conversation_id=conversation_id,
        task_id=task_id,
    )
    return Recorded(result, task_id)


def interaction_requested(
    w: Writing,
    agent: AgentIdentity,
    event_id: str,
    task_id: str | None,
    conversation_id: str | None,
    requested: ev.InteractionRequested,
) -> Recorded:
    wire = with_default_options(requested.interaction)
    check_hub_files(w, agent.workspace_id, _attachment_urls(wire.attachments))
    with domain_rules():
        domain.validate_request(interaction_request(wire))
    existing = w.read.get_interaction(agent.workspace_id, wire.id)
    if existing is not None:
        raise Conflict(
            f"An interaction {wire.id!r} already exists; use a new id for a new question.",
            details={"interactionId": wire.id},
        )
    if task_id is not None:
        task = agents_task(w.read, agent, task_id)
        if task.status not in domain.ACTIVE_STATUSES:
            raise Conflict(
                f"Task {task.id!r} is {task.status}; only a running task can ask a person."
            )
        refuse_if_cancelling(task)
        conversation_id = task.conversation_id
    else:
        conversation_id = agents_conversation(w.read, agent, None, conversation_id)
    result = w.append(
        agent.workspace_id,
        facts.InteractionRequestedPayload.model_validate({"interaction": wire.wire()}),
        actor=agent.actor,
        event_id=event_id,
        conversation_id=conversation_id,
        task_id=task_id,
    )
    return Recorded(result, wire.id)


def interaction_withdrawn_by_agent(
    w: Writing, agent: AgentIdentity, event_id: str, cancel: ev.InteractionCancel
) -> Recorded:
    """The agent takes back its own open question; one already answered, expired or
    withdrawn is a ``conflict`` naming what became of it (the answer stands)."""
    row = w.read.get_interaction(agent.workspace_id, cancel.interaction_id)
    if row is None:
        raise NotFound(
            f"No interaction {cancel.interaction_id!r} in this workspace.",
            details={"interactionId": cancel.interaction_id},
        )
    if row.agent_id != agent.agent_id:
        raise Forbidden(f"Interaction {row.id!r} was not asked by this agent.")
    if row.status != "requested":
        raise Conflict(
            f"Interaction {row.id!r} is {row.status} already; it cannot be withdrawn.",
            details={"reason": row.status, "interactionId": row.id},
        )
    result = w.append(
        agent.workspace_id,
        facts.InteractionCancelledPayload(
            interaction_id=row.id,
            reason=cancel.reason or "The agent withdrew the question.",
            task_id=row.task_id,
            target_agent_id=row.agent_id,
        ),
        actor=agent.actor,
        event_id=event_id,
        conversation_id=row.conversation_id,
        task_id=row.task_id,
    )
    return Recorded(result, row.id)


def artifact_created(
    w: Writing,
    agent: AgentIdentity,
    event_id: str,
    task_id: str | None,
    conversation_id: str | None,
    artifact: ev.ArtifactCreated,
) -> Recorded:
    check_hub_files(w, agent.workspace_id, [artifact.url])
    conversation_id = agents_conversation(w.read, agent, task_id, conversation_id)
    artifact_id = artifact.artifact_id or derived_id("art", agent.agent_id, event_id)
    payload = {**artifact.wire(), "artifactId": artifact_id}
    payload.pop("taskId", None)  # an unknown field: the task is the envelope's, if any
    if task_id is not None:
        payload["taskId"] = task_id
    result = w.append(
        agent.workspace_id,
        facts.ArtifactCreatedPayload.model_validate(payload),
        actor=agent.actor,
        event_id=event_id,
        conversation_id=conversation_id,
        task_id=task_id,
    )
    return Recorded(result, artifact_id)


def agent_message(
    w: Writing,
    agent: AgentIdentity,
    event_id: str,
    task_id: str | None,
    conversation_id: str | None,
    message: ev.AgentMessageCreate,
) -> Recorded:
    conversation_id = agents_conversation(w.read, agent, task_id, conversation_id)
    if conversation_id is None:
        raise InvalidArgument("An agent's message needs a conversationId or a taskId.")
    check_hub_files(w, agent.workspace_id, _attachment_urls(message.attachments))
    message_id = message.message_id or derived_id("msg", agent.agent_id, event_id)
    if w.read.get_message(agent.workspace_id, message_id) is not None:
        raise Conflict(f"A message {message_id!r} already exists.")
    fact = facts.MessageCreatedPayload(
        message_id=message_id,
        author=facts.MessageAuthor(kind="agent", id=agent.agent_id, name=agent.name),
        content=message.content,
        blocks=message.blocks or None,
        attachments=message.attachments or None,
        task_id=task_id,
    )
    result = w.append(
        agent.workspace_id,
        fact,
        actor=agent.actor,
        event_id=event_id,
        conversation_id=conversation_id,
        task_id=task_id,
    )
    return Recorded(result, message_id)
