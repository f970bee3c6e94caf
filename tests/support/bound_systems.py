"""Two small provider packages whose people each sign in with their own account, for the
account-binding tests; both are ``PackageAdapter``s built from an in-memory manifest.

* ``crm`` (instance ``acme``) signs in with OAuth against the tests' authorization server
  (``oauth_server.py``): its calls carry the person's access token, which it checks with that
  server; a token the server no longer accepts is answered ``unauthenticated``, as a real
  system answers a session it ended.
* ``erp`` (instance ``main``) signs in with a username and password, exchanged once for a
  session key; it counts its exchanges and remembers every session it handed out.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar

from lineup.core.package import Adapter, Auth, Manifest, OAuthEndpoints
from lineup.core.provider import BoundAccount, Completed, Draft, Exchange, Invocation, ProviderError
from lineup.protocol.errors import ErrorCode
from lineup.providers.adapter import AdapterContext, PackageAdapter, capability, preview
from tests.support.oauth_server import SCOPES, AuthorizationServer

ANY = {"type": "object", "additionalProperties": False}
WHO = {"type": "object", "properties": {"account": {"type": "string"}}}


def _manifest(provider: str, name: str, auth: Auth) -> Manifest:
    return Manifest(
        id=provider,
        version="1.0.0",
        vendor="Tests",
        name=name,
        platform=">=0.1",
        auth=auth,
        adapter=Adapter(entry=f"{provider}:make"),
        capabilities=[
            {
                "id": f"{provider}.orders.read",
                "effect": "read",
                "description": "Who I am on the system, and my orders.",
                "inputSchema": ANY,
                "outputSchema": WHO,
            },
            {
                "id": f"{provider}.orders.close",
                "effect": "write",
                "description": "Close an order.",
                "inputSchema": ANY,
                "preview": True,
            },
        ],
    )


class Crm(PackageAdapter):
    def __init__(self, context: AdapterContext, server: AuthorizationServer) -> None:
        super().__init__(context)
        self.server = server
        self.tokens_seen: list[str] = []

    def _account(self, credentials: Mapping[str, str]) -> str:
        token = credentials.get("accessToken", "")
        self.tokens_seen.append(token)
        account = self.server.accepts(token)
        if account is None:
            raise ProviderError(ErrorCode.UNAUTHENTICATED, "The CRM does not know this session.")
        return account

    @capability("crm.orders.read")
    async def read(self, call: Invocation) -> Completed:
        return Completed(output={"account": self._account(call.credentials)})

    @preview("crm.orders.close")
    async def draft(self, call: Invocation) -> Draft:
        account = self._account(call.credentials)
        return Draft(
            summary=f"Close an order as {account}", impact="One order", resource_version="1"
        )

    @capability("crm.orders.close")
    async def close(self, call: Invocation) -> Completed:
        return Completed(output={"account": self._account(call.credentials)})


class Erp(PackageAdapter):
    PASSWORDS: ClassVar[dict[str, str]] = {
        "bo": "erp-password-bo-7f3a",
        "ana": "erp-password-ana-91c2",
    }

    def __init__(self, context: AdapterContext) -> None:
        super().__init__(context)
        self.exchanges: list[str] = []
        self.sessions: dict[str, str] = {}

    async def exchange(self, request: Exchange) -> BoundAccount:
        self.exchanges.append(request.username)
        if self.PASSWORDS.get(request.username) != request.password:
            raise ProviderError(ErrorCode.UNAUTHENTICATED, "Wrong username or password.")
        session = secrets.token_urlsafe(16)
        self.sessions[session] = request.username
        return BoundAccount(credentials={"session": session}, account=f"{request.username}@erp")

    def _account(self, credentials: Mapping[str, str]) -> str:
        account = self.sessions.get(credentials.get("session", ""))
        if account is None:
            raise ProviderError(ErrorCode.UNAUTHENTICATED, "The ERP does not know this session.")
        return account

    @capability("erp.orders.read")
    async def read(self, call: Invocation) -> Completed:
        return Completed(output={"account": self._account(call.credentials)})

    @preview("erp.orders.close")
    async def draft(self, call: Invocation) -> Draft:
        return Draft(summary="Close", impact="One order", resource_version="1")

    @capability("erp.orders.close")
    async def close(self, call: Invocation) -> Completed:
        return Completed(output={"account": self._account(call.credentials)})


def crm(server: AuthorizationServer, data_dir: Path) -> Crm:
    auth = Auth(
        kind="oauth",
        oauth=OAuthEndpoints(
            authorize_url=server.authorize_url, token_url=server.token_url, scopes=SCOPES[:1]
        ),
    )
    manifest = _manifest("crm", "Acme CRM", auth)
    context = AdapterContext(manifest, data_dir, {"instances": ["acme"]})
    return Crm(context, server)


def erp(data_dir: Path) -> Erp:
    manifest = _manifest("erp", "Main ERP", Auth(kind="password-exchange"))
    return Erp(AdapterContext(manifest, data_dir, {"instances": ["main"]}))
