"""One error envelope for every HTTP endpoint: ``{"error": {"code", "message", "details"}}``.

The status comes from the taxonomy table in :mod:`lineup.protocol.errors`. Nothing unexpected
leaks: an unhandled exception is logged with its traceback and answered ``unknown_result`` with
a request id the person can quote.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from lineup.protocol.errors import (
    ErrorCode,
    Forbidden,
    InvalidArgument,
    LineupError,
    NotFound,
    RateLimited,
    Unauthenticated,
    UnknownResult,
)
from lineup.protocol.ids import new_ulid

log = logging.getLogger("lineup.hub")

_BY_STATUS: dict[int, type[LineupError]] = {
    400: InvalidArgument,
    401: Unauthenticated,
    403: Forbidden,
    404: NotFound,
    405: InvalidArgument,
    413: InvalidArgument,
    415: InvalidArgument,
    422: InvalidArgument,
    429: RateLimited,
}


def error_response(error: LineupError, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": error.to_dict()}, status_code=error.http_status, headers=headers)


def _validation_message(exc: RequestValidationError) -> tuple[str, list[dict[str, Any]]]:
    problems = []
    for item in exc.errors():
        location = [str(part) for part in item.get("loc", ()) if part != "body"]
        problems.append({"path": ".".join(location), "problem": str(item.get("msg", ""))})
    if not problems:
        return "The request is not valid.", []
    first = problems[0]
    where = f"{first['path']}: " if first["path"] else ""
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    return f"The request is not valid — {where}{first['problem']}{more}", problems[:20]


def _body_field(exc: RequestValidationError) -> str | None:
    """The first problem's dotted path, when it lies in the request's body."""
    for item in exc.errors():
        location = [str(part) for part in item.get("loc", ())]
        if location[:1] == ["body"] and len(location) > 1:
            return ".".join(location[1:])
        return None
    return None


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(LineupError)
    async def _lineup(_: Request, exc: LineupError) -> JSONResponse:
        headers = None
        retry = exc.details.get("retryAfterMs") if exc.code is ErrorCode.RATE_LIMITED else None
        if isinstance(retry, int):
            headers = {"Retry-After": str(max(1, -(-retry // 1000)))}
        return error_response(exc, headers)

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        message, problems = _validation_message(exc)
        details: dict[str, Any] = {"problems": problems}
        field = _body_field(exc)
        if field:  # a form shows the refusal on the field the body names
            details["field"] = field
        return error_response(InvalidArgument(message, details=details))

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        cls = _BY_STATUS.get(exc.status_code, UnknownResult)
        detail = exc.detail if isinstance(exc.detail, str) else "The request failed."
        if exc.status_code == 404:
            detail = "There is nothing at this address."
        elif exc.status_code == 405:
            detail = "This address does not accept that method."
        return error_response(cls(detail))

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        reference = new_ulid()
        log.exception("unhandled error %s on %s %s", reference, request.method, request.url.path)
        return error_response(
            UnknownResult(
                "Something went wrong on the hub; the outcome is unknown. "
                f"Quote reference {reference} when reporting it.",
                details={"reference": reference},
            )
        )
