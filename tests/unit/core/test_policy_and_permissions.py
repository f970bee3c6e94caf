"""The core's pure rules: who may call what where, what a standing permission covers, what
voids an approval, and what to do after each attempt of an execution."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lineup.core import binding, executions, permissions, policy
from lineup.core.canonical import canonical, digest
from lineup.protocol.capabilities import Effect
from lineup.protocol.errors import ErrorCode

IN_PROJECT = policy.Where("prj_1", "editor")
SAFE = st.integers(-(2**53) + 1, 2**53 - 1)


def allow(capability: str = "ledger.*", **kw: Any) -> policy.Rule:
    return policy.Rule(id=kw.pop("id", "r-allow"), capability=capability, effect="allow", **kw)


def deny(capability: str, **kw: Any) -> policy.Rule:
    return policy.Rule(id=kw.pop("id", "r-deny"), capability=capability, effect="deny", **kw)


def decide(
    rules: list[policy.Rule],
    capability: str,
    effect: Effect,
    where: policy.Where,
    instance: str = "books",
) -> policy.Verdict:
    return policy.decide(
        rules, capability=capability, effect=effect, instance=instance, where=where
    )


def test_reads_are_allowed_and_writes_refused_when_no_rule_speaks() -> None:
    assert decide([], "ledger.balance.read", Effect.READ, IN_PROJECT).allowed
    verdict = decide([], "ledger.entry.post", Effect.WRITE, IN_PROJECT)
    assert not verdict.allowed and verdict.code == "default_write"


def test_a_write_is_never_possible_in_a_personal_conversation_whatever_the_rules() -> None:
    verdict = decide([allow("*")], "ledger.entry.post", Effect.WRITE, policy.Where(None, None))
    assert not verdict.allowed and verdict.code == "personal_write"
    assert decide([], "ledger.balance.read", Effect.READ, policy.Where(None, None)).allowed


def test_someone_outside_the_project_gets_nothing_there() -> None:
    verdict = decide([allow("*")], "ledger.balance.read", Effect.READ, policy.Where("p", None))
    assert not verdict.allowed and verdict.code == "not_member"


def test_a_project_rule_speaks_before_a_workspace_rule() -> None:
    rules = [deny("ledger.*"), allow("ledger.entry.post", project_id="prj_1")]
    assert decide(rules, "ledger.entry.post", Effect.WRITE, IN_PROJECT).allowed
    assert not decide(
        rules, "ledger.entry.post", Effect.WRITE, policy.Where("prj_2", "owner")
    ).allowed


def test_within_one_scope_a_deny_wins() -> None:
    rules = [allow("ledger.*"), deny("ledger.entry.post")]
    verdict = decide(rules, "ledger.entry.post", Effect.WRITE, IN_PROJECT)
    assert not verdict.allowed and verdict.rule_id == "r-deny"


def test_rules_hold_only_for_their_roles_and_instance() -> None:
    rules = [allow("ledger.*", roles=("owner",), instance="books")]
    assert decide(rules, "ledger.x", Effect.WRITE, policy.Where("p", "owner")).allowed
    assert not decide(rules, "ledger.x", Effect.WRITE, policy.Where("p", "viewer")).allowed
    assert not decide(rules, "ledger.x", Effect.WRITE, policy.Where("p", "owner"), "other").allowed


@pytest.mark.parametrize(
    ("pattern", "capability", "matches"),
    [
        ("*", "a.b", True),
        ("a.*", "a.b.c", True),
        ("a.*", "ab.c", False),
        ("a.b", "a.b", True),
        ("a.b", "a.b.c", False),
    ],
)
def test_capability_patterns(pattern: str, capability: str, matches: bool) -> None:
    assert policy.matches_capability(pattern, capability) is matches


@pytest.mark.parametrize("pattern", ["", ".*", "a..b", "a.*.b", "9a.b", "a b"])
def test_patterns_that_mean_nothing_are_invalid(pattern: str) -> None:
    assert not policy.valid_pattern(pattern)


# --- standing permissions -------------------------------------------------------------------


def standing(**kw: Any) -> permissions.Standing:
    values: dict[str, Any] = {
        "id": "prm",
        "project_id": "prj_1",
        "capability": "ledger.entry.post",
        "instance": "books",
        "bounds": {"amount": {"max": 100}},
        "expires_at_ms": 10_000,
        "max_calls": 3,
        "calls_used": 0,
        "revoked": False,
    }
    values.update(kw)
    return permissions.Standing(**values)


def covers(p: permissions.Standing, params: dict[str, Any], now: int = 0, **kw: Any) -> bool:
    where = {"project_id": "prj_1", "capability": "ledger.entry.post", "instance": "books"}
    where.update(kw)
    return permissions.covers(p, params=params, now_ms=now, **where)


def test_a_standing_permission_covers_calls_inside_its_bounds_only() -> None:
    p = standing()
    assert covers(p, {"amount": 100})
    assert not covers(p, {"amount": 101})
    assert not covers(p, {"memo": "no amount"})
    assert not covers(p, {"amount": 1}, project_id="prj_2")
    assert not covers(p, {"amount": 1}, instance="other")
    assert not covers(p, {"amount": 1}, capability="ledger.note.add")


def test_a_standing_permission_ends_at_its_time_its_calls_or_its_revocation() -> None:
    assert not covers(standing(), {"amount": 1}, now=10_000)
    assert not covers(standing(calls_used=3), {"amount": 1})
    assert not covers(standing(revoked=True), {"amount": 1})
    assert covers(standing(expires_at_ms=None, max_calls=None), {"amount": 1}, now=10**12)


@given(
    value=st.integers(-1000, 1000),
    low=st.none() | st.integers(-1000, 1000),
    high=st.none() | st.integers(-1000, 1000),
)
def test_min_max_bounds_agree_with_arithmetic(
    value: int, low: int | None, high: int | None
) -> None:
    bound: dict[str, int] = {}
    if low is not None:
        bound["min"] = low
    if high is not None:
        bound["max"] = high
    if not bound or (low is not None and high is not None and low > high):
        with pytest.raises(permissions.BoundsError):
            permissions.check_bounds({"amount": bound})
        return
    checked = permissions.check_bounds({"amount": bound})
    inside = (low is None or value >= low) and (high is None or value <= high)
    assert (permissions.outside(checked, {"amount": value}) is None) is inside


@given(st.dictionaries(st.text(min_size=1, max_size=5), SAFE | st.text(), max_size=5))
def test_equals_bounds_accept_exactly_the_value(params: dict[str, Any]) -> None:
    bounds = permissions.check_bounds({k: {"equals": v} for k, v in params.items()})
    assert permissions.outside(bounds, params) is None
    for key in params:
        changed = {**params, key: [params[key]]}
        assert permissions.outside(bounds, changed) is not None


@pytest.mark.parametrize(
    "bounds",
    [
        {"amount": {}},
        {"amount": {"max": "100"}},
        {"amount": {"between": [1, 2]}},
        {"amount": {"in": []}},
        {"": {"equals": 1}},
        {"amount": {"min": True}},
        {"amount": {"equals": 2**60}},
    ],
)
def test_bounds_that_cannot_be_checked_are_refused(bounds: dict[str, Any]) -> None:
    with pytest.raises(permissions.BoundsError):
        permissions.check_bounds(bounds)


# --- binding ---------------------------------------------------------------------------------

APPROVED = binding.Binding("agent_1", "books", digest({"amount": 5}), "v3", 1_000)


@pytest.mark.parametrize(
    ("now", "why"),
    [
        (binding.Binding("agent_2", "books", APPROVED.params_digest, "v3", 1_000), "agent"),
        (binding.Binding("agent_1", "other", APPROVED.params_digest, "v3", 1_000), "instance"),
        (binding.Binding("agent_1", "books", digest({"amount": 6}), "v3", 1_000), "parameters"),
        (binding.Binding("agent_1", "books", APPROVED.params_digest, "v4", 1_000), "v3, now v4"),
    ],
)
def test_a_change_to_anything_an_approval_is_bound_to_voids_it(
    now: binding.Binding, why: str
) -> None:
    reason = binding.broken(APPROVED, now, 0)
    assert reason is not None and why in reason


def test_an_approval_holds_until_its_expiry() -> None:
    assert binding.broken(APPROVED, APPROVED, 999) is None
    assert binding.broken(APPROVED, APPROVED, 1_000) == "The approval expired."


@given(st.dictionaries(st.text(max_size=8), SAFE | st.text() | st.booleans(), max_size=8))
def test_the_digest_does_not_depend_on_key_order(params: dict[str, Any]) -> None:
    reordered = dict(reversed(list(params.items())))
    assert digest(params) == digest(reordered)
    assert canonical(params) == canonical(reordered)


def test_the_canonical_form_is_rfc_8785() -> None:
    # RFC 8785 §3.2.2.3: numbers as ECMAScript writes them; keys by UTF-16 code units
    assert canonical({"b": 1.0, "a": [1e30, 0.1], "é": "x", "\u20ac": 1}) == (
        '{"a":[1e+30,0.1],"b":1,"é":"x","€":1}'.encode()
    )
    with pytest.raises(ValueError):
        canonical({"too big": 2**60})


# --- executions --------------------------------------------------------------------------------


def test_after_a_timeout_a_receipt_settles_it() -> None:
    assert executions.after_timeout(receipt_found=True, idempotent_replay=False, attempt=1) is None


def test_after_a_timeout_with_no_receipt_only_a_safe_replay_is_retried() -> None:
    retry = executions.after_timeout(receipt_found=False, idempotent_replay=True, attempt=1)
    assert isinstance(retry, executions.Retry) and retry.attempt == 2
    unknown = executions.after_timeout(receipt_found=False, idempotent_replay=False, attempt=1)
    assert isinstance(unknown, executions.Unknown)
    last = executions.after_timeout(
        receipt_found=False, idempotent_replay=True, attempt=executions.MAX_ATTEMPTS
    )
    assert isinstance(last, executions.Unknown)


@pytest.mark.parametrize("code", list(ErrorCode))
def test_only_rate_limited_and_unavailable_are_retried(code: ErrorCode) -> None:
    choice = executions.after_error(code, "x", attempt=1)
    assert isinstance(choice, executions.Retry) is (
        code in (ErrorCode.RATE_LIMITED, ErrorCode.UNAVAILABLE)
    )
    final = executions.after_error(code, "x", attempt=executions.MAX_ATTEMPTS)
    assert isinstance(final, executions.Fail)


def test_a_resumed_execution_asks_for_its_receipt_first() -> None:
    assert executions.resume(receipt_found=True, idempotent_replay=False) == "receipt"
    assert executions.resume(receipt_found=False, idempotent_replay=True) == "call"
    assert executions.resume(receipt_found=False, idempotent_replay=False) == "unknown"
