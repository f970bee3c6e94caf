"""The one exception the domain raises.

Callers (hub, SDK, store) map it onto the project-wide error taxonomy without inspecting
exception types: ``code`` is already a taxonomy code and ``message`` is written for a person.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, get_args

ErrorCode = Literal["invalid_argument", "conflict", "not_found"]

#: The only codes the domain ever uses; the rest of the taxonomy belongs to I/O layers.
ERROR_CODES: frozenset[str] = frozenset(get_args(ErrorCode))


class DomainError(Exception):
    """A rule of the domain was broken; safe to show ``message`` to the person who acted."""

    code: ErrorCode
    message: str
    details: dict[str, object]

    def __init__(
        self, code: ErrorCode, message: str, *, details: Mapping[str, object] | None = None
    ) -> None:
        if code not in ERROR_CODES:
            # A typo here would leak an unknown code onto the wire; fail loudly in development.
            raise ValueError(f"unknown domain error code: {code!r}")
        super().__init__(code, message)
        self.code = code
        self.message = message
        self.details = dict(details or {})

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.code!r}, {self.message!r})"

    def __reduce__(self) -> tuple[object, ...]:
        # Keeps the error picklable (process pools, test workers) despite the keyword argument.
        return (_rebuild, (type(self), self.code, self.message, self.details))


def _rebuild(
    cls: type[DomainError], code: ErrorCode, message: str, details: dict[str, object]
) -> DomainError:
    return cls(code, message, details=details)
