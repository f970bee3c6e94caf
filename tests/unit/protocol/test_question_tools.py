"""LineUp's questions as tools a model calls: the card each one puts to the person, the
answer the model reads — the one definition the MCP server and hosted engines share."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from lineup.protocol import question_tools as q
from lineup.protocol.interaction import Interaction


def asked(question: q.Question) -> Interaction:
    return Interaction.model_validate({"id": "int_1", **q.card(question)})


def test_every_tool_has_an_object_schema_naming_its_arguments() -> None:
    for tool in (*q.QUESTIONS, *q.APP_TOOLS):
        schema = tool.input_schema()
        assert schema["type"] == "object", tool.name
        assert set(schema.get("properties", {})) == set(tool.arguments.model_fields), tool.name
    assert q.BY_NAME["ask_choice"].input_schema()["required"] == ["title", "options"]


def test_an_approval_card_has_the_labelled_options_and_the_model_reads_approved_and_note() -> None:
    card = asked(q.AskApproval(title="Deploy?", risk="high", approve_label="Ship it"))
    assert [(o.id, o.label) for o in card.options or []] == [
        ("approve", "Ship it"),
        ("reject", "Reject"),
    ]
    assert q.answer(card, {"optionId": "approve"}) == {"approved": True}
    assert q.answer(card, {"optionId": "reject", "text": "Friday"}) == {
        "approved": False,
        "note": "Friday",
    }


def test_a_choice_reads_back_as_labels_and_the_persons_own_words() -> None:
    card = asked(
        q.AskChoice(title="Region?", options=["eu", "us"], recommended="us", allow_other=True)
    )
    assert [o.recommended for o in card.options or []] == [False, True]
    assert q.answer(card, {"optionId": "option-2"}) == {"choices": ["us"]}
    assert q.answer(card, {"optionId": "other", "text": "ap"}) == {"choices": [], "other": "ap"}


def test_an_input_and_a_review_read_back_as_text_and_a_decision() -> None:
    assert q.answer(asked(q.AskInput(title="Name?", format="email")), {"text": "a@b.c"}) == {
        "text": "a@b.c"
    }
    review = asked(q.AskReview(title="Plan?", content="1. go"))
    assert q.answer(review, {"optionId": "request_changes", "text": "no"}) == {
        "approved": False,
        "changes_requested": True,
        "comment": "no",
    }


def test_an_edited_input_reaches_the_model_with_the_approval() -> None:
    card = asked(q.AskApproval(title="Write?"))
    assert q.answer(card, {"optionId": "approve", "input": {"path": "b"}}) == {
        "approved": True,
        "input": {"path": "b"},
    }


def test_wrong_arguments_are_refused_with_what_is_wrong() -> None:
    with pytest.raises(ValidationError) as info:
        q.AskChoice.model_validate({"title": "x", "options": ["only one"], "colour": "red"})
    problems = {str(e["loc"][0]) for e in info.value.errors()}
    assert problems == {"options", "colour"}
