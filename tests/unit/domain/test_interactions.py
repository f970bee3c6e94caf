from dataclasses import replace

import pytest

from lineup.domain import (
    DomainError,
    InteractionKind,
    InteractionRequest,
    InteractionResponse,
    InteractionState,
    InteractionStatus,
    Option,
    cancel,
    default_approval_options,
    default_review_options,
    expire,
    is_due,
    open_interaction,
    respond,
    validate_request,
    validate_response,
)

K = InteractionKind
R = InteractionResponse
T0 = 1_785_000_000_000  # 2026-07-25T17:20:00Z


def _request(kind: InteractionKind, **kw: object) -> InteractionRequest:
    fields: dict[str, object] = {"id": f"int_{kind}", "kind": kind, "title": f"A {kind}?"}
    fields.update(kw)
    return InteractionRequest(**fields)  # type: ignore[arg-type]


def approval(**kw: object) -> InteractionRequest:
    return _request(K.APPROVAL, **kw)


def choice(**kw: object) -> InteractionRequest:
    abc = (Option("a", "Alpha"), Option("b", "Beta", recommended=True), Option("c", "Gamma"))
    return _request(K.CHOICE, **{"options": abc, **kw})


def text_input(**kw: object) -> InteractionRequest:
    return _request(K.INPUT, **kw)


def review(**kw: object) -> InteractionRequest:
    return _request(K.REVIEW, **kw)


def invalid(fn: object, *args: object) -> DomainError:
    with pytest.raises(DomainError) as info:
        fn(*args)  # type: ignore[operator]
    assert info.value.code == "invalid_argument", info.value.message
    return info.value


# --- requests -----------------------------------------------------------------------------


def test_an_approval_without_options_gets_approve_and_reject() -> None:
    checked = validate_request(approval())
    assert checked.options == default_approval_options()
    assert [o.id for o in checked.options] == ["approve", "reject"]


def test_an_approval_keeps_its_own_options() -> None:
    opts = (Option("go", "Ship it", style="primary"), Option("stop", "Hold", style="danger"))
    assert validate_request(approval(options=opts)).options == opts


def test_an_approval_with_a_single_option_leaves_no_way_to_decline() -> None:
    invalid(validate_request, approval(options=(Option("ok", "OK"),)))


def test_a_review_without_options_gets_approve_and_request_changes() -> None:
    assert validate_request(review()).options == default_review_options()


def test_a_review_with_other_option_ids_is_invalid() -> None:
    invalid(validate_request, review(options=(Option("approve", "A"), Option("nope", "N"))))


def test_a_request_needs_a_title() -> None:
    for title in ("", "   "):
        invalid(validate_request, approval(title=title))


def test_a_request_kind_sent_as_a_string_is_understood_and_an_unknown_one_is_not() -> None:
    req = InteractionRequest(id="i", kind="approval", title="t")  # type: ignore[arg-type]
    assert validate_request(req).kind is K.APPROVAL
    err = invalid(validate_request, replace(req, kind="poll"))  # type: ignore[arg-type]
    assert "poll" in err.message


@pytest.mark.parametrize("risk", [None, "low", "medium", "high"])
def test_known_risk_levels_are_accepted(risk: str | None) -> None:
    assert validate_request(approval(risk=risk)).risk == risk


def test_an_unknown_risk_level_is_invalid() -> None:
    invalid(validate_request, approval(risk="extreme"))


def test_a_negative_or_fractional_expiry_is_invalid() -> None:
    invalid(validate_request, approval(expires_at_ms=-1))
    invalid(validate_request, approval(expires_at_ms=1.5))


@pytest.mark.parametrize("count", [2, 3, 4, 5])
def test_a_choice_has_two_to_five_options(count: int) -> None:
    opts = tuple(Option(f"o{i}", f"Option {i}") for i in range(count))
    assert validate_request(choice(options=opts)).options == opts


@pytest.mark.parametrize("count", [0, 1, 6])
def test_a_choice_with_too_few_or_too_many_options_is_invalid(count: int) -> None:
    opts = tuple(Option(f"o{i}", f"Option {i}") for i in range(count))
    invalid(validate_request, choice(options=opts))


def test_choice_option_ids_must_be_unique() -> None:
    err = invalid(validate_request, choice(options=(Option("a", "A"), Option("a", "Again"))))
    assert "'a'" in err.message


def test_at_most_one_option_is_recommended() -> None:
    opts = (Option("a", "A", recommended=True), Option("b", "B", recommended=True))
    invalid(validate_request, choice(options=opts))


def test_options_need_an_id_and_a_label() -> None:
    invalid(validate_request, choice(options=(Option("", "A"), Option("b", "B"))))
    invalid(validate_request, choice(options=(Option("a", " "), Option("b", "B"))))


def test_other_is_reserved_when_a_choice_allows_free_text() -> None:
    opts = (Option("a", "A"), Option("other", "Something else"))
    invalid(validate_request, choice(options=opts, allow_other=True))
    assert validate_request(choice(options=opts)).options == opts


def test_choice_only_fields_on_other_kinds_are_invalid() -> None:
    invalid(validate_request, approval(multiple=True))
    invalid(validate_request, review(allow_other=True))


def test_input_only_fields_on_other_kinds_are_invalid() -> None:
    invalid(validate_request, approval(input_format="email"))
    invalid(validate_request, choice(pattern="a+"))


@pytest.mark.parametrize("fmt", [None, "text", "email", "url", "number", "integer"])
def test_known_input_formats_are_accepted(fmt: str | None) -> None:
    assert validate_request(text_input(input_format=fmt)).input_format == fmt


def test_an_unknown_input_format_is_invalid() -> None:
    invalid(validate_request, text_input(input_format="phone"))


@pytest.mark.parametrize("pattern", ["(", "a{99999999999}", "[z-a]"])
def test_an_input_pattern_that_does_not_compile_is_invalid(pattern: str) -> None:
    err = invalid(validate_request, text_input(pattern=pattern))
    assert "regular expression" in err.message


def test_an_input_question_cannot_have_options() -> None:
    invalid(validate_request, text_input(options=(Option("a", "A"), Option("b", "B"))))


# --- answers ------------------------------------------------------------------------------


@pytest.mark.parametrize("option_id", ["approve", "reject"])
def test_an_approval_is_answered_with_one_of_its_options(option_id: str) -> None:
    assert validate_response(approval(), R(option_id=option_id)) == R(option_id=option_id)


def test_an_approval_may_carry_a_note() -> None:
    resp = R(option_id="reject", text="not on a Friday")
    assert validate_response(approval(), resp) == resp


def test_an_approval_answer_must_name_a_known_option() -> None:
    err = invalid(validate_response, approval(), R(option_id="maybe"))
    assert "approve, reject" in err.message
    invalid(validate_response, approval(), R())
    invalid(validate_response, approval(), R(option_ids=("approve",)))


def test_an_editable_approval_is_allowed_as_asked_with_its_input_changed_or_denied() -> None:
    editable = approval(editable_input=True)
    edited = {"path": "notes.txt", "text": "final"}
    assert validate_response(editable, R(option_id="approve")) == R(option_id="approve")
    assert validate_response(editable, R(option_id="approve", input=edited)) == R(
        option_id="approve", input=edited
    )
    denied = R(option_id="reject", text="not that file")
    assert validate_response(editable, denied) == denied


def test_an_edited_input_goes_only_with_allowing_an_editable_approval() -> None:
    edited = {"command": "ls"}
    err = invalid(validate_response, approval(), R(option_id="approve", input=edited))
    assert "cannot be edited" in err.message
    err = invalid(
        validate_response, approval(editable_input=True), R(option_id="reject", input=edited)
    )
    assert "'approve'" in err.message
    invalid(validate_response, choice(), R(option_id="a", input=edited))
    invalid(validate_response, approval(editable_input=True), R(option_id="approve", input=[1]))


def test_only_an_approval_with_an_approve_option_offers_its_input_for_editing() -> None:
    invalid(validate_request, review(editable_input=True))
    own = (Option("go", "Go"), Option("stop", "Stop"))
    invalid(validate_request, approval(editable_input=True, options=own))
    assert validate_request(approval(editable_input=True)).editable_input


def test_the_same_edited_input_again_is_the_same_answer_and_another_one_a_conflict() -> None:
    state = open_interaction(approval(editable_input=True))
    answer = R(option_id="approve", input={"text": "a"})
    first = respond(state, answer, by="ada", now_ms=T0)
    assert first.changed and first.state.response == answer
    assert not respond(
        first.state, R(option_id="approve", input={"text": "a"}), by="ada", now_ms=T0 + 1
    ).changed
    with pytest.raises(DomainError) as info:
        respond(first.state, R(option_id="approve", input={"text": "b"}), by="ada", now_ms=T0 + 2)
    assert info.value.code == "conflict"


def test_a_single_choice_is_answered_with_one_option() -> None:
    assert validate_response(choice(), R(option_id="b")) == R(option_id="b")


def test_a_single_choice_rejects_unknown_several_or_no_options() -> None:
    invalid(validate_response, choice(), R(option_id="z"))
    invalid(validate_response, choice(), R(option_ids=("a", "b")))
    invalid(validate_response, choice(), R())
    invalid(validate_response, choice(), R(option_id="a", option_ids=("a",)))


def test_a_multiple_choice_takes_a_non_empty_subset_in_the_order_shown() -> None:
    req = choice(multiple=True)
    assert validate_response(req, R(option_ids=("c", "a"))) == R(option_ids=("a", "c"))
    assert validate_response(req, R(option_id="b")) == R(option_ids=("b",))
    invalid(validate_response, req, R(option_ids=()))
    invalid(validate_response, req, R(option_ids=("a", "a")))
    invalid(validate_response, req, R(option_ids=("a", "zz")))


def test_other_with_text_is_accepted_only_when_the_choice_allows_it() -> None:
    resp = R(option_id="other", text="Frankfurt")
    assert validate_response(choice(allow_other=True), resp) == resp
    invalid(validate_response, choice(), resp)


def test_other_without_text_asks_for_the_text() -> None:
    for text in (None, "", "  "):
        err = invalid(validate_response, choice(allow_other=True), R(option_id="other", text=text))
        assert "other" in err.message


def test_text_on_a_choice_is_only_for_other() -> None:
    invalid(validate_response, choice(allow_other=True), R(option_id="a", text="hi"))


def test_a_multiple_choice_with_other_keeps_other_last() -> None:
    req = choice(multiple=True, allow_other=True)
    resp = R(option_ids=("other", "b"), text="and Oslo")
    assert validate_response(req, resp) == R(option_ids=("b", "other"), text="and Oslo")


def test_an_input_answer_needs_text() -> None:
    for text in (None, "", " \n"):
        invalid(validate_response, text_input(), R(text=text))
    invalid(validate_response, text_input(), R(option_id="a", text="x"))
    assert validate_response(text_input(), R(text="hello")) == R(text="hello")


@pytest.mark.parametrize(
    ("fmt", "good", "bad"),
    [
        ("email", ["ada@example.com", "a.b+c@sub.example.org"], ["ada", "ada@", "a b@x.io"]),
        (
            "url",
            ["https://example.com", "http://localhost:8080/x?y=1"],
            ["example.com", "ftp://example.com", "https://", "http://[::1", "https://a b.c"],
        ),
        ("number", ["3", "-2.5", "1e3", " 4 "], ["three", "nan", "inf", "1,5"]),
        ("integer", ["3", "-12", "0"], ["3.0", "1e3", "x"]),
        ("text", ["anything at all"], []),
    ],
)
def test_input_formats_are_checked(fmt: str, good: list[str], bad: list[str]) -> None:
    req = text_input(input_format=fmt)
    for text in good:
        assert validate_response(req, R(text=text)).text == text
    for text in bad:
        invalid(validate_response, req, R(text=text))


def test_an_input_pattern_must_match_the_whole_answer() -> None:
    req = text_input(pattern=r"[A-Z]{3}-\d+")
    assert validate_response(req, R(text="ABC-12")).text == "ABC-12"
    invalid(validate_response, req, R(text="ABC-12x"))
    invalid(validate_response, req, R(text="xABC-12"))


def test_a_review_is_approved_with_or_without_a_comment() -> None:
    assert validate_response(review(), R(option_id="approve")) == R(option_id="approve")
    assert validate_response(review(), R(option_id="approve", text="nice")).text == "nice"


def test_requesting_changes_needs_a_comment() -> None:
    for text in (None, "", "  "):
        err = invalid(validate_response, review(), R(option_id="request_changes", text=text))
        assert "comment" in err.message
    resp = R(option_id="request_changes", text="rename the flag")
    assert validate_response(review(), resp) == resp


def test_a_review_answer_must_be_approve_or_request_changes() -> None:
    invalid(validate_response, review(), R(option_id="reject"))


def test_answers_with_wrong_types_are_invalid_not_crashes() -> None:
    invalid(validate_response, approval(), R(option_id=1))  # type: ignore[arg-type]
    invalid(validate_response, choice(multiple=True), R(option_ids="ab"))  # type: ignore[arg-type]
    invalid(validate_response, text_input(), R(text=42))  # type: ignore[arg-type]


# --- lifecycle ----------------------------------------------------------------------------


def test_a_request_is_open_until_answered() -> None:
    state = open_interaction(approval())
    assert state.status is InteractionStatus.REQUESTED
    assert state.response is None


def test_the_first_answer_resolves_the_request_and_records_who_and_when() -> None:
    out = respond(open_interaction(approval()), R(option_id="approve"), by="ada", now_ms=T0)
    assert out.changed
    assert out.state.status is InteractionStatus.RESOLVED
    assert out.state.response == R(option_id="approve")
    assert (out.state.responded_by, out.state.responded_at_ms) == ("ada", T0)


def test_an_invalid_answer_leaves_the_request_open() -> None:
    state = open_interaction(approval())
    invalid(lambda: respond(state, R(option_id="maybe"), by="ada", now_ms=T0))
    assert state.status is InteractionStatus.REQUESTED


def test_the_same_answer_again_is_a_no_op_whoever_sends_it() -> None:
    first = respond(open_interaction(approval()), R(option_id="approve"), by="ada", now_ms=T0)
    for by in ("ada", "grace"):
        again = respond(first.state, R(option_id="approve"), by=by, now_ms=T0 + 5_000)
        assert not again.changed
        assert again.state == first.state


def test_the_same_multi_select_in_another_order_is_the_same_answer() -> None:
    state = open_interaction(choice(multiple=True))
    first = respond(state, R(option_ids=("a", "c")), by="ada", now_ms=T0)
    again = respond(first.state, R(option_ids=("c", "a")), by="ada", now_ms=T0 + 1)
    assert not again.changed


def test_second_different_answer_is_a_conflict_naming_who_answered_first() -> None:
    first = respond(open_interaction(approval()), R(option_id="approve"), by="ada", now_ms=T0)
    with pytest.raises(DomainError) as info:
        respond(first.state, R(option_id="reject"), by="grace", now_ms=T0 + 1)
    err = info.value
    assert err.code == "conflict"
    assert "ada" in err.message
    assert "2026-07-25T17:20:00Z" in err.message
    assert err.details == {"respondedBy": "ada", "respondedAt": T0}


def test_a_different_note_is_a_different_answer() -> None:
    first = respond(open_interaction(approval()), R(option_id="approve"), by="ada", now_ms=T0)
    with pytest.raises(DomainError) as info:
        respond(first.state, R(option_id="approve", text="ok"), by="ada", now_ms=T0)
    assert info.value.code == "conflict"


def test_an_invalid_second_answer_is_still_reported_as_already_answered() -> None:
    first = respond(open_interaction(approval()), R(option_id="approve"), by="ada", now_ms=T0)
    with pytest.raises(DomainError) as info:
        respond(first.state, R(option_id="bogus"), by="grace", now_ms=T0)
    assert info.value.code == "conflict"


def test_an_answer_needs_a_responder_and_an_integer_time() -> None:
    state = open_interaction(approval())
    invalid(lambda: respond(state, R(option_id="approve"), by="", now_ms=T0))
    invalid(lambda: respond(state, R(option_id="approve"), by="ada", now_ms=1.5))  # type: ignore[arg-type]


def test_waiting_without_an_expiry_is_never_an_error() -> None:
    state = open_interaction(approval())
    far_future = T0 + 10 * 365 * 24 * 3600 * 1000
    assert not is_due(state, far_future)
    assert respond(state, R(option_id="approve"), by="ada", now_ms=far_future).changed
    with pytest.raises(DomainError) as info:
        expire(state, far_future)
    assert info.value.code == "conflict"


def test_an_answer_just_before_the_expiry_counts() -> None:
    state = open_interaction(approval(expires_at_ms=T0))
    assert respond(state, R(option_id="approve"), by="ada", now_ms=T0 - 1).changed


def test_an_answer_at_or_after_the_expiry_is_a_conflict_saying_it_expired() -> None:
    state = open_interaction(approval(expires_at_ms=T0))
    for now in (T0, T0 + 1):
        assert is_due(state, now)
        with pytest.raises(DomainError) as info:
            respond(state, R(option_id="approve"), by="ada", now_ms=now)
        assert info.value.code == "conflict"
        assert "expired" in info.value.message
        assert info.value.details["reason"] == "expired"


def test_a_due_request_expires_once() -> None:
    state = open_interaction(approval(expires_at_ms=T0))
    out = expire(state, T0)
    assert out.changed
    assert out.state.status is InteractionStatus.EXPIRED
    assert not expire(out.state, T0 + 1).changed
    with pytest.raises(DomainError) as info:
        respond(out.state, R(option_id="approve"), by="ada", now_ms=T0 + 2)
    assert info.value.code == "conflict"


def test_expiring_too_early_is_a_conflict() -> None:
    state = open_interaction(approval(expires_at_ms=T0))
    with pytest.raises(DomainError) as info:
        expire(state, T0 - 1)
    assert info.value.code == "conflict"


def test_an_answered_request_does_not_expire_later() -> None:
    state = open_interaction(approval(expires_at_ms=T0))
    answered = respond(state, R(option_id="approve"), by="ada", now_ms=T0 - 10).state
    out = expire(answered, T0 + 1)
    assert not out.changed
    assert out.state.status is InteractionStatus.RESOLVED
    assert not respond(answered, R(option_id="approve"), by="ada", now_ms=T0 + 1).changed


def test_cancelling_an_open_request_closes_it_for_answers() -> None:
    out = cancel(open_interaction(choice()))
    assert out.changed
    assert out.state.status is InteractionStatus.CANCELLED
    with pytest.raises(DomainError) as info:
        respond(out.state, R(option_id="a"), by="ada", now_ms=T0)
    assert info.value.code == "conflict"
    assert "cancelled" in info.value.message


@pytest.mark.parametrize(
    "status",
    [InteractionStatus.RESOLVED, InteractionStatus.EXPIRED, InteractionStatus.CANCELLED],
)
def test_cancelling_a_finished_request_changes_nothing(status: InteractionStatus) -> None:
    state = InteractionState(request=validate_request(approval()), status=status)
    out = cancel(state)
    assert not out.changed
    assert out.state is state
