"""Which things a recorded fact is about: the subjects whose raw events a person can open.

Every card, task and message of the app can show the events behind it (seed 001 §4,
progressive disclosure). The hub indexes each event under the subjects named here when it
records it, so "the events of task X" is a lookup, not a scan of the log. Pure: a fact and its
envelope's ids in, subjects out.

A subject is ``(kind, id)``. An event is about:

* the task and the conversation its envelope names (``taskId``, ``conversationId``);
* the things its payload names by id: the message it creates, the interaction it asks,
  answers or closes, the tool call, the artifact, the agent, the approval, and the tasks a
  payload names (a child's creation is about the child and its parent).

Every fact type has a rule here, even one that names nothing (``workspace.created``); a test
fails when a fact type has none, so a new fact is never silently missing from every view.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Literal, TypeVar, get_args

from lineup.protocol import facts as f

SubjectKind = Literal[
    "conversation", "message", "task", "interaction", "tool_call", "artifact", "agent", "approval"
]
"""What a person can open the events of."""

SUBJECT_KINDS: frozenset[str] = frozenset(get_args(SubjectKind))

Subject = tuple[str, str]
"""``(kind, id)``: a kind of :data:`SubjectKind` and the thing's id."""

Rule = Callable[[f.Fact], Iterable[tuple[str, str | None]]]
F = TypeVar("F", bound=f.Fact)


def _none(_: f.Fact) -> Iterable[tuple[str, str | None]]:
    return ()


def _rule(
    model: type[F], rule: Callable[[F], Iterable[tuple[str, str | None]]]
) -> tuple[type[f.Fact], Rule]:
    return model, rule  # type: ignore[return-value]  # RULES looks the rule up by its model


def _agent(fact: f.Fact) -> Iterable[tuple[str, str | None]]:
    return (("agent", getattr(fact, "agent_id", None)),)


def _message(fact: f.MessageCreatedPayload) -> Iterable[tuple[str, str | None]]:
    return (
        ("message", fact.message_id),
        ("task", fact.task_id),
        ("conversation", fact.conversation_id),
    )


def _task_id(fact: f.Fact) -> Iterable[tuple[str, str | None]]:
    return (("task", getattr(fact, "task_id", None)),)


def _child(fact: f.TaskChildCreatedPayload) -> Iterable[tuple[str, str | None]]:
    return (("task", fact.child_task_id), ("task", fact.parent_task_id))


def _interaction(fact: f.Fact) -> Iterable[tuple[str, str | None]]:
    if isinstance(fact, f.InteractionRequestedPayload):
        return (("interaction", fact.interaction.id),)
    return (
        ("interaction", getattr(fact, "interaction_id", None)),
        ("task", getattr(fact, "task_id", None)),
    )


def _tool_call(fact: f.Fact) -> Iterable[tuple[str, str | None]]:
    return (
        ("tool_call", getattr(fact, "tool_call_id", None)),
        ("task", getattr(fact, "task_id", None)),
    )


def _tool_called(fact: f.ToolCalledPayload) -> Iterable[tuple[str, str | None]]:
    return (("tool_call", fact.tool_call_id), ("agent", fact.agent_id))


def _artifact(fact: f.ArtifactCreatedPayload) -> Iterable[tuple[str, str | None]]:
    return (("artifact", fact.artifact_id), ("task", fact.task_id))


def _approval(fact: f.Fact) -> Iterable[tuple[str, str | None]]:
    return (("approval", getattr(fact, "approval_id", None)),)


def _approval_requested(fact: f.ApprovalRequestedPayload) -> Iterable[tuple[str, str | None]]:
    return (("approval", fact.approval_id), ("agent", fact.agent_id))


RULES: Mapping[type[f.Fact], Rule] = dict(
    [
        _rule(f.WorkspaceCreatedPayload, _none),
        _rule(f.MemberJoinedPayload, _none),
        _rule(f.AgentPairedPayload, _agent),
        _rule(f.AgentConnectedPayload, _agent),
        _rule(f.AgentStatusChangedPayload, _agent),
        _rule(f.AgentRenamedPayload, _agent),
        _rule(f.AgentRevokedPayload, _agent),
        _rule(f.AgentConfirmedPayload, _agent),
        _rule(f.AgentRejectedPayload, _agent),
        _rule(f.AgentSettingsChangedPayload, _agent),
        _rule(f.ConversationCreatedPayload, lambda c: (("conversation", c.conversation_id),)),
        _rule(
            f.ConversationAgentJoinedPayload,
            lambda c: (("conversation", c.conversation_id), ("agent", c.agent_id)),
        ),
        _rule(f.MessageCreatedPayload, _message),
        _rule(f.TaskCreatedPayload, _task_id),
        _rule(f.TaskAcceptedPayload, _task_id),
        _rule(f.TaskStatusChangedPayload, _task_id),
        _rule(f.TaskChildCreatedPayload, _child),
        _rule(f.TaskCancelRequestedPayload, _task_id),
        _rule(f.InteractionRequestedPayload, _interaction),
        _rule(f.InteractionResolvedPayload, _interaction),
        _rule(f.InteractionExpiredPayload, _interaction),
        _rule(f.InteractionCancelledPayload, _interaction),
        _rule(f.ArtifactCreatedPayload, _artifact),
        _rule(f.ToolRegisteredPayload, _none),
        _rule(f.ToolCalledPayload, _tool_called),
        _rule(f.ToolCompletedPayload, _tool_call),
        _rule(f.ToolCancelledPayload, _tool_call),
        # transcript entries: about their task and conversation (the envelope's), nothing else
        _rule(f.ActivityStartedPayload, _none),
        _rule(f.ActivityOutputPayload, _none),
        _rule(f.ActivityFinishedPayload, _none),
        _rule(f.ActivityUsagePayload, _none),
        # an imported session: about its conversation (the envelope's) and the message shown
        _rule(f.SessionImportedPayload, _none),
        _rule(
            f.SessionEntriesImportedPayload,
            lambda e: (("message", e.message.message_id if e.message else None),),
        ),
        # governance: its own views show these; a card of it names its approval
        _rule(f.ProjectCreatedPayload, _none),
        _rule(f.ProjectUpdatedPayload, _none),
        _rule(f.ProjectMemberSetPayload, _none),
        _rule(f.ProjectMemberRemovedPayload, _none),
        _rule(f.CapabilityStateChangedPayload, _none),
        _rule(f.PolicyRuleSetPayload, _none),
        _rule(f.PolicyRuleRemovedPayload, _none),
        _rule(f.CapabilityInvokedPayload, _agent),
        _rule(f.ApprovalRequestedPayload, _approval_requested),
        _rule(f.ApprovalHandedOverPayload, _approval),
        _rule(f.ApprovalDecidedPayload, _approval),
        _rule(f.PermissionGrantedPayload, _approval),
        _rule(f.PermissionRevokedPayload, _none),
        _rule(f.GrantIssuedPayload, _approval),
        _rule(f.ExecutionStartedPayload, _none),
        _rule(f.ExecutionAttemptedPayload, _none),
        _rule(f.ExecutionAcceptedPayload, _none),
        _rule(f.ExecutionFinishedPayload, _none),
        _rule(f.ProviderChangeRequestedPayload, _none),
        _rule(f.ProviderChangeDecidedPayload, _none),
        _rule(f.ProviderStateChangedPayload, _none),
        # a person's own accounts: never shown to anyone else, so indexed under nothing
        _rule(f.BindingBoundPayload, _none),
        _rule(f.BindingExpiredPayload, _none),
        _rule(f.BindingRemovedPayload, _none),
    ]
)
"""Each fact model → the subjects its payload names (a ``None`` id names nothing)."""


def subjects_of(
    fact: f.Fact, *, task_id: str | None = None, conversation_id: str | None = None
) -> frozenset[Subject]:
    """The subjects of an event: its payload's (by :data:`RULES`) and its envelope's task
    and conversation. ``KeyError`` for a fact model with no rule."""
    named = [*RULES[type(fact)](fact), ("task", task_id), ("conversation", conversation_id)]
    return frozenset((kind, ident) for kind, ident in named if ident)


def parse_subject(text: str) -> Subject:
    """``kind:id`` as a subject; ``ValueError`` with a sentence for a person otherwise."""
    kind, sep, ident = text.partition(":")
    if not sep or not ident:
        raise ValueError(f"A subject is kind:id (for example task:01J…), not {text!r}.")
    if kind not in SUBJECT_KINDS:
        kinds = ", ".join(sorted(SUBJECT_KINDS))
        raise ValueError(f"Unknown subject kind {kind!r}; the kinds are {kinds}.")
    if len(ident) > 128:
        raise ValueError("A subject's id is at most 128 characters.")
    return kind, ident


__all__ = ["RULES", "SUBJECT_KINDS", "Subject", "SubjectKind", "parse_subject", "subjects_of"]
