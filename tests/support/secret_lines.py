"""Secrets put in random places of a log line's message and fields, for the redaction
properties of the protocol's redactor and of the SDK's diagnostic lines."""

from __future__ import annotations

import json
import string
from typing import Any

from hypothesis import assume
from hypothesis import strategies as st

from lineup.protocol.redaction import Redactor

URLSAFE = string.ascii_letters + string.digits + "_-"
MARKED = ("customer_pin", "model-secret-name", "X-Api-Key")


def token(min_size: int = 16) -> st.SearchStrategy[str]:
    return st.text(URLSAFE, min_size=min_size, max_size=48)


filler = st.text(max_size=40)
json_leaf = st.one_of(st.none(), st.booleans(), st.integers(), filler)


@st.composite
def secrets_and_places(draw: st.DrawFn) -> tuple[list[str], Redactor, str, dict[str, Any]]:
    """A redactor knowing some secrets, a message and fields holding those and others, at
    random places and depths; the secrets' values to look for afterwards."""
    credential = "lna_" + draw(token(32))
    explicit = draw(token(12))
    shaped = [draw(st.sampled_from(["lut_", "lns_", "csrf_"])) + draw(token(12))]
    bearer = draw(token(12))
    password = draw(token(8))
    query = draw(token(8))
    marked_value = draw(st.text(string.ascii_letters + string.digits, min_size=8, max_size=30))
    pieces = [
        credential,
        explicit,
        *shaped,
        f"Authorization: Bearer {bearer}",
        f"https://bot:{password}@example.test/hook",
        f"https://example.test/cb?page=2&access_token={query}&x=1",
    ]
    # message: some of the pieces, between random text, spaces apart
    chosen = draw(st.lists(st.sampled_from(pieces), max_size=8))
    if draw(st.booleans()):
        chosen.append(marked_value)
    words: list[str] = []
    around: list[str] = []
    for piece in chosen:
        around.append(draw(filler))
        words += [around[-1], piece]
    around.append(draw(filler))
    words.append(around[-1])
    message = " ".join(words)
    # fields: nested objects and lists of random leaves, secrets dropped in at random places
    fields: dict[str, Any] = draw(
        st.recursive(
            st.dictionaries(st.text(string.ascii_lowercase, max_size=8), json_leaf, max_size=4),
            lambda inner: st.dictionaries(
                st.text(string.ascii_lowercase, max_size=8),
                st.one_of(inner, st.lists(inner, max_size=3)),
                max_size=4,
            ),
            max_leaves=12,
        )
    )
    # a "secret" the random text holds by chance is no secret: leave such cases out
    background = json.dumps([around, fields], ensure_ascii=False)
    holder = fields
    for _ in range(draw(st.integers(0, 4))):
        holder = holder.setdefault(
            draw(st.text(string.ascii_lowercase, min_size=1, max_size=4)), {}
        )
        if not isinstance(holder, dict):
            break
    if isinstance(holder, dict):
        holder[draw(st.sampled_from(MARKED))] = draw(
            st.sampled_from([marked_value, [marked_value], {"inner": marked_value}])
        )
        holder[draw(st.text(string.ascii_lowercase, max_size=6))] = draw(st.sampled_from(pieces))
        holder[draw(st.sampled_from(pieces))] = "a secret as a key"
    redactor = Redactor(secrets=(credential, explicit), sensitive_fields=MARKED)
    secrets = [credential, explicit, *shaped, bearer, password, query, marked_value]
    assume(not any(secret in background for secret in secrets))
    return secrets, redactor, message, fields
