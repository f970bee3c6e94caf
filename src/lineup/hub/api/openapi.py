"""The one place routes declare what they answer, so ``/openapi.json`` tells a client the truth.

FastAPI on its own advertises ``422 HTTPValidationError`` for every route with input, which the
hub never sends (a bad request is ``400 invalid_argument`` in the error envelope), and lists
none of the errors the hub does send. A route instead spreads :func:`answers` into its
decorator::

    @router.post("/things", status_code=201, **answers(Thing, 400, 401, 403, 409, 413))

naming its response model and the error statuses it can produce; :func:`install` removes the
phantom 422 from the generated document.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

from lineup.hub.api.responses import ErrorEnvelope

MEANINGS: dict[int, str] = {
    400: "`invalid_argument`: the request is not valid (a body field, a query or path "
    "parameter, a header); `details.problems` lists what is wrong.",
    401: "`unauthenticated`: no session, or it ended; sign in again.",
    403: "`forbidden`: no valid `X-CSRF-Token` header on a state change, or the person is "
    "not a member of the workspace, or may not do this.",
    404: "`not_found`: nothing with that id in this workspace.",
    409: "`conflict`: the state does not allow it (already answered, finished, revoked, an "
    "Idempotency-Key reused for another change).",
    413: "`invalid_argument`: the request body is too large.",
    429: "`rate_limited`: too many attempts; `details.retryAfterMs` and the `Retry-After` "
    "header say when to try again.",
    503: "`unavailable`: the database is unreachable or busy; nothing was written, retry.",
}


def errors(*statuses: int, database: bool = True) -> dict[int | str, dict[str, Any]]:
    """OpenAPI ``responses`` for these error statuses, each with the error envelope; a route
    that uses the ``database`` can also answer 503."""
    chosen = {*statuses, 503} if database else set(statuses)
    return {
        status: {"model": ErrorEnvelope, "description": MEANINGS[status]}
        for status in sorted(chosen)
    }


def answers(model: type[Any] | None, *statuses: int, database: bool = True) -> dict[str, Any]:
    """Decorator arguments: the response model and the error statuses of one route.

    Keys a view leaves out stay out of the JSON (``response_model_exclude_unset``), so a
    model's optional fields describe keys that may be absent, not keys sent as null.
    """
    declared: dict[str, Any] = {"responses": errors(*statuses, database=database)}
    if model is None:
        declared["response_model"] = None
    else:
        declared["response_model"] = model
        declared["response_model_exclude_unset"] = True
    return declared


def install(app: FastAPI) -> None:
    """Generate the document once, without the validation error FastAPI would advertise."""

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = get_openapi(
                title=app.title,
                version=app.version,
                description=app.description,
                routes=app.routes,
            )
            for path_item in schema.get("paths", {}).values():
                for operation in path_item.values():
                    if isinstance(operation, dict):
                        operation.get("responses", {}).pop("422", None)
            schemas = schema.get("components", {}).get("schemas", {})
            for name in ("HTTPValidationError", "ValidationError"):
                schemas.pop(name, None)
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
