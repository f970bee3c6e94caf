"""Every recorded fact says which things it is about, so the events behind any card can be
opened; a subject is written ``kind:id``."""

from __future__ import annotations

import pytest

from lineup.protocol.facts import FACTS, parse_fact
from lineup.protocol.subjects import RULES, SUBJECT_KINDS, parse_subject, subjects_of

from .test_facts import STORED


def test_every_fact_type_has_a_subject_rule() -> None:
    missing = sorted(t for t, model in FACTS.items() if model not in RULES)
    assert missing == [], f"give these facts a rule in lineup.protocol.subjects: {missing}"


@pytest.mark.parametrize("event_type", sorted(STORED))
def test_each_stored_fact_names_subjects_of_known_kinds(event_type: str) -> None:
    fact = parse_fact(event_type, STORED[event_type])
    named = subjects_of(fact, task_id="task_env", conversation_id="conv_env")
    assert {kind for kind, _ in named} <= SUBJECT_KINDS
    assert ("task", "task_env") in named and ("conversation", "conv_env") in named
    assert all(ident for _, ident in named)


def test_a_message_is_about_itself_its_task_and_its_conversation() -> None:
    fact = parse_fact(
        "message.created",
        {"messageId": "msg_1", "author": {"kind": "user", "id": "u1"}, "taskId": "task_1"},
    )
    assert subjects_of(fact, conversation_id="conv_1") == {
        ("message", "msg_1"),
        ("task", "task_1"),
        ("conversation", "conv_1"),
    }


def test_a_childs_creation_is_about_the_child_and_its_parent() -> None:
    fact = parse_fact(
        "task.child_created", {"childTaskId": "child", "parentTaskId": "parent", "title": "t"}
    )
    assert subjects_of(fact) == {("task", "child"), ("task", "parent")}


def test_an_interactions_events_are_about_it_and_their_task() -> None:
    asked = parse_fact(
        "interaction.requested",
        {"interaction": {"id": "ia_1", "type": "approval", "title": "Deploy?"}},
    )
    assert subjects_of(asked, task_id="task_1") == {("interaction", "ia_1"), ("task", "task_1")}
    withdrawn = parse_fact("interaction.cancelled", {"interactionId": "ia_1", "taskId": "task_1"})
    assert subjects_of(withdrawn) == {("interaction", "ia_1"), ("task", "task_1")}


def test_a_persons_account_bindings_are_about_nothing_anyone_else_opens() -> None:
    for event_type in ("binding.bound", "binding.expired", "binding.removed"):
        assert subjects_of(parse_fact(event_type, STORED[event_type])) == frozenset()


def test_a_subject_is_written_kind_colon_id() -> None:
    assert parse_subject("task:01J") == ("task", "01J")
    assert parse_subject("tool_call:tc:with:colons") == ("tool_call", "tc:with:colons")


@pytest.mark.parametrize("text", ["", "task", "task:", ":abc", "workspace:ws_1", "x" * 10])
def test_a_malformed_subject_is_refused_with_a_sentence(text: str) -> None:
    with pytest.raises(ValueError, match=r"subject|kind"):
        parse_subject(text)


def test_a_subject_id_longer_than_any_id_is_refused() -> None:
    with pytest.raises(ValueError, match="128"):
        parse_subject("task:" + "x" * 129)
