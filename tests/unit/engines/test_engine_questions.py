"""An engine's own questions (Pi's dialogs, Claude Code's AskUserQuestion) become calls of
LineUp's question tools that the tools accept, whatever the engine sent, and the person's
answer reads back in the engine's own labels."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from lineup.engines.engine_questions import choice, text
from lineup.engines.runtime import ToolOutcome
from lineup.protocol import question_tools as q


def answered(**answer: object) -> ToolOutcome:
    return ToolOutcome(json.dumps({**answer, "answered_by": "Ana"}))


def test_two_to_five_options_are_a_choice_card_and_the_pick_reads_back_as_the_engines_label() -> (
    None
):
    long = "a" * 300
    asked = choice("Which one?", ["red", long], multiple=True, description="Colours")
    assert asked is not None and asked.tool == "ask_choice"
    shown = asked.arguments["options"]
    assert shown[0] == "red" and len(shown[1]) == 200
    assert asked.arguments["multiple"] is True
    q.AskChoice.model_validate(asked.arguments)
    assert asked.read(answered(choices=[shown[1], "red"])) == [long, "red"]
    assert asked.read(answered(choices=[], other="green")) is None  # no other was offered
    repeated = choice("Same?", ["a", "a", "a (2)"])
    assert repeated is not None and repeated.arguments["options"] == ["a", "a (2)", "a (2) (2)"]
    assert asked.read(ToolOutcome('{"error": {"code": "unavailable"}}', ok=False)) is None


def test_an_answer_of_the_persons_own_is_read_when_the_engine_allows_one() -> None:
    asked = choice("Which one?", ["red", "blue"], allow_other=True)
    assert asked is not None and asked.arguments["allow_other"] is True
    assert asked.read(answered(choices=[], other=" green ")) == ["green"]


def test_more_options_than_a_card_takes_are_listed_on_an_input_card_and_must_be_named() -> None:
    options = [f"option {n}" for n in range(1, 8)]
    asked = choice("Pick a branch", options)
    assert asked is not None and asked.tool == "ask_input"
    assert "- option 7" in asked.arguments["description"]
    q.AskInput.model_validate(asked.arguments)
    assert asked.read(answered(text="Option 7 ")) == ["option 7"]
    assert asked.read(answered(text="option 9")) is None
    assert choice("Pick", []) is None


def test_text_questions_keep_within_the_cards_limits() -> None:
    asked = text("x" * 500, placeholder="p" * 300, prefill="line one\nline two")
    q.AskInput.model_validate(asked.arguments)
    assert len(asked.arguments["title"]) == 200
    assert "line one\nline two" in asked.arguments["description"]
    assert asked.read(answered(text="typed")) == ["typed"]
    assert text("", placeholder="name").arguments == {
        "title": "The engine asks",
        "placeholder": "name",
    }


@given(
    title=st.text(max_size=400),
    options=st.lists(st.text(max_size=300), min_size=1, max_size=9),
    multiple=st.booleans(),
)
def test_whatever_the_engine_sends_the_question_tool_accepts_it(
    title: str, options: list[str], multiple: bool
) -> None:
    asked = choice(title, options, multiple=multiple)
    assert asked is not None
    q.BY_NAME[asked.tool].arguments.model_validate(asked.arguments)
    if asked.tool == "ask_choice":
        shown = asked.arguments["options"]
        assert len(set(shown)) == len(shown)
        assert asked.read(answered(choices=[shown[-1]])) == [options[-1]]
