"""A typed answer is judged by one set of rules, whether a card or the input tool asked for it."""

from __future__ import annotations

import math
import re

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from lineup.domain import (
    InteractionKind,
    InteractionRequest,
    InteractionResponse,
    validate_response,
)
from lineup.domain.errors import DomainError
from lineup.protocol import fields
from lineup.protocol.builtin_tools import input_problem, input_result
from lineup.protocol.errors import InvalidArgument


@pytest.mark.parametrize(
    ("format", "text", "problem"),
    [
        (None, "anything", None),
        ("text", "  ", fields.REQUIRED),
        ("email", "ana@example.test", None),
        ("email", "a.b+c@sub.example.org", None),
        ("email", "ana@", fields.EMAIL),
        ("email", "a b@x.io", fields.EMAIL),
        ("email", "ana@example.test\n", fields.EMAIL),
        ("url", "http://localhost:8080/x?y=1", None),
        ("url", "example.test", fields.URL),
        ("url", "ftp://example.test", fields.URL),
        ("url", "https://exa mple.test", fields.URL),
        ("url", "http://[::1", fields.URL),
        ("url", "https://", fields.URL),
        ("number", "-3e2", None),
        ("number", " 4 ", None),
        ("number", ".5", None),
        ("number", "nan", fields.NUMBER),
        ("number", "inf", fields.NUMBER),
        ("number", "1e999", fields.NUMBER),
        ("number", "1_000", fields.NUMBER),
        ("number", "1,5", fields.NUMBER),
        ("integer", "-12", None),
        ("integer", "3.0", fields.INTEGER),
        ("integer", "1e3", fields.INTEGER),
        ("integer", "١٢", fields.INTEGER),
    ],
)
def test_an_answer_has_the_asked_format_or_a_sentence_says_how_to_fix_it(
    format: str | None, text: str, problem: str | None
) -> None:
    assert fields.input_problem(format, text) == problem


def test_a_pattern_must_match_the_whole_answer() -> None:
    assert fields.input_problem(None, "ABC-12", pattern=r"[A-Z]{3}-\d+") is None
    problem = fields.input_problem(None, "ABC-12x", pattern=r"[A-Z]{3}-\d+")
    assert problem == r"The answer does not have the expected form ([A-Z]{3}-\d+)."


@pytest.mark.parametrize("pattern", ["(", "[[a]", "a{9999999999}"])
def test_a_pattern_python_cannot_read_is_named_as_such(pattern: str) -> None:
    problem = fields.pattern_problem(pattern)
    assert problem is not None and problem.startswith("The pattern is not a valid regular")


@given(
    format=st.sampled_from([None, *fields.INPUT_FORMATS]),
    text=st.text(max_size=16) | st.from_regex(r"-?\d{1,4}(\.\d+)?", fullmatch=True),
)
@example(format="email", text="a@b.c")
@example(format="integer", text="+7")
def test_a_card_and_the_input_tool_accept_and_refuse_the_same_answers(
    format: str | None, text: str
) -> None:
    problem = fields.input_problem(format, text)
    card = InteractionRequest(id="q", kind=InteractionKind.INPUT, title="Q", input_format=format)
    try:
        validate_response(card, InteractionResponse(text=text))
        card_problem = None
    except DomainError as exc:
        card_problem = exc.message
    assert card_problem == problem == input_problem(format, text)
    if problem is None:
        assert input_result(format, text) == {"message": text}
        if format == "integer":
            int(text)
        if format == "number":
            assert math.isfinite(float(text))
        if format == "email":
            assert re.fullmatch(r"[^@\s]+@[^@\s]+\.[^@\s]+", text)
    else:
        with pytest.raises(InvalidArgument):
            input_result(format, text)
