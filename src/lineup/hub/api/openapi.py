"""The one place routes declare what they answer, so ``/openapi.json`` tells a client the truth.

FastAPI on its own advertises ``422 HTTPValidationError`` for every route with input, which the
hub never sends (a bad request is ``400 invalid_argument`` in the error envelope), and lists
none of the errors the hub does send. A route instead spreads :func:`answers` into its
decorator::

    @router.post("/things", status_code=201, **answers(Thing, 400, 401, 403, 409, 413))

naming its response model and the error statuses it can produce; :func:`install` removes the
phantom 422 from the generated document and says which routes need the session cookie and the
CSRF header (any route that depends on the signed-in person).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from fastapi import FastAPI, routing
from fastapi.dependencies.models import Dependant
from fastapi.openapi.utils import get_openapi
from fastapi.routing import APIRoute
from starlette.routing import BaseRoute

from lineup.hub.api.deps import CSRF_HEADER, SAFE_METHODS, caller, signed_in
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
    503: "`unavailable`: the database is unreachable or busy (nothing was written), or the hub "
    "is at capacity; retry.",
}


def errors(*statuses: int, database: bool = True) -> dict[int | str, dict[str, Any]]:
    """OpenAPI ``responses`` for these error statuses, each with the error envelope. Every
    route can answer 400 (the request guard refuses a NUL in any address) and one that uses
    the ``database`` 503."""
    chosen = {*statuses, 400, 503} if database else {*statuses, 400}
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


def all_routes(app: FastAPI) -> Iterator[tuple[BaseRoute, str]]:
    """Every route with its full path, including those of included routers (which recent
    FastAPI keeps nested instead of copying into ``app.routes``)."""
    contexts = getattr(routing, "iter_route_contexts", None)
    if contexts is None:
        for route in app.routes:
            yield route, str(getattr(route, "path_format", getattr(route, "path", "")))
        return
    for context in contexts(app.routes):
        yield context.original_route, str(context.path_format or "")


def _depends_on(dependant: Dependant, call: Callable[..., Any]) -> bool:
    return dependant.call is call or any(_depends_on(d, call) for d in dependant.dependencies)


def install(app: FastAPI, *, session_cookie: str) -> None:
    """Generate the document once, without the validation error FastAPI would advertise and
    with the session cookie and CSRF header on the routes that need them."""

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = get_openapi(
                title=app.title,
                version=app.version,
                description=app.description,
                routes=app.routes,
            )
            paths = schema.get("paths", {})
            for path_item in paths.values():
                for operation in path_item.values():
                    if isinstance(operation, dict):
                        operation.get("responses", {}).pop("422", None)
            components = schema.setdefault("components", {})
            schemas = components.get("schemas", {})
            for name in ("HTTPValidationError", "ValidationError"):
                schemas.pop(name, None)
            components["securitySchemes"] = {
                "session": {
                    "type": "apiKey",
                    "in": "cookie",
                    "name": session_cookie,
                    "description": "Set by sign-up and sign-in.",
                },
                "csrf": {
                    "type": "apiKey",
                    "in": "header",
                    "name": CSRF_HEADER,
                    "description": "The `csrfToken` of sign-in; needed on every state change.",
                },
                "agentCredential": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "An agent's credential from pairing (`lna_…`).",
                },
                "developerToken": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "A person's developer token (`lut_…`), on a workspace's "
                    "routes; scope `read` for GET only, `write` for state changes too.",
                },
            }
            for route, path in all_routes(app):
                if not (isinstance(route, APIRoute) and route.include_in_schema):
                    continue
                by_token = _depends_on(route.dependant, caller)
                if not (by_token or _depends_on(route.dependant, signed_in)):
                    continue
                for method in route.methods or ():
                    operation = paths.get(path, {}).get(method.lower())
                    if operation is None:
                        continue
                    needs: dict[str, list[str]] = {"session": []}
                    if method not in SAFE_METHODS:
                        needs["csrf"] = []
                    operation["security"] = [needs, {"developerToken": []}] if by_token else [needs]
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
