"""The one error taxonomy of LineUp, and the one table that maps it to every transport.

Every failure a client can see carries one of these codes, a sentence for a person, and
optionally structured ``details``. Only ``rate_limited`` and ``unavailable`` may be retried
automatically; ``unknown_result`` means the effect may or may not have happened and must be
checked before anything is retried.

Exception tree::

    LineupError
    ├── InvalidArgument      invalid_argument   400
    ├── Unauthenticated      unauthenticated    401
    ├── Forbidden            forbidden          403
    ├── NotFound             not_found          404
    ├── Conflict             conflict           409
    ├── RateLimited          rate_limited       429
    ├── Unavailable          unavailable        503
    └── UnknownResult        unknown_result     500
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any, ClassVar


class ErrorCode(StrEnum):
    INVALID_ARGUMENT = "invalid_argument"
    UNAUTHENTICATED = "unauthenticated"
    FORBIDDEN = "forbidden"
    NOT_FOUND = "not_found"
    CONFLICT = "conflict"
    RATE_LIMITED = "rate_limited"
    UNAVAILABLE = "unavailable"
    UNKNOWN_RESULT = "unknown_result"


HTTP_STATUS: Mapping[ErrorCode, int] = {
    ErrorCode.INVALID_ARGUMENT: 400,
    ErrorCode.UNAUTHENTICATED: 401,
    ErrorCode.FORBIDDEN: 403,
    ErrorCode.NOT_FOUND: 404,
    ErrorCode.CONFLICT: 409,
    ErrorCode.RATE_LIMITED: 429,
    ErrorCode.UNAVAILABLE: 503,
    ErrorCode.UNKNOWN_RESULT: 500,
}

RETRYABLE: frozenset[ErrorCode] = frozenset({ErrorCode.RATE_LIMITED, ErrorCode.UNAVAILABLE})


class LineupError(Exception):
    """Base of every error that is meant to reach a client."""

    code: ClassVar[ErrorCode] = ErrorCode.UNKNOWN_RESULT

    def __init__(self, message: str, *, details: Mapping[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details: dict[str, Any] = dict(details or {})

    @property
    def http_status(self) -> int:
        return HTTP_STATUS[self.code]

    @property
    def retryable(self) -> bool:
        return self.code in RETRYABLE

    def to_dict(self) -> dict[str, Any]:
        """The HTTP error body: ``details`` is always there, ``{}`` when there are none."""
        return {"code": self.code.value, "message": self.message, "details": dict(self.details)}


class InvalidArgument(LineupError):
    code = ErrorCode.INVALID_ARGUMENT


class PayloadTooLarge(InvalidArgument):
    """``invalid_argument`` on the wire, with HTTP 413 so proxies and clients see why: a body
    over the size an endpoint accepts."""

    @property
    def http_status(self) -> int:
        return 413


class Unauthenticated(LineupError):
    code = ErrorCode.UNAUTHENTICATED


class Forbidden(LineupError):
    code = ErrorCode.FORBIDDEN


class NotFound(LineupError):
    code = ErrorCode.NOT_FOUND


class Conflict(LineupError):
    code = ErrorCode.CONFLICT


class RateLimited(LineupError):
    code = ErrorCode.RATE_LIMITED


class Unavailable(LineupError):
    code = ErrorCode.UNAVAILABLE


class UnknownResult(LineupError):
    code = ErrorCode.UNKNOWN_RESULT


ERROR_CLASSES: Mapping[ErrorCode, type[LineupError]] = {
    cls.code: cls
    for cls in (
        InvalidArgument,
        Unauthenticated,
        Forbidden,
        NotFound,
        Conflict,
        RateLimited,
        Unavailable,
        UnknownResult,
    )
}


def error_from_code(
    code: str, message: str, details: Mapping[str, Any] | None = None
) -> LineupError:
    """Rebuild the exception a peer described; an unknown code becomes ``unknown_result``."""
    try:
        cls = ERROR_CLASSES[ErrorCode(code)]
    except ValueError:
        cls = UnknownResult
    return cls(message, details=details)
