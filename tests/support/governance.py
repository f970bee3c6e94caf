"""A workspace set up for governed actions, for the in-process hub's tests: Ana owns it and
the project "Books", whose policy allows the test ledger's capabilities (``providers.py``);
her agent is in the project's conversation. The agent's socket opens on first use."""

from __future__ import annotations

from contextlib import ExitStack
from typing import Any

import httpx
from starlette.testclient import TestClient

from lineup.hub.governance import credentials
from lineup.hub.state import HubState
from tests.support.agents import AgentSocket
from tests.support.hub_client import HubClient
from tests.support.people import Person
from tests.support.providers import API_KEY, LedgerProvider


class World:
    def __init__(self, client: TestClient, ledger: LedgerProvider | None = None) -> None:
        self.client = client
        self.ledger = ledger
        self.hub = HubClient(client)
        self.state: HubState = client.app.state.hub  # type: ignore[attr-defined]
        assert client.portal is not None
        client.portal.call(credentials.put, self.state, "ledger", "books", {"apiKey": API_KEY})
        self.ana = self.hub.sign_up(name="Ana")
        self.creds = self.hub.pair(self.ana)
        self.agent_id: str = self.creds["agentId"]
        self.project = self.ana.send("/projects", {"name": "Books"}, 201)["id"]
        self.ana.send(
            "/policy/rules",
            {
                "capability": "ledger.*",
                "effect": "allow",
                "projectId": self.project,
                "roles": ["owner", "editor"],
            },
            201,
        )
        self.conversation = self.ana.send(
            "/conversations",
            {"title": "Month end", "agentIds": [self.agent_id], "projectId": self.project},
            201,
        )["id"]
        self._stack = ExitStack()
        self._agent: AgentSocket | None = None
        self._n = 0

    def close(self) -> None:
        self._stack.close()

    @property
    def agent(self) -> AgentSocket:
        if self._agent is None:
            self._agent = self._stack.enter_context(self.hub.agent(self.creds))
        return self._agent

    # --- the agent's side ---------------------------------------------------------------

    def invoke(
        self,
        capability: str,
        params: dict[str, Any],
        invocation_id: str | None = None,
        conversation: str | None = None,
        **env: Any,
    ) -> dict[str, Any]:
        """The invoke's answer (ack or error)."""
        self._n += 1
        payload = {
            "invocationId": invocation_id or f"i{self._n}",
            "capability": capability,
            "params": params,
        }
        return self.agent.call(
            "capability.invoke", payload, conversationId=conversation or self.conversation, **env
        )

    def result(self, invocation_id: str) -> dict[str, Any]:
        """The next capability.result frame of that invocation."""
        while True:
            frame = self.agent.next_of("capability.result")
            if frame["payload"]["invocationId"] == invocation_id:
                return dict(frame["payload"])

    def final(self, invocation_id: str) -> dict[str, Any]:
        """The invocation's terminal capability.result."""
        while True:
            result = self.result(invocation_id)
            if result["status"] not in ("waiting_for_approval", "accepted"):
                return result

    def approval_of_a_write(self, conversation: str | None = None) -> dict[str, Any]:
        """The agent posts a ledger entry; the approval that waits for it."""
        self._n += 1
        invocation = f"w{self._n}"
        ack = self.invoke("ledger.entry.post", {"amount": 5}, invocation, conversation)
        assert ack["type"] == "ack", ack
        waiting = self.result(invocation)
        assert waiting["status"] == "waiting_for_approval", waiting
        return dict(self.ana.read(f"/approvals/{waiting['approvalId']}"))

    # --- the people's side --------------------------------------------------------------

    def pending(self, person: Person | None = None) -> list[dict[str, Any]]:
        who = person or self.ana
        return list(who.read("/approvals?view=waiting")["approvals"])

    def decide(
        self, approval_id: str, body: dict[str, Any], person: Person | None = None
    ) -> httpx.Response:
        who = person or self.ana
        return who.post(f"/approvals/{approval_id}/decision", body)

    def invite(self, by: Person, status: int = 201, **body: Any) -> Any:
        return by.ok(by.post("/invitations", body), status)

    def join(self, code: str, name: str = "Bo") -> Person:
        self.client.cookies.clear()
        return Person.sign_up(self.client, None, name, invitationCode=code)

    def member(self, role: str, name: str = "Bo") -> Person:
        """Someone who joins the workspace and the project with ``role``."""
        code = self.invite(self.ana, projectId=self.project, projectRole=role)["code"]
        return self.join(code, name)


def put(person: Person, path: str, body: dict[str, Any]) -> httpx.Response:
    person._use()
    return person.client.put(person.url(path), json=body, headers=person.headers())
