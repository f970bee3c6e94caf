"""An engine's own questions to the person as LineUp's question tools — no I/O.

Some engines ask the person things of their own accord, outside the tools LineUp offers: Pi's
extension dialogs (``ctx.ui.select``, ``input``, ``editor``) and Claude Code's
``AskUserQuestion``. A driver asks them through :meth:`RuntimeHost.call_tool
<lineup.engines.runtime.RuntimeHost.call_tool>` as calls of ``ask_choice`` and ``ask_input``
(:mod:`lineup.protocol.question_tools`), so the person gets the same choice or input card as
for any question, and reads the answer back in the engine's terms.

The engines' questions do not always fit a card: a title or a label may be longer than a
card takes, a list longer than a choice card's five options. :func:`choice` and :func:`text`
make arguments the question tools accept whatever the engine sent — shortened where they
must be, with a list too long for a choice card asked as an input card that lists the
options — and :meth:`AskedQuestion.read` maps the answer back to the engine's own labels.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from lineup.engines.runtime import ToolOutcome

MAX_TITLE = 200
MAX_LABEL = 200
MAX_PLACEHOLDER = 200
MAX_TEXT = 20_000
MIN_OPTIONS, MAX_OPTIONS = 2, 5
"""What a choice card takes (``lineup.protocol.question_tools.AskChoice``)."""


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True, slots=True)
class AskedQuestion:
    """A call of one of LineUp's question tools, and how its answer reads back."""

    tool: Literal["ask_choice", "ask_input"]
    arguments: dict[str, Any]
    options: tuple[str, ...] = ()
    """The engine's own labels, in the order offered (empty for free text)."""
    allow_other: bool = False

    def read(self, outcome: ToolOutcome) -> list[str] | None:
        """The person's answer in the engine's terms — the chosen labels as the engine wrote
        them (and any text of their own, when allowed), or the text typed — or ``None``
        when there is no usable answer (the call failed, or typed text names no option)."""
        if not outcome.ok:
            return None
        try:
            answer = json.loads(outcome.text)
        except ValueError:
            return None
        if not isinstance(answer, dict):
            return None
        if self.tool == "ask_choice":
            shown = [str(label) for label in self.arguments["options"]]
            picked = [
                self.options[shown.index(label)]
                for label in answer.get("choices") or []
                if label in shown
            ]
            other = answer.get("other")
            if isinstance(other, str) and other.strip() and self.allow_other:
                picked.append(other.strip())
            return picked or None
        typed = str(answer.get("text") or "")
        if not self.options:
            return [typed]
        wanted = typed.strip().casefold()
        match = [o for o in self.options if o.strip().casefold() == wanted]
        return match[:1] or None


def choice(
    title: str,
    options: Sequence[str],
    *,
    multiple: bool = False,
    allow_other: bool = False,
    description: str | None = None,
) -> AskedQuestion | None:
    """Ask the person to pick among ``options``: a choice card for two to five, else an input
    card listing them (the answer must name one). ``None`` for no options at all."""
    labels = tuple(str(o) for o in options)
    if not labels:
        return None
    heading = _short(title.strip(), MAX_TITLE) or "The engine asks you to choose"
    if MIN_OPTIONS <= len(labels) <= MAX_OPTIONS:
        shown = _distinct([_short(label, MAX_LABEL) or "(empty)" for label in labels])
        arguments: dict[str, Any] = {"title": heading, "options": shown}
        if multiple:
            arguments["multiple"] = True
        if allow_other:
            arguments["allow_other"] = True
        if description:
            arguments["description"] = _short(description, MAX_TEXT)
        return AskedQuestion("ask_choice", arguments, labels, allow_other)
    listed = "Answer with one of:\n" + "\n".join(f"- {label}" for label in labels)
    text = f"{description}\n\n{listed}" if description else listed
    return AskedQuestion(
        "ask_input", {"title": heading, "description": _short(text, MAX_TEXT)}, labels
    )


def text(
    title: str, *, placeholder: str | None = None, prefill: str | None = None
) -> AskedQuestion:
    """Ask the person to type an answer. An engine's text to start from (an editor's
    ``prefill``) is shown with the question; a card has no field to pre-fill."""
    arguments: dict[str, Any] = {"title": _short(title.strip(), MAX_TITLE) or "The engine asks"}
    if placeholder and len(placeholder) <= MAX_PLACEHOLDER:
        arguments["placeholder"] = placeholder
    elif placeholder:
        arguments["description"] = _short(placeholder, MAX_TEXT)
    if prefill:
        arguments["description"] = _short(f"The text so far:\n\n{prefill}", MAX_TEXT)
    return AskedQuestion("ask_input", arguments)


def _distinct(labels: list[str]) -> list[str]:
    """Labels shortened alike would answer alike: number the repeats."""
    result: list[str] = []
    for label in labels:
        candidate, number = label, 1
        while candidate in result:
            number += 1
            candidate = _short(label, MAX_LABEL - 8) + f" ({number})"
        result.append(candidate)
    return result


__all__ = ["AskedQuestion", "choice", "text"]
