"""Per-kind rules for interaction requests and answers.

Messages are written for the person holding the card (or the agent author reading a rejected
request): each one says what is wrong and, where it helps, what would be right.
Import the public functions from ``lineup.domain.interactions``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from lineup.domain._interaction_model import (
    APPROVE_OPTION_ID,
    OTHER_OPTION_ID,
    InteractionKind,
    InteractionRequest,
    InteractionResponse,
    Option,
    default_approval_options,
    default_review_options,
)
from lineup.domain.errors import DomainError
from lineup.protocol import fields

RISKS = frozenset({"low", "medium", "high"})
INPUT_FORMATS = frozenset(fields.INPUT_FORMATS)
MIN_CHOICE_OPTIONS = 2
MAX_CHOICE_OPTIONS = 5
_REVIEW_IDS = frozenset(o.id for o in default_review_options())
_K = InteractionKind


def validate_request(req: InteractionRequest) -> InteractionRequest:
    """Check a request and return it with kind coerced and default options filled in.

    Store the returned request, not the argument, so later answers are checked against the
    options the person was actually shown.
    """
    kind = _coerce_kind(req.kind)
    options: object = req.options
    if isinstance(options, list):
        options = tuple(options)
    if not options and kind is _K.APPROVAL:
        options = default_approval_options()
    elif not options and kind is _K.REVIEW:
        options = default_review_options()
    _check_common(req)
    checked = replace(req, kind=kind, options=_check_options(options))
    _check_kind_fields(checked)
    return checked


def validate_response(req: InteractionRequest, resp: InteractionResponse) -> InteractionResponse:
    """Check an answer and return its canonical form, the one to store and compare.

    Canonical means a multi-select answer always uses ``option_ids`` in the order the options
    were shown, so the same selection sent again in another order is still "the same answer".
    """
    req = validate_request(req)
    option_id, option_ids, text = _answer_fields(resp)
    edited = _edited_input(req, resp, option_id)
    if req.kind is _K.INPUT:
        if option_id is not None or option_ids is not None:
            raise _invalid("This question takes a typed answer, not an option.")
        _check_input(req, text)
        return InteractionResponse(text=text)
    ids = [o.id for o in req.options]
    if req.kind is _K.CHOICE:
        return _check_choice(req, ids, option_id, option_ids, text)
    if option_ids is not None or option_id is None:
        raise _invalid(f"Pick exactly one option: {', '.join(ids)}.")
    _check_known(option_id, ids)
    if req.kind is _K.REVIEW and option_id == "request_changes" and not (text and text.strip()):
        raise _invalid("Say what should change: requesting changes needs a comment.")
    return InteractionResponse(option_id=option_id, text=text, input=edited)


def _edited_input(
    req: InteractionRequest, resp: InteractionResponse, option_id: str | None
) -> Mapping[str, Any] | None:
    """The edited input an answer carries, checked: only for an editable approval, only
    with its approving option, and only a JSON object."""
    edited = resp.input
    if edited is None:
        return None
    if not req.editable_input:
        raise _invalid("This request's input cannot be edited; answer without an input.")
    if option_id != APPROVE_OPTION_ID:
        raise _invalid(f"An edited input goes with {APPROVE_OPTION_ID!r}: allow it, or deny.")
    if not isinstance(edited, Mapping) or not all(isinstance(k, str) for k in edited):
        raise _invalid("The edited input must be a JSON object.")
    return edited


def _check_common(req: InteractionRequest) -> None:
    if not isinstance(req.id, str) or not req.id.strip():
        raise _invalid("The request needs an id.")
    if not isinstance(req.title, str) or not req.title.strip():
        raise _invalid("The request needs a title that tells the person what is being asked.")
    if req.description is not None and not isinstance(req.description, str):
        raise _invalid("The description must be text.")
    if req.risk is not None and req.risk not in RISKS:
        raise _invalid(f"Risk must be low, medium or high; got {req.risk!r}.")
    exp = req.expires_at_ms
    if exp is not None and (isinstance(exp, bool) or not isinstance(exp, int) or exp < 0):
        raise _invalid(f"The expiry must be a time in whole milliseconds; got {exp!r}.")
    if not isinstance(req.allow_other, bool) or not isinstance(req.multiple, bool):
        raise _invalid("allow_other and multiple must be true or false.")


def _check_options(options: object) -> tuple[Option, ...]:
    if not isinstance(options, tuple) or not all(isinstance(o, Option) for o in options):
        raise _invalid("Options must be a list of options, each with an id and a label.")
    seen: set[str] = set()
    for o in options:
        if not isinstance(o.id, str) or not o.id.strip():
            raise _invalid("Every option needs an id.")
        if not isinstance(o.label, str) or not o.label.strip():
            raise _invalid(f"Option {o.id!r} needs a label the person can read.")
        if o.style is not None and not isinstance(o.style, str):
            raise _invalid(f"The style of option {o.id!r} must be text.")
        if not isinstance(o.recommended, bool):
            raise _invalid(f"'recommended' on option {o.id!r} must be true or false.")
        if o.id in seen:
            raise _invalid(f"Option id {o.id!r} is used twice; ids must be unique.")
        seen.add(o.id)
    if sum(o.recommended for o in options) > 1:
        raise _invalid("At most one option can be marked as recommended.")
    return options


def _check_kind_fields(req: InteractionRequest) -> None:
    if req.kind is not _K.CHOICE and (req.allow_other or req.multiple):
        raise _invalid("Only a choice can allow an 'other' answer or several answers.")
    if req.kind is not _K.INPUT and (req.input_format is not None or req.pattern is not None):
        raise _invalid("Only an input question takes an input format or a pattern.")
    ids = {o.id for o in req.options}
    if req.editable_input and (req.kind is not _K.APPROVAL or APPROVE_OPTION_ID not in ids):
        raise _invalid(
            f"Only an approval with an {APPROVE_OPTION_ID!r} option can offer its input for "
            "editing."
        )
    if req.kind is _K.APPROVAL and len(ids) < 2:
        raise _invalid("An approval needs at least two options, so the person can decline.")
    if req.kind is _K.REVIEW and ids != _REVIEW_IDS:
        raise _invalid("A review's options must be exactly 'approve' and 'request_changes'.")
    if req.kind is _K.CHOICE:
        if not MIN_CHOICE_OPTIONS <= len(ids) <= MAX_CHOICE_OPTIONS:
            raise _invalid(
                f"A choice needs {MIN_CHOICE_OPTIONS} to {MAX_CHOICE_OPTIONS} options; "
                f"got {len(ids)}."
            )
        if req.allow_other and OTHER_OPTION_ID in ids:
            raise _invalid(f"Option id {OTHER_OPTION_ID!r} is reserved for the free-text answer.")
    if req.kind is _K.INPUT:
        _check_input_request(req)


def _check_input_request(req: InteractionRequest) -> None:
    if req.options:
        raise _invalid("An input question takes a typed answer; it cannot have options.")
    if req.input_format is not None and req.input_format not in INPUT_FORMATS:
        known = ", ".join(sorted(INPUT_FORMATS))
        raise _invalid(f"Unknown input format {req.input_format!r}; expected one of: {known}.")
    if req.pattern is not None:
        if not isinstance(req.pattern, str):
            raise _invalid("The pattern must be text (a regular expression).")
        problem = fields.pattern_problem(req.pattern)
        if problem is not None:
            raise _invalid(problem)


def _answer_fields(resp: object) -> tuple[str | None, tuple[str, ...] | None, str | None]:
    if not isinstance(resp, InteractionResponse):
        raise _invalid("The answer is missing.")
    option_id, option_ids, text = resp.option_id, resp.option_ids, resp.text
    if option_id is not None and not isinstance(option_id, str):
        raise _invalid("The chosen option must be given by its id.")
    if option_ids is not None:
        if not isinstance(option_ids, tuple | list) or not all(
            isinstance(i, str) for i in option_ids
        ):
            raise _invalid("The chosen options must be given as a list of ids.")
        option_ids = tuple(option_ids)
    if text is not None and not isinstance(text, str):
        raise _invalid("The answer's text must be text.")
    return option_id, option_ids, text


def _check_choice(
    req: InteractionRequest,
    ids: list[str],
    option_id: str | None,
    option_ids: tuple[str, ...] | None,
    text: str | None,
) -> InteractionResponse:
    allowed = [*ids, OTHER_OPTION_ID] if req.allow_other else ids
    if option_id is not None and option_ids is not None:
        raise _invalid("Send either one option or a list of options, not both.")
    if option_ids is not None and not req.multiple:
        raise _invalid("This choice takes a single answer; pick one option.")
    selected = option_ids if option_ids is not None else (option_id,) if option_id else ()
    if not selected:
        raise _invalid(f"Pick an option: {', '.join(allowed)}.")
    if len(set(selected)) != len(selected):
        raise _invalid("An option was picked more than once.")
    for picked in selected:
        _check_known(picked, allowed)
    if OTHER_OPTION_ID in selected:
        if not (text and text.strip()):
            raise _invalid("Say what 'other' is: the text is empty.")
    elif text is not None:
        raise _invalid("Text is only accepted with the 'other' answer.")
    if req.multiple:
        ordered = tuple(i for i in allowed if i in selected)
        return InteractionResponse(option_ids=ordered, text=text)
    return InteractionResponse(option_id=selected[0], text=text)


def _check_input(req: InteractionRequest, text: str | None) -> None:
    problem = fields.input_problem(req.input_format, text or "", pattern=req.pattern)
    if problem is not None:
        raise _invalid(problem)


def _check_known(picked: str, allowed: list[str]) -> None:
    if picked not in allowed:
        raise _invalid(f"{picked!r} is not one of the options: {', '.join(allowed)}.")


def _coerce_kind(value: InteractionKind | str) -> InteractionKind:
    try:
        return InteractionKind(value)
    except ValueError:
        known = ", ".join(k.value for k in InteractionKind)
        raise _invalid(f"Unknown interaction kind {value!r}; expected one of: {known}.") from None


def _invalid(message: str) -> DomainError:
    return DomainError("invalid_argument", message)
