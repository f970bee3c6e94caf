"""Redaction of diagnostic lines: whatever the text around them, secrets do not come out."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from lineup.protocol.redaction import REDACTED, WITHHELD, Redactor
from tests.support.secret_lines import secrets_and_places


@given(secrets_and_places())
def test_no_secret_survives_redaction_wherever_it_is_put(
    case: tuple[list[str], Redactor, str, dict[str, Any]],
) -> None:
    secrets, redactor, message, fields = case
    clean_message, clean_fields = redactor.line(message, fields)
    out = json.dumps({"message": clean_message, "fields": clean_fields}, ensure_ascii=False)
    for secret in secrets:
        assert secret not in out


@given(st.text(max_size=200))
def test_redacting_twice_changes_nothing_more(text: str) -> None:
    redactor = Redactor()
    once = redactor.text(text)
    assert redactor.text(once) == once


def test_what_is_taken_out_and_what_stays() -> None:
    redactor = Redactor(secrets=("s3cr3t-value",), sensitive_fields=("pin",))
    message, fields = redactor.line(
        "cannot reach the hub at wss://u:pw@hub.example/ws/agent?page=2&token=abc (refused); "
        "retry in 0.50s with s3cr3t-value",
        {"attempt": 3, "pin": 1234, "nested": [{"Api-Key": "k"}, {"ok": "yes"}], "n": 1.5},
    )
    assert message == (
        f"cannot reach the hub at wss://{REDACTED}@hub.example/ws/agent?page=2&token={REDACTED} "
        f"(refused); retry in 0.50s with {REDACTED}"
    )
    assert fields == {
        "attempt": 3,
        "pin": REDACTED,
        "nested": [{"Api-Key": REDACTED}, {"ok": "yes"}],
        "n": 1.5,
    }
    assert redactor.text("prompt_tokens=512 in 3 s") == "prompt_tokens=512 in 3 s"
    assert redactor.text('{"password": "hunter2", "user": "ana"}') == (
        f'{{"password": {REDACTED}, "user": "ana"}}'
    )
    assert redactor.text("pair with ABCD-EFGH") == f"pair with {REDACTED}"


def test_the_hook_runs_first_and_a_failing_hook_withholds_the_text() -> None:
    hooked = Redactor(hook=lambda s: s.replace("customer 42", "customer ?"))
    assert hooked.text("order of customer 42 with lut_abcdefghijklmnop") == (
        f"order of customer ? with lut_{REDACTED}"
    )

    def broken(text: str) -> str:
        raise RuntimeError(text)

    assert Redactor(hook=broken).line("anything", {"a": "b"}) == (WITHHELD, {WITHHELD: WITHHELD})


def test_a_long_line_costs_linear_time() -> None:
    redactor = Redactor(sensitive_fields=("pin",))
    for text in ("a" * 200_000, "token" * 40_000, ";" * 200_000, "x://" * 50_000):
        assert len(redactor.text(text)) >= 1  # would take minutes if the patterns backtracked
