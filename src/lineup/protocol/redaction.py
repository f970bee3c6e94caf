"""Taking secrets out of log lines before anyone else reads them. Pure: text in, text out.

An agent's diagnostic lines (``agent.logs``) leave its machine, so the SDK runs every line
through a :class:`Redactor` first — the message, the logger's name and every key and value
of the structured fields, at any depth. The hub runs its own (knowing no secret values, only
the shapes) over what arrives, in case an adapter sent lines some other way. What it removes:

* **values it was told are secret** — the agent's credential, a direct-mode token, anything
  the adapter passes in ``secrets`` — wherever they appear;
* **LineUp's own secrets by their shape**: agent credentials ``lna_…``, developer tokens
  ``lut_…``, session and CSRF tokens ``lns_…`` / ``csrf_…``, pairing codes ``ABCD-EFGH``,
  direct-mode tokens ``abcd-efgh-jkmn-pqrs-tuvw``;
* the token after ``Bearer`` or ``Basic``;
* a URL's user information (``https://user:password@host`` → ``https://[redacted]@host``) and
  the values of query parameters whose names look secret (``?token=…``, ``&api_key=…``);
* ``name=value`` and ``name: value`` in text when the name looks secret (``password=…``,
  ``"apiKey": "…"``);
* in the fields, the whole value of a key that looks secret or that the adapter marked
  sensitive; and a marked value (six characters or more) wherever else it appears in the line.

A name "looks secret" when, lower-cased with ``-`` and spaces as ``_``, it contains
``password``, ``passwd``, ``secret``, ``credential``, ``api_key``, ``apikey``,
``private_key``, ``authorization``, ``cookie`` or ``session``, or ends in ``token``, or is one
of the names the adapter gave. A hook the adapter supplies runs on every string first; the
built-in rules run after it, so a hook cannot put back what they take out. A hook that fails
withholds the string rather than letting it through.

Redaction errs on the side of removing too much: a line is for a person reading why an
agent is offline, and ``[redacted]`` in it costs less than a leaked key.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

REDACTED = "[redacted]"
WITHHELD = "[withheld: the redaction hook failed]"
MIN_MARKED_VALUE = 6
"""Marked values shorter than this are removed from their field only (removing ``"1"``
everywhere would leave the line unreadable)."""

_NAME_WORDS = (
    "password",
    "passwd",
    "secret",
    "credential",
    "api_key",
    "apikey",
    "private_key",
    "authorization",
    "cookie",
    "session",
)
_TEXT_NAME = (
    r"[A-Za-z0-9_.-]*(?:(?:pass(?:wor)?d|secret|credential|api[_-]?key|private[_-]?key|"
    r"authorization|cookie|session)[A-Za-z0-9_.-]*|token)"
)

_LINEUP_TOKEN = re.compile(r"(lna|lns|lut|csrf)_[A-Za-z0-9_-]{8,}")
_PAIRING_CODE = re.compile(r"(?<![A-Z0-9])[A-HJ-NP-Z2-9]{4}-[A-HJ-NP-Z2-9]{4}(?![A-Z0-9])")
_DIRECT_TOKEN = re.compile(r"[a-hj-km-np-z2-9]{4}(?:-[a-hj-km-np-z2-9]{4}){4}")
# Each pattern starts only where a word could start, so a long line costs linear time.
_AUTH_SCHEME = re.compile(r"(?i)(?<![a-z])(bearer|basic)(\s+)[^\s\"',;]+")
_USERINFO = re.compile(r"(?<![A-Za-z0-9+.-])([A-Za-z][A-Za-z0-9+.-]*://)[^/\s@?#]*@")
_QUERY_SECRET = re.compile(
    r"(?i)([?&;][^=&#;?\s]*(?:token|secret|pass|pwd|key|auth|sig|credential|code|session)"
    r"[^=&#;?\s]*=)[^&#\s]*"
)


def _name_pattern(names: Iterable[str]) -> re.Pattern[str]:
    alternatives = [_TEXT_NAME, *(re.escape(n) for n in sorted(names, key=len, reverse=True))]
    return re.compile(
        r"(?i)(?<![A-Za-z0-9_.-])([\"']?(?:" + "|".join(alternatives) + r")[\"']?\s*[:=]\s*)"
        r"(\"[^\"]*\"?|'[^']*'?|[^\s,;&]+)"
    )


def normalise_name(name: str) -> str:
    return name.strip().lower().replace("-", "_").replace(" ", "_")


Hook = Callable[[str], str]


@dataclass(frozen=True)
class Redactor:
    """The rules for one agent: its secret values, its sensitive field names and its hook."""

    secrets: tuple[str, ...] = ()
    sensitive_fields: tuple[str, ...] = ()
    hook: Hook | None = None
    _names: frozenset[str] = field(init=False, repr=False)
    _pairs: re.Pattern[str] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        values = tuple(sorted({s for s in self.secrets if s}, key=len, reverse=True))
        object.__setattr__(self, "secrets", values)
        names = frozenset(normalise_name(n) for n in self.sensitive_fields if n.strip())
        object.__setattr__(self, "_names", names)
        object.__setattr__(self, "_pairs", _name_pattern(self.sensitive_fields))

    def is_sensitive(self, name: str) -> bool:
        key = normalise_name(name)
        return (
            key in self._names or key.endswith("token") or any(word in key for word in _NAME_WORDS)
        )

    def text(self, value: str, marked: tuple[str, ...] = ()) -> str:
        """``value`` without what the rules take out (``marked``: more secret values)."""
        if self.hook is not None:
            try:
                hooked = self.hook(value)
            except Exception:
                return WITHHELD
            if not isinstance(hooked, str):
                return WITHHELD
            value = hooked
        for secret in (*marked, *self.secrets):
            if secret in value:
                value = value.replace(secret, REDACTED)
        value = _LINEUP_TOKEN.sub(lambda m: f"{m.group(1)}_{REDACTED}", value)
        value = _AUTH_SCHEME.sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}", value)
        value = _USERINFO.sub(lambda m: f"{m.group(1)}{REDACTED}@", value)
        value = _QUERY_SECRET.sub(lambda m: f"{m.group(1)}{REDACTED}", value)
        value = self._pairs.sub(lambda m: f"{m.group(1)}{REDACTED}", value)
        value = _PAIRING_CODE.sub(REDACTED, value)
        return _DIRECT_TOKEN.sub(REDACTED, value)

    def line(
        self, message: str, fields: Mapping[str, Any] | None
    ) -> tuple[str, dict[str, Any] | None]:
        """A log line's message and fields, redacted together: a value marked sensitive in
        the fields is taken out of the message too."""
        marked = self.marked_values(fields)
        clean_fields = None if fields is None else self._object(fields, marked)
        return self.text(message, marked), clean_fields

    def marked_values(self, fields: Any) -> tuple[str, ...]:
        """The values under sensitive keys of ``fields`` (at any depth, as text) long enough
        to take out of the rest of a line, longest first."""
        try:
            found = {v for v in self._marked_values(fields, 0) if len(v) >= MIN_MARKED_VALUE}
        except Exception:  # an object whose str() fails, a structure too deep
            found = set()
        return tuple(sorted(found, key=len, reverse=True))

    def value(self, value: Any, marked: tuple[str, ...] = ()) -> Any:
        """A JSON value with every string redacted and sensitive keys' values replaced."""
        if isinstance(value, str):
            return self.text(value, marked)
        if isinstance(value, Mapping):
            return self._object(value, marked)
        if isinstance(value, list | tuple):
            return [self.value(item, marked) for item in value]
        if isinstance(value, float) and not math.isfinite(value):
            return str(value)
        if value is None or isinstance(value, bool | int | float):
            return value
        return self.text(repr(value), marked)

    def _object(self, value: Mapping[Any, Any], marked: tuple[str, ...]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, item in value.items():
            name = str(key)
            clean = self.text(name, marked)
            out[clean] = REDACTED if self.is_sensitive(name) else self.value(item, marked)
        return out

    def _marked_values(self, value: Any, depth: int) -> Iterable[str]:
        """Every string under a sensitive key (and the text of other values there)."""
        if depth > _MAX_DEPTH:
            return
        if isinstance(value, Mapping):
            for key, item in value.items():
                if self.is_sensitive(str(key)):
                    yield from _strings(item, depth + 1)
                else:
                    yield from self._marked_values(item, depth + 1)
        elif isinstance(value, list | tuple | set | frozenset):
            for item in value:
                yield from self._marked_values(item, depth + 1)


_MAX_DEPTH = 64
"""Deeper than any line is sent (a cycle in an adapter's object stops here)."""


def _strings(value: Any, depth: int) -> Iterable[str]:
    if depth > _MAX_DEPTH:
        return
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield str(key)
            yield from _strings(item, depth + 1)
    elif isinstance(value, list | tuple | set | frozenset):
        for item in value:
            yield from _strings(item, depth + 1)
    elif value is not None and not isinstance(value, bool):
        yield str(value)
        yield repr(value)


__all__ = ["MIN_MARKED_VALUE", "REDACTED", "WITHHELD", "Hook", "Redactor", "normalise_name"]
