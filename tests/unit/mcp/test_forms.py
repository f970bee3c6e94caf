"""LineUp's cards as MCP elicitation forms and back: what the host shows asks what the card
asks, and what the person fills in reads back as an answer LineUp accepts for that card."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

from lineup import domain
from lineup.hub.translate import interaction_request
from lineup.mcp import requested_schema, response_from
from lineup.protocol.interaction import Interaction

APPROVAL = Interaction.model_validate(
    {
        "id": "int_1",
        "type": "approval",
        "title": "Deploy?",
        "options": [{"id": "approve", "label": "Deploy"}, {"id": "reject", "label": "Wait"}],
    }
)
CHOICE = Interaction.model_validate(
    {
        "id": "int_2",
        "type": "choice",
        "title": "Region?",
        "allowOther": True,
        "options": [{"id": "eu", "label": "Europe"}, {"id": "us", "label": "US"}],
    }
)
MANY = CHOICE.model_copy(update={"multiple": True, "allow_other": False})
EMAIL = Interaction.model_validate(
    {"id": "int_3", "type": "input", "title": "Your email?", "format": "email"}
)
COUNT = Interaction.model_validate(
    {"id": "int_4", "type": "input", "title": "How many?", "format": "integer"}
)
REVIEW = Interaction.model_validate(
    {
        "id": "int_5",
        "type": "review",
        "title": "The plan",
        "content": "1. 2. 3.",
        "options": [
            {"id": "approve", "label": "Approve"},
            {"id": "request_changes", "label": "Request changes"},
        ],
    }
)

PRIMITIVES = {"string", "number", "integer", "boolean", "array"}


@pytest.mark.parametrize("card", [APPROVAL, CHOICE, MANY, EMAIL, COUNT, REVIEW], ids=str)
def test_each_card_asks_for_a_flat_object_of_primitive_fields(card: Interaction) -> None:
    schema = requested_schema(card)
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["type"] == "object"
    assert {field["type"] for field in schema["properties"].values()} <= PRIMITIVES


@pytest.mark.parametrize(
    ("card", "content", "answer"),
    [
        (APPROVAL, {"decision": "approve", "note": "go"}, {"optionId": "approve", "text": "go"}),
        (APPROVAL, {"decision": "reject"}, {"optionId": "reject"}),
        (CHOICE, {"choice": "us"}, {"optionId": "us"}),
        (CHOICE, {"other": "Asia"}, {"optionId": "other", "text": "Asia"}),
        (MANY, {"choice": ["eu", "us"]}, {"optionIds": ["eu", "us"]}),
        (EMAIL, {"value": "ana@example.test"}, {"text": "ana@example.test"}),
        (COUNT, {"value": 3}, {"text": "3"}),
        (
            REVIEW,
            {"decision": "request_changes", "comment": "Add a backup"},
            {"optionId": "request_changes", "text": "Add a backup"},
        ),
    ],
)
def test_a_filled_in_form_reads_back_as_an_answer_the_card_accepts(
    card: Interaction, content: dict[str, Any], answer: dict[str, Any]
) -> None:
    schema = requested_schema(card)
    jsonschema.validate(content, schema)
    read = response_from(card, content)
    assert read == answer
    ids = read.get("optionIds")
    accepted = domain.validate_response(  # the hub's own check of an answer to this card
        interaction_request(card),
        domain.InteractionResponse(
            option_id=read.get("optionId"),
            option_ids=tuple(ids) if ids else None,
            text=read.get("text"),
        ),
    )
    assert accepted is not None


@pytest.mark.parametrize(
    ("card", "content"),
    [
        (APPROVAL, {"decision": "maybe"}),
        (APPROVAL, {}),
        (MANY, {"choice": []}),
        (EMAIL, {"value": True}),
    ],
)
def test_a_form_that_does_not_answer_the_card_is_no_answer(
    card: Interaction, content: dict[str, Any]
) -> None:
    assert response_from(card, content) is None
