"""The rules of a typed answer: what a person may type into an ``input`` card or tool.

An interaction of kind ``input`` and the built-in ``input`` tool ask the same thing — some
text, in a format — so they share these rules and their messages, word for word, with the
web app (``web/src``), which checks before sending what the hub checks again on arrival. An
account's email address is checked with the same rule (:func:`is_email`).

Leaf module: it imports nothing of the project, so both the protocol and the domain can use
it without either depending on the other.
"""

from __future__ import annotations

import math
import re
from typing import Final
from urllib.parse import urlsplit

INPUT_FORMATS: Final = ("text", "email", "url", "number", "integer")
"""What an answer may be asked to be; ``text`` (or no format) takes anything not blank."""

# Deliberately loose: the person's mail server is the real judge; this catches slips only.
_EMAIL: Final = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")
# As JavaScript's Number() reads them, so the app and the hub accept the same texts.
_NUMBER: Final = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?", re.ASCII)
_INTEGER: Final = re.compile(r"[+-]?\d+", re.ASCII)

REQUIRED: Final = "An answer is required."
EMAIL: Final = "Enter an email address, like name@example.com."
URL: Final = "Enter a web address starting with http:// or https://."
NUMBER: Final = "Enter a number, like 3 or 2.5."
INTEGER: Final = "Enter a whole number, like 3."


def input_problem(format: str | None, text: str, *, pattern: str | None = None) -> str | None:
    """Why ``text`` is not an answer in ``format`` matching ``pattern`` (a sentence for the
    person), or None when it is one. ``pattern`` must match the whole text; check it with
    :func:`pattern_problem` before asking."""
    if not text.strip():
        return REQUIRED
    if format == "email" and not is_email(text):
        return EMAIL
    if format == "url" and not _is_web_url(text):
        return URL
    if format == "number" and not _is_finite_number(text):
        return NUMBER
    if format == "integer" and not _INTEGER.fullmatch(text.strip()):
        return INTEGER
    if pattern is not None and not re.fullmatch(pattern, text):
        return f"The answer does not have the expected form ({pattern})."
    return None


def is_email(text: str) -> bool:
    """Looks like an email address: the one rule for answers and for accounts' addresses."""
    return _EMAIL.fullmatch(text) is not None


def pattern_problem(pattern: str) -> str | None:
    """Why ``pattern`` cannot check answers (not a regular expression Python reads), or None."""
    try:
        re.compile(pattern)
    # Warning: where warnings are errors (tests, -W error), a pattern Python warns about
    # (say, a possible nested set) is refused too, instead of escaping as another error.
    except (re.error, OverflowError, RecursionError, Warning) as exc:
        return f"The pattern is not a valid regular expression: {exc}."
    return None


def _is_web_url(text: str) -> bool:
    if any(c.isspace() for c in text):
        return False
    try:
        parts = urlsplit(text)
        return parts.scheme in ("http", "https") and bool(parts.hostname)
    except ValueError:
        return False


def _is_finite_number(text: str) -> bool:
    return bool(_NUMBER.fullmatch(text.strip())) and math.isfinite(float(text))
