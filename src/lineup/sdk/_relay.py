"""Relay mode (seed 000 §3.1) as the SDK sees it: its configuration.

In relay mode the agent serves LineUp itself, as in direct mode, but nobody connects to it:
its host (``lineup.direct.run`` provides one) connects out to a WuKongIM server as the
agent's IM user and answers the people configured, whose apps connect out to the same server.
The configuration is ``{"mode": "relay", "server", "api", "uid", "token", "people"}`` in the
credentials file, or ``LINEUP_MODE=relay`` with ``LINEUP_RELAY_SERVER``, ``LINEUP_RELAY_API``,
``LINEUP_RELAY_UID``, ``LINEUP_RELAY_TOKEN`` and ``LINEUP_RELAY_PEOPLE`` (comma-separated).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

_TRUE = ("1", "true", "yes", "on")


@dataclass(frozen=True, slots=True)
class RelayOptions:
    """Where the agent's IM user connects and whom it answers.

    ``server`` is the WuKongIM address (``wss://``, ``ws://`` or ``tcp://``), ``api`` the
    TangSengDaoDao HTTP API (message sync), ``uid`` and ``token`` the agent's IM user (the
    token stays out of ``repr()``), ``people`` the uids whose messages it accepts — everyone
    else is ignored. Plain ``ws://``/``tcp://`` to another machine needs
    ``allow_plaintext``.
    """

    server: str
    api: str
    uid: str
    token: str = field(repr=False)
    people: tuple[str, ...]
    person_name: str | None = None
    allow_plaintext: bool = False

    def __post_init__(self) -> None:
        if urlsplit(self.server).scheme not in ("ws", "wss", "tcp"):
            raise ValueError("The relay server must be a ws://, wss:// or tcp:// address.")
        if urlsplit(self.api).scheme not in ("http", "https"):
            raise ValueError("The relay API must be an http:// or https:// address.")
        if not self.uid.strip() or "/" in self.uid or self.uid in (".", ".."):
            raise ValueError("The relay uid must be a non-empty IM user id without '/'.")
        if not self.token.strip():
            raise ValueError("The relay token (the agent's IM token) must not be empty.")
        people = tuple(p.strip() for p in self.people if p.strip())
        if not people:
            raise ValueError("Relay mode needs at least one person's uid to answer (people).")
        if self.uid in people:
            raise ValueError("The agent's own uid cannot be one of the people it answers.")
        object.__setattr__(self, "people", people)

    @classmethod
    def from_json(cls, data: Mapping[str, Any], *, source: str = "config") -> RelayOptions:
        """From ``{"mode": "relay", "server", "api", "uid", "token", "people", "personName"?,
        "allowPlaintext"?}``."""
        values: dict[str, str] = {}
        for key in ("server", "api", "uid", "token"):
            value = data.get(key)
            if not isinstance(value, str) or not value.strip():
                raise ValueError(f'{source} is in relay mode but has no "{key}".')
            values[key] = value.strip()
        people = data.get("people")
        if not isinstance(people, list) or not all(isinstance(p, str) for p in people):
            raise ValueError(f'{source}: "people" must be a list of uids.')
        person = data.get("personName")
        if person is not None and not isinstance(person, str):
            raise ValueError(f'{source}: "personName" must be a string.')
        plain = data.get("allowPlaintext", False)
        if not isinstance(plain, bool):
            raise ValueError(f'{source}: "allowPlaintext" must be true or false.')
        return cls(people=tuple(people), person_name=person, allow_plaintext=plain, **values)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> RelayOptions:
        env = os.environ if environ is None else environ
        missing = [
            name
            for name in ("SERVER", "API", "UID", "TOKEN", "PEOPLE")
            if not env.get(f"LINEUP_RELAY_{name}", "").strip()
        ]
        if missing:
            raise ValueError(
                "LINEUP_MODE=relay needs "
                + ", ".join(f"LINEUP_RELAY_{name}" for name in missing)
                + " (see docs/relay-mode.md)."
            )
        return cls(
            server=env["LINEUP_RELAY_SERVER"].strip(),
            api=env["LINEUP_RELAY_API"].strip(),
            uid=env["LINEUP_RELAY_UID"].strip(),
            token=env["LINEUP_RELAY_TOKEN"].strip(),
            people=tuple(env["LINEUP_RELAY_PEOPLE"].split(",")),
            person_name=env.get("LINEUP_RELAY_PERSON") or None,
            allow_plaintext=env.get("LINEUP_RELAY_ALLOW_PLAINTEXT", "").strip().lower() in _TRUE,
        )

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "mode": "relay",
            "server": self.server,
            "api": self.api,
            "uid": self.uid,
            "token": self.token,
            "people": list(self.people),
        }
        if self.person_name:
            data["personName"] = self.person_name
        if self.allow_plaintext:
            data["allowPlaintext"] = True
        return data


__all__ = ["RelayOptions"]
