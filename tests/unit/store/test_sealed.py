"""Secrets sealed at rest: only the hub's keys open them, each only where it was stored, and
a keyring with the old key after the new one opens both while sealing with the new."""

from __future__ import annotations

import pytest

from lineup.store.sealed import (
    Keyring,
    UnreadableSecret,
    is_sealed,
    new_key_text,
    parse_key,
    sealed_key_id,
)

SECRET = "https://fcm.googleapis.com/fcm/send/private-token"


def test_a_sealed_value_does_not_contain_the_secret_and_opens_again() -> None:
    ring = Keyring.from_texts([new_key_text()])
    sealed = ring.seal(SECRET, "push_subscriptions.endpoint:dev_1")
    assert is_sealed(sealed)
    assert "fcm" not in sealed and "private-token" not in sealed
    assert ring.open(sealed, "push_subscriptions.endpoint:dev_1") == SECRET
    assert ring.seal(SECRET, "c") != ring.seal(SECRET, "c")  # a fresh nonce each time


def test_a_sealed_value_moved_to_another_row_does_not_open() -> None:
    ring = Keyring.from_texts([new_key_text()])
    sealed = ring.seal(SECRET, "push_subscriptions.endpoint:dev_1")
    with pytest.raises(UnreadableSecret):
        ring.open(sealed, "push_subscriptions.endpoint:dev_2")


def test_another_key_does_not_open_it_and_says_which_key_is_missing() -> None:
    sealed = Keyring.from_texts([new_key_text()]).seal(SECRET, "c")
    other = Keyring.from_texts([new_key_text()])
    with pytest.raises(UnreadableSecret, match=str(sealed_key_id(sealed))):
        other.open(sealed, "c")


def test_a_tampered_value_does_not_open() -> None:
    ring = Keyring.from_texts([new_key_text()])
    sealed = ring.seal(SECRET, "c")
    flipped = sealed[:-2] + ("A" if sealed[-2] != "A" else "B") + sealed[-1]
    with pytest.raises(UnreadableSecret):
        ring.open(flipped, "c")
    with pytest.raises(UnreadableSecret):
        ring.open(SECRET, "c")  # plain text is not a sealed value


def test_rotation_opens_with_old_keys_and_seals_with_the_first() -> None:
    old_key, new_key = new_key_text(), new_key_text()
    old = Keyring.from_texts([old_key])
    sealed_before = old.seal(SECRET, "c")
    rotated = Keyring.from_texts([new_key, old_key])
    assert rotated.open(sealed_before, "c") == SECRET
    assert rotated.needs_resealing(sealed_before)
    assert rotated.needs_resealing(SECRET)  # plain text from an older hub
    sealed_after = rotated.seal(SECRET, "c")
    assert sealed_key_id(sealed_after) == rotated.current_id != old.current_id
    assert not rotated.needs_resealing(sealed_after)
    assert Keyring.from_texts([new_key]).open(sealed_after, "c") == SECRET


def test_keys_are_32_bytes_of_base64url_and_never_shown() -> None:
    text = new_key_text()
    assert len(parse_key(text)) == 32
    for bad in ("", "short", text + "AAAA", "not base64 !!"):
        with pytest.raises(ValueError):
            parse_key(bad)
    assert text not in repr(Keyring.from_texts([text]))
