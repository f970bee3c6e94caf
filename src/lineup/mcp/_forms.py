"""LineUp's question cards as MCP elicitation forms, and an elicitation's answer back as a
card's answer: the same question can then be answered in the MCP host or in LineUp.

MCP's form elicitation asks for a flat object of primitive fields (``string`` with an
optional ``format`` or ``enum``, ``number``, ``integer``, ``boolean``). A card maps to one:

========  ==============================================  ==================================
card      requested schema                                answer read back
========  ==============================================  ==================================
approval  ``decision``: string enum of the two option      ``optionId`` = decision,
          ids (labels as ``enumNames``), ``note``: string   ``text`` = note
choice    ``choice``: string enum of the option ids, or     ``optionId`` / ``optionIds``;
          with ``multiple`` an array of them; with          ``other`` as option ``other``
          ``allowOther`` an ``other``: string               with ``text``
input     ``value``: string (``format`` email/uri, or a     ``text`` = value (as a string)
          ``number``/``integer`` field); ``pattern`` kept
review    ``decision``: approve / request_changes,          ``optionId`` = decision,
          ``comment``: string                               ``text`` = comment
========  ==============================================  ==================================

Pure: no I/O, so both directions are tested without a host.
"""

from __future__ import annotations

from typing import Any

from lineup.protocol.interaction import Interaction, InteractionType

_FORMATS = {"email": "email", "url": "uri"}

OTHER = "other"
"""The option id of a person's own answer to a choice that allows one (docs/protocol.md §6)."""


def requested_schema(card: Interaction) -> dict[str, Any]:
    """The elicitation ``requestedSchema`` asking what ``card`` asks."""
    options = card.options or []
    ids = [o.id for o in options]
    names = [o.label for o in options]
    properties: dict[str, Any]
    required: list[str]
    if card.type in (InteractionType.APPROVAL, InteractionType.REVIEW):
        note = "note" if card.type is InteractionType.APPROVAL else "comment"
        properties = {
            "decision": {
                "type": "string",
                "title": card.title,
                "enum": ids,
                "enumNames": names,
            },
            note: {"type": "string", "title": note.capitalize()},
        }
        required = ["decision"]
    elif card.type is InteractionType.CHOICE:
        if card.multiple:
            pick: dict[str, Any] = {
                "type": "array",
                "title": card.title,
                "items": {"type": "string", "enum": ids},
                "minItems": 0 if card.allow_other else 1,
            }
        else:
            pick = {"type": "string", "title": card.title, "enum": ids, "enumNames": names}
        properties = {"choice": pick}
        required = [] if card.allow_other else ["choice"]
        if card.allow_other:
            properties["other"] = {"type": "string", "title": "Other"}
    else:
        value: dict[str, Any] = {"type": "string", "title": card.title}
        fmt = card.format.value if card.format is not None else None
        if fmt in ("number", "integer"):
            value = {"type": fmt, "title": card.title}
        elif fmt in _FORMATS:
            value["format"] = _FORMATS[fmt]
        if card.pattern and value["type"] == "string":
            value["pattern"] = card.pattern
        if card.placeholder:
            value["description"] = card.placeholder
        properties = {"value": value}
        required = ["value"]
    return {"type": "object", "properties": properties, "required": required}


def message(card: Interaction) -> str:
    """The elicitation's message: the card's text, in the order the card reads."""
    parts = [card.title, card.description, card.why, card.impact, card.content]
    if card.risk is not None:
        parts.append(f"Risk: {card.risk.value}")
    return "\n\n".join(p for p in parts if p)


def response_from(card: Interaction, content: dict[str, Any]) -> dict[str, Any] | None:
    """An accepted elicitation's ``content`` as the card's answer (``optionId``,
    ``optionIds``, ``text``), or None when it does not answer the card."""
    ids = {o.id for o in card.options or []}
    if card.type in (InteractionType.APPROVAL, InteractionType.REVIEW):
        decision = content.get("decision")
        if decision not in ids:
            return None
        text = content.get("note" if card.type is InteractionType.APPROVAL else "comment")
        return _answer(option_id=decision, text=text)
    if card.type is InteractionType.CHOICE:
        picked = content.get("choice")
        other = content.get("other") if card.allow_other else None
        if card.multiple:
            chosen = [p for p in picked if p in ids] if isinstance(picked, list) else []
            if other:
                chosen.append(OTHER)
            return _answer(option_ids=chosen, text=other) if chosen else None
        if other:  # their own words win over a pick made too
            return _answer(option_id=OTHER, text=other)
        return _answer(option_id=picked) if picked in ids else None
    value = content.get("value")
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, float) and value.is_integer() and card.format is not None:
        value = int(value) if card.format.value == "integer" else value
    return _answer(text=str(value))


def _answer(**fields: Any) -> dict[str, Any]:
    names = {"option_id": "optionId", "option_ids": "optionIds", "text": "text"}
    return {names[k]: v for k, v in fields.items() if v not in (None, "")}
