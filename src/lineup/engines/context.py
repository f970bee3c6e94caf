"""What a (re)started engine session is given: built by LineUp from its own record, under a
token budget (seed 003 §1.3, §1.5).

The platform owns the conversation; an engine only gets context. When a session starts — the
first message of a conversation, or again after its process crashed, was reaped or the hub
restarted — LineUp reads what it recorded of the conversation (the people's messages, the
agent's replies, the transcript of what it did) and builds the engine's context:

* the **recent turns**, newest first, as many as fit the budget, each given whole — except
  what the agent did in them (a tool call's result, a command's output, a diff), which goes
  in as a one-line summary and a reference to where the whole is (a hub file, an entry of
  the transcript), never whole;
* a **rolling summary** of the older turns: one line each, newest first, within its share of
  the budget; turns older still are counted, not shown;
* the **pinned references** — the task being worked on, files people attached, artifacts —
  kept whatever their age.

The result is a :class:`ContextSnapshot`: the :class:`~lineup.engines.runtime.Turn` values
and instructions a :class:`~lineup.engines.runtime.SessionSpec` carries, and a JSON form that
is kept (as a hub file, named by a ``context`` transcript entry) so any answer can be traced
to the inputs the model saw. Pure: a record and a token estimator in, a snapshot out.

The record is read from the log (:func:`exchanges_from`): a hosted turn begins with a
``context`` entry naming what it answers (``replyTo``), so the replies and transcript
entries up to the next one belong to that turn, even when a person's message was queued
while an earlier turn still ran.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from lineup.engines.runtime import Turn

Estimator = Callable[[str], int]
"""Tokens a text costs the model, as well as the host can tell."""

SNAPSHOT_VERSION = 1
SUMMARY_LINE = 240
"""Characters of a turn's line in the rolling summary."""
OUTCOME_CHARS = 200
"""Characters of an action's result or output quoted in its summary."""
STEERED = "[sent while the agent worked] "


def approximate_tokens(text: str) -> int:
    """About four characters a token: what most tokenizers average on English and code."""
    return math.ceil(len(text) / 4)


# --- the record -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RecordedEvent:
    """One recorded fact of the conversation, as the hub keeps it."""

    sequence: int
    type: str
    actor: str
    payload: Mapping[str, Any]
    task_id: str | None = None


@dataclass(frozen=True, slots=True)
class Action:
    """Something the agent did in a turn, as its transcript recorded it."""

    kind: str
    label: str
    outcome: str | None = None
    ref: str | None = None
    """Where the whole of it is: a hub file's address, or ``activity:<id>``."""

    def summary(self) -> str:
        parts = [self.label]
        if self.outcome:
            parts.append(f"→ {self.outcome}")
        if self.ref:
            parts.append(f"(whole: {self.ref})")
        return " ".join(parts)


@dataclass(frozen=True, slots=True)
class Exchange:
    """One turn as LineUp recorded it: what it answered, the reply, what the agent did."""

    ref: str
    """The person's message (or the task) the turn answered."""
    user: str
    reply: str = ""
    actions: tuple[Action, ...] = ()


@dataclass(frozen=True, slots=True)
class Reference:
    """Something pinned into every context, whatever its age."""

    name: str
    url: str | None = None
    note: str | None = None

    def line(self) -> str:
        text = self.name + (f" — {self.url}" if self.url else "")
        return text + (f" ({self.note})" if self.note else "")


@dataclass(frozen=True, slots=True)
class Budget:
    tokens: int = 24_000
    """What the whole context may cost: instructions, references, summary and turns."""
    summary_share: float = 0.25
    """The most of it the rolling summary of older turns may take."""


@dataclass(frozen=True, slots=True)
class ContextSnapshot:
    """What a session is started with, and how it was chosen."""

    turns: tuple[Turn, ...]
    instructions: str | None
    summary: str | None
    pinned: tuple[Reference, ...]
    recent: tuple[str, ...]
    """The turns given whole (their refs), oldest first."""
    summarized: tuple[str, ...]
    """The older turns given as a line of the summary."""
    omitted: tuple[str, ...]
    """The oldest turns, left out for the budget."""
    tokens: int
    budget: int

    def line(self) -> str:
        """One sentence for the transcript: what the engine was given."""
        parts = [_count(len(self.recent), "recent turn")]
        if self.summarized:
            parts.append(f"a summary of {_count(len(self.summarized), 'older turn')}")
        if self.omitted:
            parts.append(f"{_count(len(self.omitted), 'older turn')} left out")
        if self.pinned:
            parts.append(_count(len(self.pinned), "pinned reference"))
        return (
            "The engine started with " + ", ".join(parts) + f": about {self.tokens:,} of "
            f"{self.budget:,} tokens."
        )

    def to_json(self) -> dict[str, Any]:
        """The snapshot as it is kept: everything the engine was given, and what was left."""
        return {
            "version": SNAPSHOT_VERSION,
            "budget": self.budget,
            "tokens": self.tokens,
            "instructions": self.instructions,
            "turns": [{"user": t.user, "assistant": t.assistant} for t in self.turns],
            "recent": list(self.recent),
            "summarized": list(self.summarized),
            "omitted": list(self.omitted),
            "pinned": [{"name": r.name, "url": r.url, "note": r.note} for r in self.pinned],
        }

    def to_text(self) -> str:
        return json.dumps(self.to_json(), ensure_ascii=False, indent=1)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


# --- building -------------------------------------------------------------------------------


def render_turn(exchange: Exchange) -> Turn:
    """A turn as the engine is given it: the reply whole, what was done as summaries."""
    assistant = exchange.reply.strip()
    if exchange.actions:
        done = "; ".join(a.summary() for a in exchange.actions)
        assistant = (assistant + "\n" if assistant else "") + f"[what I did: {done}]"
    return Turn(user=exchange.user, assistant=assistant)


def summary_line(exchange: Exchange) -> str:
    said = _one_line(exchange.user, SUMMARY_LINE // 2)
    replied = _one_line(exchange.reply, SUMMARY_LINE // 2) or "(no reply)"
    line = f"- {exchange.ref}: person: {said} → agent: {replied}"
    if exchange.actions:
        line += " [" + "; ".join(_one_line(a.label, 60) for a in exchange.actions[:4]) + "]"
    return line


def build_context(
    exchanges: Sequence[Exchange],
    *,
    estimate: Estimator,
    budget: Budget,
    instructions: str | None = None,
    pinned: Sequence[Reference] = (),
) -> ContextSnapshot:
    """The context for a session that continues ``exchanges`` (oldest first), within
    ``budget`` as ``estimate`` counts it.

    The base ``instructions`` and the pinned references always go in; then the newest turns,
    each whole or not at all (the newest one even when it alone is over budget: it is what
    the person is talking about); then, newest first, a line for each older turn while the
    summary keeps within its share; the oldest are left out and counted."""
    fixed = _instructions(instructions, pinned, None)
    used = estimate(fixed) if fixed else 0
    summary_room = int(budget.tokens * budget.summary_share)
    turn_room = budget.tokens - used - summary_room
    recent: list[tuple[Exchange, Turn]] = []
    older = list(exchanges)
    while older:
        turn = render_turn(older[-1])
        cost = estimate(turn.user) + estimate(turn.assistant)
        if recent and cost > turn_room:
            break
        recent.insert(0, (older.pop(), turn))
        turn_room -= cost
        used += cost
    room = summary_room + max(turn_room, 0)
    lines: list[str] = []
    summarized: list[Exchange] = []
    while older:
        line = summary_line(older[-1])
        cost = estimate(line + "\n")
        if cost > room:
            break
        lines.insert(0, line)
        summarized.insert(0, older.pop())
        room -= cost
    summary = None
    if lines:
        header = "Earlier in this conversation (summarized, oldest first"
        header += f"; {len(older)} older turns are left out):" if older else "):"
        summary = "\n".join([header, *lines])
    text = _instructions(instructions, pinned, summary)
    return ContextSnapshot(
        turns=tuple(t for _, t in recent),
        instructions=text,
        summary=summary,
        pinned=tuple(pinned),
        recent=tuple(e.ref for e, _ in recent),
        summarized=tuple(e.ref for e in summarized),
        omitted=tuple(e.ref for e in older),
        tokens=(estimate(text) if text else 0)
        + sum(estimate(t.user) + estimate(t.assistant) for _, t in recent),
        budget=budget.tokens,
    )


def _instructions(base: str | None, pinned: Sequence[Reference], summary: str | None) -> str | None:
    parts = [base] if base else []
    if pinned:
        parts.append("Pinned references:\n" + "\n".join(f"- {r.line()}" for r in pinned))
    if summary:
        parts.append(summary)
    return "\n\n".join(parts) or None


def _one_line(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


# --- reading the record ---------------------------------------------------------------------


@dataclass
class _Open:
    ref: str
    user: str
    reply: list[str] = field(default_factory=list)
    actions: dict[str, dict[str, Any]] = field(default_factory=dict)

    def close(self) -> Exchange:
        return Exchange(
            ref=self.ref,
            user=self.user,
            reply="\n\n".join(r for r in self.reply if r.strip()),
            actions=tuple(a for a in (_action(e) for e in self.actions.values()) if a),
        )


def exchanges_from(
    events: Iterable[RecordedEvent], agent_id: str, *, before: str | None = None
) -> tuple[list[Exchange], list[Reference]]:
    """The turns of ``agent_id`` in a conversation's recorded events (in log order), and
    what to pin — the tasks given to it, files attached to the people's messages, the
    artifacts it made. ``before`` stops at that turn (the one being answered now): it is
    the new message, not history."""
    actor = f"agent:{agent_id}"
    asked: dict[str, str] = {}  # the people's messages and tasks for the agent, by id
    order: list[str] = []
    turns: dict[str, _Open] = {}
    current: _Open | None = None
    pinned: list[Reference] = []
    for event in events:
        p = event.payload
        if event.type == "task.created" and p.get("targetAgentId") == agent_id:
            task_id = str(p.get("taskId") or event.task_id)
            title, description = str(p.get("title") or ""), str(p.get("description") or "")
            asked[task_id] = (
                description
                if description.startswith(title)
                else "\n\n".join(x for x in (title, description) if x)
            )
            order.append(task_id)
            pinned.append(Reference(f"task: {p.get('title')}", None, task_id))
        elif event.type == "message.created":
            author = p.get("author") or {}
            if author.get("kind") == "user":
                for file in p.get("attachments") or ():
                    pinned.append(Reference(str(file.get("name")), file.get("url"), "attached"))
                if p.get("taskId"):
                    continue  # the task's text, already asked
                if p.get("targetAgentId") != agent_id:
                    continue  # people talking among themselves
                message_id = str(p.get("messageId"))
                if p.get("steer") and current is not None:
                    current.user += "\n\n" + STEERED + str(p.get("content", ""))
                    continue
                asked[message_id] = str(p.get("content", ""))
                order.append(message_id)
            elif event.actor == actor:
                target = current if current is not None else _fallback(order, asked, turns)
                if target is not None:
                    target.reply.append(str(p.get("content", "")))
        elif event.type == "artifact.created" and event.actor == actor:
            pinned.append(Reference(str(p.get("name")), p.get("url"), "artifact"))
        elif event.type.startswith("activity.") and event.actor == actor:
            if event.type == "activity.started" and p.get("kind") == "context":
                reply_to = p.get("replyTo")
                if isinstance(reply_to, str) and reply_to:
                    if reply_to == before:
                        break
                    current = turns.setdefault(reply_to, _Open(reply_to, asked.get(reply_to, "")))
                continue
            target = current if current is not None else _fallback(order, asked, turns)
            activity = str(p.get("activityId", ""))
            if target is not None and activity and event.type != "activity.output":
                target.actions.setdefault(activity, {}).update(p)
    if before in order:
        order = order[: order.index(before)]  # it and what was asked after it come next
    done = [turns[r].close() if r in turns else Exchange(r, asked[r]) for r in order]
    return done, _unique(pinned)


def _fallback(order: list[str], asked: dict[str, str], turns: dict[str, _Open]) -> _Open | None:
    """The turn an output belongs to when no ``context`` entry said (an agent that does not
    mark its turns): the latest thing asked."""
    if not order:
        return None
    ref = order[-1]
    return turns.setdefault(ref, _Open(ref, asked[ref]))


def _unique(references: list[Reference]) -> list[Reference]:
    seen: set[tuple[str, str | None]] = set()
    kept = []
    for ref in references:
        if (ref.name, ref.url) not in seen:
            seen.add((ref.name, ref.url))
            kept.append(ref)
    return kept


def _action(entry: Mapping[str, Any]) -> Action | None:
    kind = entry.get("kind")
    status = entry.get("status")
    activity = f"activity:{entry.get('activityId')}"
    if kind == "tool_call":
        outcome = _outcome(status, entry.get("result"), entry.get("error"))
        return Action(
            "tool_call", f"called {entry.get('name')}", outcome, entry.get("resultUrl") or activity
        )
    if kind == "command":
        code = entry.get("exitCode")
        outcome = f"exit {code}" if code is not None else (status or "running")
        return Action(
            "command",
            f"ran `{_one_line(str(entry.get('command')), 200)}`",
            outcome,
            entry.get("outputUrl") or activity,
        )
    if kind == "file_change":
        verb = {"add": "added", "delete": "deleted"}.get(str(entry.get("change")), "changed")
        return Action(
            "file_change", f"{verb} {entry.get('path')}", None, entry.get("diffUrl") or activity
        )
    if kind == "error":
        return Action(
            "error", f"error {entry.get('code')}: {_one_line(str(entry.get('text')), 300)}"
        )
    return None


def _outcome(status: Any, result: Any, error: Any) -> str | None:
    if error:
        return f"failed: {_one_line(str(error), OUTCOME_CHARS)}"
    if result is None:
        return str(status) if status else None
    text = result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)
    return _one_line(text, OUTCOME_CHARS)
