"""A conversation's recorded facts as session file entries: what an export writes.

The hub reads the facts of one conversation from its log, in order, and feeds them here; out
come entries in one chain (a conversation made in the hub never branches), each following
the one before, the first following ``after`` (the last entry of an imported session, when
the conversation began as one). Which fact makes which entry:

=========================  ===================================================================
fact                       entry
=========================  ===================================================================
``message.created``        ``message`` (``user``, ``assistant`` for an agent, ``system``)
``activity.started``       ``tool_call`` / ``command`` / ``file_change`` / ``reasoning``
``activity.output``        nothing: a command's output goes in its ``tool_result``
``activity.finished``      ``tool_result`` (summary and digest of the result or the output)
``activity.usage``         ``usage``
``interaction.requested``  ``interaction``; ``.resolved``/``.expired``/``.cancelled`` → ``answer``
``tool.called``            ``tool_call`` (an app tool); ``.completed``/``.cancelled`` →
                           ``tool_result``
``capability.invoked``     ``tool_call`` with ``capabilityId`` and the governed digest
``approval.requested``     ``approval_request``; ``approval.decided`` → ``approval``
``execution.accepted``     ``tool_result`` ``accepted`` (with ``jobId``);
                           ``execution.finished`` → ``tool_result``
``artifact.created``       ``file``
=========================  ===================================================================

Every other fact makes nothing. Entry ids are made from the ids of what they record
(``m:<messageId>``, ``a:<activityId>``, ``a:<activityId>:end``, …), so an export names the
same entries every time; should two ever meet, the later one is numbered (``~2``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from lineup.protocol import facts as f
from lineup.protocol.session_file import lines as ln
from lineup.protocol.session_file.codec import ENTRY
from lineup.protocol.session_file.scrub import (
    SUMMARY_CHARS,
    Digester,
    fit,
    scrub,
    summarise,
    summarise_value,
    text_digest,
    value_digest,
)

ROLES: Mapping[str, str] = {"user": "user", "agent": "assistant", "system": "system"}
"""A message author's kind → its role in the file."""


@dataclass(frozen=True, slots=True)
class Happened:
    """One recorded event of the conversation: its fact and where it stands."""

    fact: f.Fact
    event_id: str
    recorded_at: int
    """The hub's time (ms): the entry's ``timestamp``."""
    task_id: str | None = None


def tail(text: str, limit: int = SUMMARY_CHARS) -> str:
    """The end of ``text`` (``…`` marks the cut), cleaned: a command's last lines say most."""
    if len(text) > limit:
        text = "…" + text[-(limit - 1) :]
    return fit(text, limit)


class HistoryWriter:
    """Turns a conversation's facts, fed in log order, into entries (:attr:`entries`)."""

    def __init__(
        self,
        digest: Digester,
        *,
        after: str | None = None,
        taken: Iterable[str] = (),
        files: Mapping[str, ln.FileRef] | None = None,
        names: Mapping[str, str] | None = None,
    ) -> None:
        """``after``: the entry the first one follows; ``taken``: ids already in the file;
        ``files``: what the hub knows of the files it stores, by address (size, SHA-256);
        ``names``: people's and agents' names by id, for authors that carry none."""
        self.digest = digest
        self.last = after
        self.taken = set(taken)
        self.files = files or {}
        self.names = names or {}
        self.entries: list[ln.Entry] = []
        self._output: dict[str, dict[int, str]] = {}
        self._made: dict[str, str] = {}
        """What was recorded (``a:<activityId>``, ``c:<invocationId>`` …) → its entry."""

    # --- the feed -------------------------------------------------------------------------

    def add(self, happened: Happened) -> None:
        fact = happened.fact
        match fact:
            case f.MessageCreatedPayload():
                self._message(happened, fact)
            case f.ActivityStartedPayload():
                self._activity(happened, fact)
            case f.ActivityOutputPayload():
                pieces = self._output.setdefault(fact.activity_id, {})
                pieces.setdefault(fact.offset, fact.chunk)
            case f.ActivityFinishedPayload():
                self._finished(happened, fact)
            case f.ActivityUsagePayload():
                self._emit(
                    happened,
                    f"u:{happened.event_id}",
                    type="usage",
                    inputTokens=fact.input_tokens,
                    outputTokens=fact.output_tokens,
                    cachedInputTokens=fact.cached_input_tokens,
                    reasoningTokens=fact.reasoning_tokens,
                    contextWindow=fact.context_window,
                    model=_fitted(fact.model, ln.MAX_NAME),
                )
            case f.InteractionRequestedPayload():
                self._interaction(happened, fact)
            case f.InteractionResolvedPayload():
                response = fact.response
                ids = response.option_ids or ([response.option_id] if response.option_id else None)
                self._answer(
                    happened,
                    fact.interaction_id,
                    "resolved",
                    optionIds=ids,
                    text=_fitted(response.text, ln.MAX_DETAIL),
                    by=_fitted(fact.responded_by_name or fact.responded_by, ln.MAX_NAME),
                )
            case f.InteractionExpiredPayload():
                self._answer(happened, fact.interaction_id, "expired")
            case f.InteractionCancelledPayload():
                self._answer(
                    happened,
                    fact.interaction_id,
                    "cancelled",
                    text=_fitted(fact.reason, ln.MAX_DETAIL),
                )
            case f.ToolCalledPayload():
                self._emit(
                    happened,
                    f"t:{fact.tool_call_id}",
                    type="tool_call",
                    name=fact.name,
                    argsDigest=value_digest(self.digest, fact.arguments or {}),
                    action=fact.action,
                    sourceId=fact.tool_call_id,
                )
            case f.ToolCompletedPayload():
                self._tool_completed(happened, fact)
            case f.ToolCancelledPayload():
                self._emit(
                    happened,
                    f"t:{fact.tool_call_id}:end",
                    type="tool_result",
                    callId=self._made.get(f"t:{fact.tool_call_id}"),
                    status="cancelled",
                    error=_fitted(fact.reason, ln.MAX_DETAIL),
                    sourceId=fact.tool_call_id,
                )
            case f.CapabilityInvokedPayload():
                self._emit(
                    happened,
                    f"c:{fact.invocation_id}",
                    type="tool_call",
                    name=fact.capability,
                    capabilityId=fact.capability,
                    argsDigest=fact.params_digest,
                    sourceId=fact.invocation_id,
                )
            case f.ApprovalRequestedPayload():
                self._emit(
                    happened,
                    f"p:{fact.approval_id}",
                    type="approval_request",
                    approvalId=fact.approval_id,
                    callId=self._made.get(f"c:{fact.invocation_id}"),
                    capabilityId=fact.capability,
                    argsDigest=fact.params_digest,
                    summary=fit(fact.summary, ln.MAX_DETAIL),
                    impact=fit(fact.impact, ln.MAX_DETAIL),
                    resourceVersion=fact.resource_version,
                    expiresAt=fact.expires_at,
                )
            case f.ApprovalDecidedPayload():
                self._emit(
                    happened,
                    f"p:{fact.approval_id}:end",
                    type="approval",
                    approvalId=fact.approval_id,
                    requestId=self._made.get(f"p:{fact.approval_id}"),
                    decision=fact.decision,
                    by=_fitted(fact.by_name or fact.by, ln.MAX_NAME),
                    reason=_fitted(fact.reason, ln.MAX_DETAIL),
                )
            case f.ExecutionAcceptedPayload():
                self._emit(
                    happened,
                    f"x:{fact.execution_id}:accepted",
                    type="tool_result",
                    callId=self._made.get(f"c:{fact.invocation_id}"),
                    status="accepted",
                    executionId=fact.execution_id,
                    jobId=fact.job_id,
                )
            case f.ExecutionFinishedPayload():
                self._execution_finished(happened, fact)
            case f.ArtifactCreatedPayload():
                ref = self._ref(fact.url, fact.name, fact.mime_type)
                self._emit(
                    happened,
                    f"f:{fact.artifact_id}",
                    type="file",
                    **(ref or {}),
                    summary=_fitted(fact.summary, ln.MAX_DETAIL),
                    taskId=fact.task_id or happened.task_id,
                    sourceId=fact.artifact_id,
                )
            case _:
                pass

    # --- one kind at a time -------------------------------------------------------------

    def _message(self, happened: Happened, fact: f.MessageCreatedPayload) -> None:
        content: list[dict[str, Any]] = []
        if fact.content:
            content.append({"type": "text", "text": fit(fact.content, ln.MAX_TEXT)})
        for block in fact.blocks or ():
            rich: dict[str, Any] = {"type": "rich", "kind": block.type}
            if block.text is not None:
                rich["text"] = block.text
            if block.data is not None:
                rich["data"] = block.data
            content.append(rich)
        for attachment in fact.attachments or ():
            ref = self._ref(attachment.url, attachment.name, attachment.mime_type)
            content.append({"type": "file", **(ref or {})})
        author = fact.author
        name = author.name or (self.names.get(author.id) if author.id else None)
        self._emit(
            happened,
            f"m:{fact.message_id}",
            type="message",
            role=ROLES[author.kind],
            author=_some(kind=author.kind, id=author.id, name=_fitted(name, ln.MAX_NAME)),
            content=content,
            taskId=fact.task_id or happened.task_id,
            targetAgentId=fact.target_agent_id,
            steer=True if fact.steer else None,
        )

    def _activity(self, happened: Happened, fact: f.ActivityStartedPayload) -> None:
        key = f"a:{fact.activity_id}"
        title = _fitted(fact.title, ln.MAX_NAME)
        if fact.kind == "command" and fact.command:
            self._emit(
                happened,
                key,
                type="command",
                command=fit(fact.command, ln.MAX_COMMAND),
                cwd=fact.cwd,
                title=title,
                sourceId=fact.activity_id,
            )
        elif fact.kind == "file_change" and fact.path:
            self._emit(
                happened,
                key,
                type="file_change",
                path=fact.path,
                change=fact.change,
                summary=None if fact.diff is None else summarise(fact.diff),
                digest=None if fact.diff is None else text_digest(fact.diff),
                ref=self._ref(fact.diff_url, None, "text/x-diff"),
                title=title,
                sourceId=fact.activity_id,
            )
        elif fact.kind == "reasoning":
            self._emit(
                happened,
                key,
                type="reasoning",
                text=fit(fact.text or "", ln.MAX_TEXT),
                sourceId=fact.activity_id,
            )
        else:
            self._emit(
                happened,
                key,
                type="tool_call",
                name=fact.name or fact.kind,
                argsDigest=value_digest(
                    self.digest, fact.arguments if fact.arguments is not None else {}
                ),
                title=title,
                sourceId=fact.activity_id,
            )

    def _finished(self, happened: Happened, fact: f.ActivityFinishedPayload) -> None:
        pieces = self._output.pop(fact.activity_id, {})
        output = "".join(pieces[offset] for offset in sorted(pieces))
        summary = digest = None
        if fact.result is not None:
            summary = summarise_value(fact.result)
            digest = value_digest(self.digest, fact.result)
        elif output:
            summary = tail(output)
            digest = text_digest(output)
        url = fact.result_url or fact.output_url
        self._emit(
            happened,
            f"a:{fact.activity_id}:end",
            type="tool_result",
            callId=self._made.get(f"a:{fact.activity_id}"),
            status=fact.status if fact.status in ("succeeded", "failed", "cancelled") else "failed",
            summary=summary,
            digest=digest,
            ref=self._ref(url, None, None),
            error=_fitted(fact.error, ln.MAX_DETAIL),
            exitCode=fact.exit_code,
            outputChars=fact.output_chars,
            durationMs=fact.duration_ms,
            sourceId=fact.activity_id,
        )

    def _interaction(self, happened: Happened, fact: f.InteractionRequestedPayload) -> None:
        card = fact.interaction
        about = card.description or card.content or card.why
        options = [{"id": o.id, "label": fit(o.label, ln.MAX_NAME)} for o in card.options or ()]
        self._emit(
            happened,
            f"i:{card.id}",
            type="interaction",
            interactionId=card.id,
            kind=card.type.value,
            title=fit(card.title, ln.MAX_NAME),
            summary=None if about is None else summarise(about),
            options=options or None,
            taskId=happened.task_id,
        )

    def _answer(self, happened: Happened, interaction_id: str, status: str, **more: Any) -> None:
        self._emit(
            happened,
            f"i:{interaction_id}:end",
            type="answer",
            requestId=self._made.get(f"i:{interaction_id}"),
            status=status,
            **more,
        )

    def _tool_completed(self, happened: Happened, fact: f.ToolCompletedPayload) -> None:
        status = "expired" if fact.expired else "failed" if fact.error is not None else "succeeded"
        error = None
        if fact.error is not None:
            error = _fitted(str(fact.error.get("message") or fact.error.get("code")), ln.MAX_DETAIL)
        self._emit(
            happened,
            f"t:{fact.tool_call_id}:end",
            type="tool_result",
            callId=self._made.get(f"t:{fact.tool_call_id}"),
            status=status,
            summary=None if fact.result is None else summarise_value(fact.result),
            digest=None if fact.result is None else value_digest(self.digest, fact.result),
            error=error,
            sourceId=fact.tool_call_id,
        )

    def _execution_finished(self, happened: Happened, fact: f.ExecutionFinishedPayload) -> None:
        error = None
        if fact.error is not None:
            error = _fitted(str(fact.error.get("message") or fact.error.get("code")), ln.MAX_DETAIL)
        self._emit(
            happened,
            f"x:{fact.execution_id}:end",
            type="tool_result",
            callId=self._made.get(f"c:{fact.invocation_id}"),
            status=fact.status,
            executionId=fact.execution_id,
            summary=None if fact.output is None else summarise_value(fact.output),
            digest=None if fact.output is None else value_digest(self.digest, fact.output),
            error=error,
        )

    # --- the making of an entry ---------------------------------------------------------

    def _ref(
        self, url: str | None, name: str | None, mime_type: str | None
    ) -> dict[str, Any] | None:
        if url is None:
            return None
        known = self.files.get(url)
        if known is not None:
            return known.model_dump(mode="json", by_alias=True, exclude_none=True)
        return _some(name=_fitted(name, ln.MAX_NAME), mimeType=mime_type, url=url)

    def _emit(self, happened: Happened, key: str, **fields: Any) -> None:
        ident = key
        count = 1
        while ident in self.taken:
            count += 1
            ident = f"{key}~{count}"
        entry = scrub(
            ENTRY.validate_python(
                {
                    "type": fields.pop("type"),
                    "id": ident,
                    "parentId": self.last,
                    "timestamp": happened.recorded_at,
                    **_some(**fields),
                }
            )
        )
        self.taken.add(ident)
        self._made.setdefault(key, ident)
        self.last = ident
        self.entries.append(entry)


def _fitted(text: str | None, limit: int) -> str | None:
    return None if not text else fit(text, limit)


def _some(**fields: Any) -> dict[str, Any]:
    return {k: v for k, v in fields.items() if v is not None}


__all__ = ["ROLES", "Happened", "HistoryWriter", "tail"]
