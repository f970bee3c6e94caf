"""A signed-in person of a workspace, over any HTTP client: Starlette's ``TestClient`` (an
``httpx.Client``) for the in-process app, or an ``httpx.Client`` on a real hub process.

``get`` and ``post`` return the response, for tests about statuses; ``ok`` checks one and
returns its JSON; ``read`` and ``send`` do both in one step.
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass
from typing import Any

import httpx

from lineup.protocol.ids import new_id

PASSWORD = "correct horse battery"
REFRESH_PATH = "/api/auth/refresh"


@dataclass
class Person:
    client: httpx.Client
    email: str
    csrf: str
    workspace_id: str
    user_id: str
    session: str = ""
    """The access token (cookie ``lineup_session``)."""
    display_name: str = "Ana"
    refresh_token: str = ""
    """The refresh token (cookie ``lineup_refresh``, sent to the refresh route only)."""

    @classmethod
    def sign_up(
        cls,
        client: httpx.Client,
        email: str | None = None,
        name: str = "Ana",
        **extra: str,
    ) -> Person:
        """A new account with its own workspace (``extra``: ``workspaceName``, …)."""
        email = email or f"{new_id('u').lower()}@example.test"
        client.cookies.clear()
        response = client.post(
            "/api/auth/signup",
            json={"email": email, "password": PASSWORD, "displayName": name, **extra},
        )
        assert response.status_code == 201, response.text
        body = response.json()
        session = response.cookies.get("lineup_session") or client.cookies.get("lineup_session")
        refresh = response.cookies.get("lineup_refresh") or ""
        return cls(
            client,
            email,
            body["csrfToken"],
            body["workspaceId"],
            body["user"]["id"],
            session or "",
            name,
            refresh,
        )

    @classmethod
    def at(
        cls,
        hub_url: str,
        email: str | None = None,
        name: str = "Ana",
        *,
        verify: ssl.SSLContext | bool = True,
        **extra: str,
    ) -> Person:
        """Sign up on a hub process, with an HTTP client of the person's own (``close`` it);
        ``verify`` is how it trusts an https hub (a context trusting its own certificate)."""
        client = httpx.Client(base_url=hub_url, timeout=15, trust_env=False, verify=verify)
        return cls.sign_up(client, email, name, **extra)

    def headers(self, **extra: str) -> dict[str, str]:
        return {"X-CSRF-Token": self.csrf, **extra}

    def url(self, path: str) -> str:
        return f"/api/workspaces/{self.workspace_id}{path}"

    def get(self, path: str, **kwargs: Any) -> httpx.Response:
        self._use()
        return self.client.get(self.url(path), **kwargs)

    def post(self, path: str, body: dict[str, Any] | None = None, **headers: str) -> httpx.Response:
        self._use()
        return self.client.post(self.url(path), json=body or {}, headers=self.headers(**headers))

    def ok(self, response: httpx.Response, status: int = 200) -> Any:
        assert response.status_code == status, response.text
        return response.json()

    def read(self, path: str) -> Any:
        """The JSON of a ``GET`` answered 200."""
        return self.ok(self.get(path))

    def send(self, path: str, body: dict[str, Any] | None = None, status: int = 200) -> Any:
        """The JSON of a ``POST`` answered with ``status``."""
        return self.ok(self.post(path, body), status)

    def confirm_agent(self, agent_id: str, name: str | None = None) -> Any:
        """What a person does after an agent redeemed their pairing code: confirm it (maybe
        under another name), so that it can be given work."""
        return self.send(f"/agents/{agent_id}/confirm", {"name": name} if name else {})

    def refresh(self, **headers: str) -> httpx.Response:
        """Spend the refresh token for a new pair, as the web app does; on success the person
        holds the new tokens."""
        self._use()
        response = self.client.post(REFRESH_PATH, headers={"X-CSRF-Token": self.csrf, **headers})
        if response.status_code == 200:
            self.session = response.cookies["lineup_session"]
            self.refresh_token = response.cookies["lineup_refresh"]
        return response

    def cookies(self) -> dict[str, str]:
        """The cookies that sign this person in (a browser context takes them)."""
        return {"lineup_session": self.session, "lineup_csrf": self.csrf}

    def close(self) -> None:
        self.client.close()

    def _use(self) -> None:
        """Several people may share one client (the in-process app has one cookie jar): make
        its cookies this person's."""
        self.client.cookies.clear()
        self.client.cookies.set("lineup_session", self.session)
        self.client.cookies.set("lineup_csrf", self.csrf)
        if self.refresh_token:
            self.client.cookies.set("lineup_refresh", self.refresh_token, path=REFRESH_PATH)
