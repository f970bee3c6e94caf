"""The context a (re)started engine session is given, built from LineUp's record under a
token budget: recent turns whole, older ones as a rolling summary, pinned references kept,
what the agent did as summaries with references — and the record read back into turns,
each turn's replies and entries where its ``context`` entry says they belong."""

from __future__ import annotations

from typing import Any

from lineup.engines.context import (
    Action,
    Budget,
    Exchange,
    RecordedEvent,
    Reference,
    build_context,
    exchanges_from,
    render_turn,
)

AGENT = "agent_1"


def words(text: str) -> int:
    """A token estimator a test can count by hand: one token a word."""
    return len(text.split())


def exchange(n: int, reply_words: int = 5, **fields: Any) -> Exchange:
    return Exchange(
        ref=f"msg_{n}", user=f"question {n}", reply=" ".join(["w"] * reply_words), **fields
    )


def test_everything_fits_a_large_budget_and_goes_in_whole() -> None:
    history = [exchange(n) for n in range(3)]
    snap = build_context(history, estimate=words, budget=Budget(tokens=1000))
    assert snap.recent == ("msg_0", "msg_1", "msg_2")
    assert snap.summarized == () and snap.omitted == () and snap.summary is None
    assert [t.user for t in snap.turns] == ["question 0", "question 1", "question 2"]
    assert snap.tokens == 3 * (2 + 5)


def test_older_turns_roll_into_a_summary_and_the_oldest_are_left_out() -> None:
    history = [exchange(n, reply_words=20) for n in range(30)]
    snap = build_context(history, estimate=words, budget=Budget(tokens=200, summary_share=0.25))
    assert snap.recent[-1] == "msg_29" and len(snap.recent) < 30
    assert snap.summarized and snap.omitted
    # newest whole, then summarized, then left out: every turn exactly once, in order
    assert [*snap.omitted, *snap.summarized, *snap.recent] == [e.ref for e in history]
    assert (
        snap.summary is not None and f"{len(snap.omitted)} older turns are left out" in snap.summary
    )
    assert snap.tokens <= 200
    assert "msg_0" not in (snap.instructions or "")
    assert f"{snap.summarized[-1]}: person: question" in (snap.instructions or "")


def test_the_newest_turn_goes_in_even_when_it_alone_is_over_the_budget() -> None:
    snap = build_context([exchange(1, reply_words=500)], estimate=words, budget=Budget(tokens=50))
    assert snap.recent == ("msg_1",)


def test_pinned_references_and_instructions_are_kept_whatever_the_budget() -> None:
    pinned = [Reference("spec.pdf", "/api/workspaces/ws/files/f1", "attached")]
    snap = build_context(
        [exchange(n, reply_words=50) for n in range(10)],
        estimate=words,
        budget=Budget(tokens=60),
        instructions="Be brief.",
        pinned=pinned,
    )
    assert snap.instructions is not None
    assert snap.instructions.startswith("Be brief.\n\nPinned references:\n- spec.pdf — /api/")
    assert snap.pinned == tuple(pinned)


def test_what_was_done_goes_in_as_summaries_with_references_not_whole() -> None:
    huge = "x" * 10_000
    turn = render_turn(
        Exchange(
            "msg_1",
            "build it",
            "Built.",
            (
                Action("command", "ran `make`", "exit 0", "/api/workspaces/ws/files/out"),
                Action("tool_call", "called read_file", huge[:200], "activity:act_1"),
            ),
        )
    )
    assert turn.assistant.startswith("Built.\n[what I did: ran `make` → exit 0 (whole: /api/")
    assert "(whole: activity:act_1)" in turn.assistant
    assert len(turn.assistant) < 400


def test_the_snapshot_line_and_json_say_what_was_given() -> None:
    history = [exchange(n, reply_words=20) for n in range(30)]
    snap = build_context(history, estimate=words, budget=Budget(tokens=200))
    line = snap.line()
    assert line.startswith(f"The engine started with {len(snap.recent)} recent turns, a summary")
    assert "of 200 tokens" in line
    kept = snap.to_json()
    assert kept["version"] == 1 and kept["recent"] == list(snap.recent)
    assert kept["turns"][-1]["user"] == "question 29"


# --- the record -------------------------------------------------------------------------------


class Log:
    def __init__(self) -> None:
        self.events: list[RecordedEvent] = []

    def add(self, type_: str, actor: str, **payload: Any) -> None:
        self.events.append(RecordedEvent(len(self.events) + 1, type_, actor, payload))

    def person(self, message_id: str, content: str, **extra: Any) -> None:
        self.add(
            "message.created",
            "user:ana",
            messageId=message_id,
            author={"kind": "user", "id": "ana"},
            content=content,
            targetAgentId=AGENT,
            **extra,
        )

    def agent(self, content: str) -> None:
        self.add(
            "message.created",
            f"agent:{AGENT}",
            author={"kind": "agent", "id": AGENT},
            content=content,
        )

    def turn(self, reply_to: str) -> None:
        self.add(
            "activity.started",
            f"agent:{AGENT}",
            activityId=f"ctx_{reply_to}",
            kind="context",
            text="…",
            replyTo=reply_to,
        )


def test_a_queued_message_does_not_take_the_replies_of_the_turn_before_it() -> None:
    log = Log()
    log.person("m1", "first")
    log.turn("m1")
    log.person("m2", "second, sent while it worked")
    log.add("activity.started", f"agent:{AGENT}", activityId="a1", kind="command", command="make")
    log.add("activity.output", f"agent:{AGENT}", activityId="a1", chunk="ok", offset=0)
    log.add("activity.finished", f"agent:{AGENT}", activityId="a1", status="succeeded", exitCode=0)
    log.agent("first done")
    log.turn("m2")
    log.agent("second done")
    log.person("m3", "third")
    turns, _ = exchanges_from(log.events, AGENT, before="m3")
    assert [(t.ref, t.user, t.reply) for t in turns] == [
        ("m1", "first", "first done"),
        ("m2", "second, sent while it worked", "second done"),
    ]
    assert turns[0].actions == (Action("command", "ran `make`", "exit 0", "activity:a1"),)


def test_a_steering_message_joins_the_turn_it_steered() -> None:
    log = Log()
    log.person("m1", "write the report")
    log.turn("m1")
    log.person("m2", "in French please", steer=True)
    log.agent("Voilà.")
    turns, _ = exchanges_from(log.events, AGENT)
    assert [(t.ref, t.user, t.reply) for t in turns] == [
        ("m1", "write the report\n\n[sent while the agent worked] in French please", "Voilà."),
    ]


def test_the_turn_being_answered_and_what_came_after_it_are_not_history() -> None:
    log = Log()
    log.person("m1", "one")
    log.turn("m1")
    log.agent("done one")
    log.person("m2", "two")
    log.person("m3", "three")
    turns, _ = exchanges_from(log.events, AGENT, before="m2")
    assert [t.ref for t in turns] == ["m1"]


def test_tasks_attachments_and_artifacts_are_pinned_and_other_peoples_talk_is_not_a_turn() -> None:
    log = Log()
    log.add(
        "task.created",
        "user:ana",
        taskId="task_1",
        title="Fix CI",
        description="It fails.",
        targetAgentId=AGENT,
    )
    log.person(
        "m0",
        "Fix CI\n\nIt fails.",
        taskId="task_1",
        attachments=[{"name": "log.txt", "url": "/f/1"}],
    )
    log.add(
        "message.created",
        "user:bob",
        messageId="mx",
        author={"kind": "user", "id": "bob"},
        content="lunch?",
    )
    log.turn("task_1")
    log.agent("Fixed.")
    log.add("artifact.created", f"agent:{AGENT}", name="patch", url="/f/2")
    turns, pinned = exchanges_from(log.events, AGENT)
    assert [(t.ref, t.user, t.reply) for t in turns] == [
        ("task_1", "Fix CI\n\nIt fails.", "Fixed.")
    ]
    assert pinned == [
        Reference("task: Fix CI", None, "task_1"),
        Reference("log.txt", "/f/1", "attached"),
        Reference("patch", "/f/2", "artifact"),
    ]


def test_an_agent_that_does_not_mark_its_turns_has_its_replies_taken_in_order() -> None:
    log = Log()
    log.person("m1", "hi")
    log.agent("hello")
    log.add(
        "activity.started",
        f"agent:{AGENT}",
        activityId="e",
        kind="error",
        code="unavailable",
        text="it stopped",
    )
    turns, _ = exchanges_from(log.events, AGENT)
    assert turns == [
        Exchange("m1", "hi", "hello", (Action("error", "error unavailable: it stopped"),))
    ]
