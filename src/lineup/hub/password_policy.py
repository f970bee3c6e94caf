"""Which passwords a person may choose: long enough, and not one a guesser tries early.

Length alone let "password" and eight spaces through. zxcvbn estimates how many guesses a
password takes (dictionaries of common passwords, names and words, keyboard patterns,
repeats, dates, and the person's own email and name); a score under :data:`MIN_SCORE` is
refused with its own advice, which tells a person more than a fixed rule would.
"""

from __future__ import annotations

from collections.abc import Sequence

from zxcvbn import zxcvbn

from lineup.protocol.errors import InvalidArgument

MIN_LENGTH = 8
MAX_LENGTH = 1024
MIN_SCORE = 2
"""zxcvbn's 0–4 scale; 2 is "somewhat guessable" (about 10^8 guesses), safe against an
online guesser the hub throttles; 0 and 1 are the passwords those guessers start with."""
_SCORED_LENGTH = 72  # zxcvbn's own limit; a password's first 72 characters decide its score


def check_password(password: str, user_inputs: Sequence[str] = ()) -> None:
    """Raise ``invalid_argument`` (``details.field == "password"``) for a password to refuse.

    ``user_inputs`` are words the person is known by (email, name): a password built from
    them is easy for anyone who knows the person to guess.
    """
    if len(password) < MIN_LENGTH:
        raise InvalidArgument(
            f"Choose a password of at least {MIN_LENGTH} characters.",
            details={"field": "password"},
        )
    if len(password) > MAX_LENGTH:
        raise InvalidArgument("That password is too long.", details={"field": "password"})
    words = [w for text in user_inputs for w in _words(text)]
    result = zxcvbn(password[:_SCORED_LENGTH], user_inputs=words)
    if result["score"] >= MIN_SCORE:
        return
    feedback = result["feedback"]
    advice = [a for a in (feedback["warning"], *feedback["suggestions"]) if a] or [
        "Add another word or two; uncommon words are better."
    ]
    raise InvalidArgument(
        " ".join(["That password is too easy to guess.", *advice]),
        details={"field": "password", "suggestions": advice},
    )


def _words(text: str) -> list[str]:
    """An email's parts count as well as the whole: ``ana.lima@example.test`` also gives
    ``ana.lima``, ``ana`` and ``lima``."""
    clean = text.strip().lower()
    if not clean:
        return []
    local = clean.split("@", 1)[0]
    parts = [clean, local]
    parts.extend(p for p in local.replace("_", ".").replace("-", ".").split(".") if len(p) > 2)
    parts.extend(p for p in clean.split() if len(p) > 2)
    return parts
