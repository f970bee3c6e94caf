"""The plain-text rule and the fingerprint format agents pin hubs' certificates with."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lineup.protocol.transport_security import (
    fingerprint_of,
    is_loopback_host,
    normalise_fingerprint,
    plain_text_verdict,
    same_fingerprint,
)

DIGEST = hashlib.sha256(b"a certificate").hexdigest()
CANONICAL = ":".join(DIGEST.upper()[i : i + 2] for i in range(0, 64, 2))


def test_a_fingerprint_is_the_sha256_of_the_der_bytes_in_upper_case_colon_pairs():
    assert fingerprint_of(b"a certificate") == CANONICAL
    assert len(CANONICAL) == 95 and CANONICAL.count(":") == 31


@pytest.mark.parametrize(
    "spelling",
    [
        CANONICAL,
        CANONICAL.lower(),
        DIGEST,
        f"sha256:{DIGEST}",
        f"SHA256 Fingerprint={CANONICAL}",
        f"  {CANONICAL}\n",
        CANONICAL.replace(":", " "),
    ],
)
def test_what_people_paste_is_normalised_to_one_spelling(spelling: str):
    assert normalise_fingerprint(spelling) == CANONICAL
    assert same_fingerprint(spelling, CANONICAL)


@pytest.mark.parametrize(
    "bad", ["", "AB:CD", DIGEST[:-1], DIGEST + "00", "zz" * 32, "md5:" + DIGEST]
)
def test_anything_but_a_sha256_fingerprint_is_refused_with_a_reason(bad: str):
    with pytest.raises(ValueError, match="SHA-256"):
        normalise_fingerprint(bad)
    assert not same_fingerprint(bad, CANONICAL)


@given(st.binary(max_size=64), st.binary(max_size=64))
def test_two_certificates_have_the_same_fingerprint_only_when_they_are_the_same(a: bytes, b: bytes):
    assert same_fingerprint(fingerprint_of(a), fingerprint_of(b)) == (a == b)


@pytest.mark.parametrize(
    "host", ["127.0.0.1", "127.8.9.10", "::1", "[::1]", "localhost", "LOCALHOST.", "a.localhost"]
)
def test_loopback_hosts_are_this_machine(host: str):
    assert is_loopback_host(host)


@pytest.mark.parametrize(
    "host", ["192.168.1.20", "10.0.0.1", "hub.example", "localhost.example", "0.0.0.0", "::"]
)
def test_other_hosts_are_not_loopback(host: str):
    assert not is_loopback_host(host)


@pytest.mark.parametrize(
    "url",
    [
        "ws://127.0.0.1:8000/ws/agent",
        "http://localhost:8000",
        "ws://[::1]:8000/ws/agent",
        "wss://hub.example/ws/agent",
        "https://192.168.1.20:8443",
    ],
)
def test_secure_urls_and_plain_ones_to_loopback_are_allowed(url: str):
    assert plain_text_verdict(url).allowed


@pytest.mark.parametrize(
    "url", ["ws://192.168.1.20:8000/ws/agent", "http://hub.example", "ws://10.0.0.1/ws/agent"]
)
def test_plain_text_to_another_machine_is_refused_unless_allowed(url: str):
    verdict = plain_text_verdict(url)
    assert not verdict.allowed
    assert verdict.reason == "plain_text_to_remote_host"
    assert "LINEUP_ALLOW_INSECURE" in verdict.message
    assert plain_text_verdict(url, allow_insecure=True).allowed


def test_an_address_that_is_not_http_or_websocket_is_refused_even_when_insecure_is_allowed():
    verdict = plain_text_verdict("ftp://127.0.0.1/", allow_insecure=True)
    assert not verdict.allowed and verdict.reason == "unsupported_scheme"
