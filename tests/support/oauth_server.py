"""A real OAuth 2.0 authorization server on 127.0.0.1 for the account-binding tests: oauthlib's
``WebApplicationServer`` (authorization code with PKCE, refresh tokens that rotate) served by a
small Starlette app on uvicorn, in a thread of its own, on an ephemeral port.

It has one confidential client (id, secret, redirect URI) and signs the browser in as
``signing_in_as`` without a login page: the test plays the person. Tokens live and die on the
clock it is given (the hub's fake clock), so "the access token ran out" needs no sleeping.
:meth:`AuthorizationServer.accepts` is what the test system behind a provider asks of an
access token; :meth:`revoke_refresh_tokens` and :meth:`sign_out` are the system's operator
ending a person's sessions.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import secrets
import socket
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

import uvicorn
from oauthlib.common import Request as OAuthRequest
from oauthlib.oauth2 import FatalClientError, OAuth2Error, RequestValidator, WebApplicationServer
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from tests.support.waiting import until

SCOPES = ["orders.read", "orders.write"]


@dataclass
class Client:
    client_id: str


@dataclass
class Issued:
    user: str
    expires_at: int
    revoked: bool = False


@dataclass
class Store:
    codes: dict[str, dict[str, Any]] = field(default_factory=dict)
    access: dict[str, Issued] = field(default_factory=dict)
    refresh: dict[str, Issued] = field(default_factory=dict)
    token_requests: list[str] = field(default_factory=list)
    """The grant type of every token request that reached the server."""
    lock: threading.Lock = field(default_factory=threading.Lock)


class Validator(RequestValidator):  # type: ignore[misc]
    def __init__(self, server: AuthorizationServer) -> None:
        self.server = server

    # --- the client ----------------------------------------------------------------------

    def validate_client_id(self, client_id: str, request: OAuthRequest, *a: Any, **k: Any) -> bool:
        return client_id == self.server.client_id

    def client_authentication_required(self, request: OAuthRequest, *a: Any, **k: Any) -> bool:
        return True

    def authenticate_client(self, request: OAuthRequest, *a: Any, **k: Any) -> bool:
        client_id, client_secret = request.client_id, request.client_secret
        scheme, _, sent = (request.headers.get("Authorization") or "").partition(" ")
        if scheme.lower() == "basic":
            client_id, _, client_secret = base64.b64decode(sent).decode().partition(":")
        if (client_id, client_secret) != (self.server.client_id, self.server.client_secret):
            return False
        request.client = Client(client_id)
        request.client_id = client_id
        return True

    def authenticate_client_id(self, client_id: str, request: OAuthRequest, *a: Any, **k: Any):
        return False  # no public clients

    def validate_redirect_uri(self, client_id: str, redirect_uri: str, request: Any, *a: Any):
        return redirect_uri == self.server.redirect_uri

    def get_default_redirect_uri(self, client_id: str, request: Any, *a: Any, **k: Any) -> str:
        return self.server.redirect_uri

    def validate_response_type(self, client_id: str, response_type: str, *a: Any, **k: Any):
        return response_type == "code"

    def validate_grant_type(self, client_id: str, grant_type: str, *a: Any, **k: Any) -> bool:
        with self.server.store.lock:
            self.server.store.token_requests.append(grant_type)
        return grant_type in ("authorization_code", "refresh_token")

    def validate_scopes(self, client_id: str, scopes: list[str], *a: Any, **k: Any) -> bool:
        return set(scopes) <= set(SCOPES)

    def get_default_scopes(self, client_id: str, request: Any, *a: Any, **k: Any) -> list[str]:
        return SCOPES[:1]

    # --- codes, with PKCE ----------------------------------------------------------------

    def is_pkce_required(self, client_id: str, request: Any) -> bool:
        return True

    def save_authorization_code(self, client_id: str, code: dict[str, Any], request: Any) -> None:
        with self.server.store.lock:
            self.server.store.codes[code["code"]] = {
                "user": request.user,
                "scopes": list(request.scopes),
                "redirect_uri": request.redirect_uri,
                "challenge": request.code_challenge,
                "method": request.code_challenge_method,
            }

    def validate_code(self, client_id: str, code: str, client: Any, request: Any) -> bool:
        with self.server.store.lock:
            saved = self.server.store.codes.get(code)
        if saved is None:
            return False
        request.user = saved["user"]
        request.scopes = saved["scopes"]
        return True

    def get_code_challenge(self, code: str, request: Any) -> str | None:
        saved = self.server.store.codes.get(code)
        return None if saved is None else saved["challenge"]

    def get_code_challenge_method(self, code: str, request: Any) -> str | None:
        saved = self.server.store.codes.get(code)
        return None if saved is None else saved["method"]

    def confirm_redirect_uri(self, client_id: str, code: str, redirect_uri: str, *a: Any, **k: Any):
        saved = self.server.store.codes.get(code)
        return saved is not None and saved["redirect_uri"] == redirect_uri

    def invalidate_authorization_code(self, client_id: str, code: str, request: Any) -> None:
        with self.server.store.lock:
            self.server.store.codes.pop(code, None)

    # --- tokens --------------------------------------------------------------------------

    def save_bearer_token(self, token: dict[str, Any], request: Any, *a: Any, **k: Any) -> None:
        now = self.server.clock()
        with self.server.store.lock:
            store = self.server.store
            store.access[token["access_token"]] = Issued(
                request.user, now + int(token["expires_in"]) * 1000
            )
            if "refresh_token" in token:
                store.refresh[token["refresh_token"]] = Issued(request.user, now + 86_400_000)
            used = getattr(request, "refresh_token", None)
            if used and used in store.refresh and used != token.get("refresh_token"):
                store.refresh[used].revoked = True  # rotated: the old one is spent

    def validate_refresh_token(self, refresh_token: str, client: Any, request: Any, *a: Any):
        with self.server.store.lock:
            issued = self.server.store.refresh.get(refresh_token)
        if issued is None or issued.revoked or issued.expires_at <= self.server.clock():
            return False
        request.user = issued.user
        return True

    def get_original_scopes(self, refresh_token: str, request: Any, *a: Any, **k: Any):
        return SCOPES[:1]

    def is_within_original_scope(self, request_scopes: list[str], refresh_token: str, *a: Any):
        return set(request_scopes) <= set(SCOPES[:1])


class _QuietServer(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


class AuthorizationServer:
    def __init__(
        self,
        clock: Callable[[], int],
        redirect_uri: str,
        *,
        expires_in: int = 3600,
    ) -> None:
        self.clock = clock
        self.redirect_uri = redirect_uri
        self.expires_in = expires_in
        self.client_id = "lineup-hub"
        self.client_secret = secrets.token_urlsafe(24)
        self.signing_in_as = "ana@acme"
        self.refuse_next_sign_in = False
        self.store = Store()
        self.oauth = WebApplicationServer(
            Validator(self), token_expires_in=lambda request: self.expires_in
        )
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(64)
        self.url = f"http://127.0.0.1:{self._sock.getsockname()[1]}"
        app = Starlette(
            routes=[
                Route("/authorize", self._authorize, methods=["GET"]),
                Route("/token", self._token, methods=["POST"]),
            ]
        )
        self._server = _QuietServer(
            uvicorn.Config(app, log_config=None, log_level="warning", lifespan="off")
        )
        self._thread = threading.Thread(
            target=lambda: asyncio.run(self._server.serve(sockets=[self._sock])),
            name="oauth-server",
            daemon=True,
        )

    @property
    def authorize_url(self) -> str:
        return f"{self.url}/authorize"

    @property
    def token_url(self) -> str:
        return f"{self.url}/token"

    def __enter__(self) -> AuthorizationServer:
        self._thread.start()
        until(lambda: self._server.started, "the authorization server to start")
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=30)
        self._sock.close()

    # --- what the system behind the provider asks, and its operator does ------------------

    def accepts(self, access_token: str) -> str | None:
        """The account an access token signs in, or None if it does not (unknown, revoked or
        past its expiry)."""
        with self.store.lock:
            issued = self.store.access.get(access_token)
        if issued is None or issued.revoked or issued.expires_at <= self.clock():
            return None
        return issued.user

    def revoke_refresh_tokens(self, user: str) -> None:
        with self.store.lock:
            for issued in self.store.refresh.values():
                if issued.user == user:
                    issued.revoked = True

    def sign_out(self, user: str) -> None:
        """Every token of ``user`` stops working (the system kicked them out)."""
        self.revoke_refresh_tokens(user)
        with self.store.lock:
            for issued in self.store.access.values():
                if issued.user == user:
                    issued.revoked = True

    def tokens_of(self, user: str) -> list[str]:
        """Every access and refresh token issued to ``user``."""
        with self.store.lock:
            issued = [*self.store.access.items(), *self.store.refresh.items()]
        return [token for token, to in issued if to.user == user]

    # --- HTTP ----------------------------------------------------------------------------

    async def _authorize(self, request: Request) -> Response:
        uri = str(request.url)
        headers = dict(request.headers)
        try:
            scopes, credentials = self.oauth.validate_authorization_request(uri, "GET", "", headers)
        except FatalClientError as exc:
            return Response(exc.description, status_code=400)
        except OAuth2Error as exc:
            return RedirectResponse(exc.in_uri(exc.redirect_uri), status_code=302)
        if self.refuse_next_sign_in:
            self.refuse_next_sign_in = False
            query = urlencode({"error": "access_denied", "state": credentials["state"]})
            return RedirectResponse(f"{self.redirect_uri}?{query}", status_code=302)
        credentials["user"] = self.signing_in_as
        answer_headers, body, status = self.oauth.create_authorization_response(
            uri, "GET", "", headers, scopes, credentials
        )
        return Response(body or "", status_code=status, headers=answer_headers)

    async def _token(self, request: Request) -> Response:
        body = (await request.body()).decode()
        answer_headers, answer, status = self.oauth.create_token_response(
            str(request.url), "POST", body, dict(request.headers)
        )
        return Response(answer or "", status_code=status, headers=answer_headers)
