"""The in-process app driven as people and agents use it: sign-up, pairing, agent sockets."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

from starlette.testclient import TestClient

from tests.support.agents import AgentSocket, agent_socket
from tests.support.people import Person


class HubClient:
    def __init__(self, client: TestClient) -> None:
        self.client = client

    def sign_up(self, email: str | None = None, name: str = "Ana") -> Person:
        return Person.sign_up(self.client, email, name)

    def pair(
        self, person: Person, name: str = "builder", *, confirm: bool = True
    ) -> dict[str, Any]:
        """Pair an agent with a new code and, as its person would, confirm it (unless
        ``confirm`` is False: the agent then awaits confirmation)."""
        code = person.ok(person.post("/pairing-codes", {}), 201)["code"]
        response = self.client.post(
            "/api/pairing/redeem",
            json={"code": code, "name": name, "runtime": "python", "agentVersion": "1.0"},
        )
        assert response.status_code == 200, response.text
        result: dict[str, Any] = response.json()
        if confirm:
            person.confirm_agent(result["agentId"])
        return result

    def agent(
        self,
        credentials: dict[str, Any],
        last_sequence: int | None = None,
        hello: dict[str, Any] | None = None,
    ) -> AbstractContextManager[AgentSocket]:
        """The agent's socket, connected and welcomed (hello, with ``hello``'s fields too →
        ack → welcome, kept as ``.welcome``), as a context: leaving it closes the socket."""
        return agent_socket(self.client, credentials, last_sequence, hello)

    @contextmanager
    def people_socket(self, person: Person, query: str = "") -> Iterator[Any]:
        """The people's socket of ``person``'s workspace (``query``: more parameters)."""
        person._use()
        url = f"/ws/client?workspaceId={person.workspace_id}{query}"
        with self.client.websocket_connect(url) as ws:
            yield ws
