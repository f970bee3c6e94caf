"""Random sequences of operations, including nonsense input, must never break the rules.

Any exception other than DomainError escapes hypothesis and fails the test, which is how
"errors are only DomainError" is checked.
"""

import math
import re
from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from lineup.domain import (
    ERROR_CODES,
    LEGAL_TRANSITIONS,
    TERMINAL_INTERACTION_STATUSES,
    DomainError,
    InteractionKind,
    InteractionRequest,
    InteractionResponse,
    InteractionState,
    InteractionStatus,
    Option,
    TaskState,
    TaskStatus,
    cancel,
    expire,
    is_terminal,
    open_interaction,
    report,
    request_cancel,
    respond,
    transition,
    validate_request,
    validate_response,
)

junk = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 200), st.floats(), st.text(max_size=6), st.just(())
)
statuses = st.sampled_from([*TaskStatus, *(s.value for s in TaskStatus)])
progresses = st.none() | st.integers(-2, 102)
summaries = st.sampled_from([None, "cloning", "  "])
errors = st.sampled_from([None, None, "boom", ""])


def attempt(op: Callable[[], Any]) -> Any:
    """Run op; a DomainError must carry a known code and a message, and yields None."""
    try:
        return op()
    except DomainError as err:
        assert err.code in ERROR_CODES
        assert err.message.strip()
        return None


class TaskMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.state = TaskState()

    def apply(self, op: Callable[[], Any]) -> None:
        before = self.state
        result = attempt(op)
        if result is None:
            return
        after = result[0] if isinstance(result, tuple) else result
        assert not is_terminal(before.status), "nothing may succeed on a finished task"
        assert after.status is before.status or after.status in LEGAL_TRANSITIONS[before.status]
        if before.cancel_requested:
            assert after.cancel_requested
            assert after.cancel_reason == before.cancel_reason
        self.state = after

    # Plausible reports drive the task deep into the table; the junk rule probes the edges.
    @rule(to=statuses, progress=progresses, summary=summaries, error=errors)
    def do_transition(self, to: Any, progress: Any, summary: Any, error: Any) -> None:
        state = self.state
        self.apply(lambda: transition(state, to, progress=progress, summary=summary, error=error))

    @rule(status=st.none() | statuses, progress=progresses, summary=summaries, error=errors)
    def do_report(self, status: Any, progress: Any, summary: Any, error: Any) -> None:
        state = self.state
        self.apply(
            lambda: report(state, status=status, progress=progress, summary=summary, error=error)
        )

    @rule(reason=summaries)
    def do_request_cancel(self, reason: Any) -> None:
        state = self.state
        self.apply(lambda: request_cancel(state, reason))

    @rule(to=junk, progress=junk, summary=junk, error=junk, use_report=st.booleans())
    def do_nonsense(
        self, to: Any, progress: Any, summary: Any, error: Any, use_report: bool
    ) -> None:
        state = self.state
        fn: Any = report if use_report else transition
        args = {"progress": progress, "summary": summary, "error": error}
        if use_report:
            self.apply(lambda: fn(state, status=to, **args))
        else:
            self.apply(lambda: fn(state, to, **args))

    @rule(reason=junk)
    def do_request_cancel_nonsense(self, reason: Any) -> None:
        state = self.state
        self.apply(lambda: request_cancel(state, reason))

    @invariant()
    def progress_is_a_whole_number_from_0_to_100(self) -> None:
        progress = self.state.progress
        assert type(progress) is int
        assert 0 <= progress <= 100

    @invariant()
    def only_a_failed_task_has_an_error(self) -> None:
        assert (self.state.error is not None) == (self.state.status is TaskStatus.FAILED)

    @invariant()
    def a_succeeded_task_is_complete(self) -> None:
        if self.state.status is TaskStatus.SUCCEEDED:
            assert self.state.progress == 100


TestTaskStateMachine = TaskMachine.TestCase
TestTaskStateMachine.settings = settings(max_examples=150, stateful_step_count=30)


ids = st.sampled_from(["a", "b", "c", "d", "e", "f", "g"])
fine_text = st.sampled_from(
    [
        "ok",
        "ada@example.com",
        "https://x.io",
        "3",
        "2.5",
        "AB-1",
        " ",
        "nan",
        "1e999",
        "http://[::1",
    ]
)


@st.composite
def valid_requests(draw: st.DrawFn) -> InteractionRequest:
    kind = draw(st.sampled_from(list(InteractionKind)))
    fields: dict[str, Any] = {}
    if kind is InteractionKind.CHOICE:
        option_ids = draw(st.lists(ids, min_size=2, max_size=5, unique=True))
        recommended = draw(st.one_of(st.none(), st.sampled_from(option_ids)))
        fields["options"] = tuple(
            Option(i, i.upper(), recommended=i == recommended) for i in option_ids
        )
        fields["allow_other"] = draw(st.booleans())
        fields["multiple"] = draw(st.booleans())
    elif kind is InteractionKind.INPUT:
        fields["input_format"] = draw(
            st.sampled_from([None, "text", "email", "url", "number", "integer"])
        )
        fields["pattern"] = draw(st.sampled_from([None, r"[A-Z]+-\d", r".+", r"\d+"]))
    elif kind is InteractionKind.APPROVAL and draw(st.booleans()):
        fields["options"] = (Option("yes", "Yes"), Option("no", "No"), Option("later", "Later"))
    expires = draw(st.one_of(st.none(), st.integers(0, 1_000)))
    return validate_request(
        InteractionRequest(id="int", kind=kind, title="Q", expires_at_ms=expires, **fields)
    )


answer_ids = st.sampled_from(
    ["a", "b", "c", "yes", "no", "approve", "reject", "request_changes", "other", "zz"]
)
responses = st.builds(
    InteractionResponse,
    option_id=st.one_of(st.none(), answer_ids, junk),
    option_ids=st.one_of(st.none(), st.lists(answer_ids, max_size=4).map(tuple), junk),
    text=st.one_of(st.none(), fine_text, st.text(max_size=5), junk),
)
people = st.sampled_from(["ada", "grace"])
clock_steps = st.one_of(st.integers(0, 300), junk)


def answers_for(req: InteractionRequest) -> st.SearchStrategy[InteractionResponse]:
    picks = [o.id for o in req.options] + ["other", "zz"]
    return st.builds(
        InteractionResponse,
        option_id=st.none() | st.sampled_from(picks),
        option_ids=st.none() | st.lists(st.sampled_from(picks), max_size=3).map(tuple),
        text=st.none() | fine_text,
    )


class InteractionMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.now = 0
        self.state: InteractionState

    @initialize(req=valid_requests())
    def open(self, req: InteractionRequest) -> None:
        self.state = open_interaction(req)

    def apply(self, op: Callable[[], Any]) -> None:
        before = self.state
        outcome = attempt(op)
        if outcome is None:
            return
        after = outcome.state
        if not outcome.changed:
            assert after == before
            return
        assert before.status is InteractionStatus.REQUESTED, "a finished request never changes"
        assert after.status in TERMINAL_INTERACTION_STATUSES
        assert after.request == before.request
        self.state = after

    @rule(step=clock_steps)
    def tick(self, step: Any) -> None:
        if type(step) is int:
            self.now += step

    # Answers built from the request's own options reach the interesting cases (same answer,
    # different answer); the nonsense rule checks that junk is refused as a DomainError.
    @rule(data=st.data(), by=people)
    def do_respond(self, data: st.DataObject, by: str) -> None:
        self.respond_with(data.draw(answers_for(self.state.request)), by, self.now)

    @rule(resp=responses, by=st.one_of(people, junk), now=st.one_of(st.just(0), junk))
    def do_respond_nonsense(self, resp: InteractionResponse, by: Any, now: Any) -> None:
        self.respond_with(resp, by, self.now + now if type(now) is int else now)

    def respond_with(self, resp: InteractionResponse, by: Any, now: Any) -> None:
        state = self.state
        self.apply(lambda: respond(state, resp, by=by, now_ms=now))
        if self.state is not state and self.state.status is InteractionStatus.RESOLVED:
            assert self.state.response == validate_response(state.request, resp)

    @rule()
    def do_expire(self) -> None:
        state, now = self.state, self.now
        self.apply(lambda: expire(state, now))

    @rule()
    def do_cancel(self) -> None:
        state = self.state
        self.apply(lambda: cancel(state))

    @invariant()
    def only_a_resolved_request_has_an_answer(self) -> None:
        resolved = self.state.status is InteractionStatus.RESOLVED
        assert (self.state.response is not None) == resolved
        assert (self.state.responded_by is not None) == resolved
        assert (self.state.responded_at_ms is not None) == resolved


TestInteractionStateMachine = InteractionMachine.TestCase
TestInteractionStateMachine.settings = settings(max_examples=150, stateful_step_count=30)


@given(req=valid_requests(), first=responses, second=responses)
def test_a_resolved_answer_never_changes(
    req: InteractionRequest, first: InteractionResponse, second: InteractionResponse
) -> None:
    answered = attempt(lambda: respond(open_interaction(req), first, by="ada", now_ms=0))
    if answered is None:
        return
    again = attempt(lambda: respond(answered.state, second, by="grace", now_ms=1))
    if again is not None:
        assert not again.changed
        assert again.state == answered.state


options = st.one_of(
    st.builds(Option, id=junk | ids, label=junk | ids, style=junk, recommended=junk),
    junk,
)
garbage_requests = st.builds(
    InteractionRequest,
    id=junk | st.just("int_9"),
    kind=st.one_of(st.sampled_from(list(InteractionKind)), junk),
    title=junk | st.just("Pick"),
    description=junk,
    risk=st.one_of(st.sampled_from(["low", "high"]), junk),
    options=st.one_of(
        st.lists(options, max_size=6).map(tuple), st.lists(options, max_size=3), junk
    ),
    allow_other=junk,
    multiple=junk,
    input_format=st.one_of(st.sampled_from(["email", "url", "integer"]), junk),
    pattern=st.one_of(st.text(alphabet="()[]{}*+?a\\-z09^$|", max_size=8), junk),
    expires_at_ms=junk,
)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(req=garbage_requests, resp=responses)
def test_nonsense_requests_and_answers_raise_only_domain_errors(
    req: InteractionRequest, resp: InteractionResponse
) -> None:
    checked = attempt(lambda: validate_request(req))
    attempt(lambda: validate_response(req, resp))
    if checked is not None:
        assert validate_request(checked) == checked


regex_ish = st.sampled_from(["[[a]", "a{9999999999}", "(", "[a--z]", r"\d+"]) | st.text(
    alphabet="()[]{}*+?a\\-z09^$|.,", max_size=10
)


@settings(max_examples=300)
@example(fmt="number", pattern=None, text="nan")
@example(fmt="number", pattern=None, text="1e999")
@example(fmt="integer", pattern=None, text="2.0")
@example(fmt="url", pattern=None, text="http://[::1")
@example(fmt="email", pattern=None, text="a@b")
@example(fmt=None, pattern="[[a]", text="a")
@given(
    fmt=st.sampled_from([None, "text", "email", "url", "number", "integer"]),
    pattern=st.none() | regex_ish,
    text=st.one_of(fine_text, st.text(max_size=12), st.from_regex(r"-?\d{1,4}(\.\d+)?")),
)
def test_an_accepted_typed_answer_really_has_the_asked_format(
    fmt: str | None, pattern: str | None, text: str
) -> None:
    req = InteractionRequest(
        id="int", kind=InteractionKind.INPUT, title="Q", input_format=fmt, pattern=pattern
    )
    if attempt(lambda: validate_request(req)) is None:
        return
    accepted = attempt(lambda: validate_response(req, InteractionResponse(text=text)))
    if accepted is None:
        return
    assert text.strip()
    if fmt == "integer":
        int(text)
    if fmt == "number":
        assert math.isfinite(float(text))
    if fmt == "email":
        assert "@" in text
    if fmt == "url":
        assert text.startswith(("http://", "https://"))
    if pattern is not None:
        assert re.fullmatch(pattern, text)
