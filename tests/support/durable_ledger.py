"""A ledger provider whose state is a file, for tests that kill the hub: what the "system"
applied survives the hub's death, so a test can count it afterwards.

Loaded into a real ``lineup serve`` with ``LINEUP_PROVIDER_MODULES=
tests.support.durable_ledger:provider`` and ``LEDGER_DIR``. A file ``hang-before`` in that
directory makes the next call wait forever without applying; ``hang-after`` applies, then
waits forever; either way ``reached`` is written when the call arrives, so the test knows
when to kill the hub. ``ledger.json`` holds the entries, each key's result, how often each
key was applied, and how many calls came.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lineup.core.provider import Accepted, Completed, Draft, Health, Invocation, JobState, Receipt
from lineup.protocol.capabilities import CapabilitySpec, Effect

AMOUNT = {
    "type": "object",
    "properties": {"amount": {"type": "integer"}},
    "required": ["amount"],
    "additionalProperties": False,
}


class DurableLedger:
    def __init__(self, directory: Path) -> None:
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)

    @property
    def id(self) -> str:
        return "dledger"

    def instances(self) -> Sequence[str]:
        return ["books"]

    def describe(self) -> Sequence[CapabilitySpec]:
        return [
            CapabilitySpec(
                id="dledger.entry.post",
                provider="dledger",
                effect=Effect.WRITE,
                description="Post an entry (replays a key safely).",
                input_schema=AMOUNT,
                idempotent_replay=True,
                timeout_s=60,
            ),
            CapabilitySpec(
                id="dledger.note.add",
                provider="dledger",
                effect=Effect.WRITE,
                description="Add a note (cannot be replayed safely).",
                input_schema=AMOUNT,
                timeout_s=60,
            ),
        ]

    def state(self) -> dict[str, Any]:
        path = self.directory / "ledger.json"
        if not path.exists():
            return {"entries": [], "results": {}, "applied": {}, "calls": 0}
        loaded: dict[str, Any] = json.loads(path.read_text())
        return loaded

    def _save(self, state: dict[str, Any]) -> None:
        tmp = self.directory / "ledger.json.tmp"
        tmp.write_text(json.dumps(state))
        os.replace(tmp, self.directory / "ledger.json")

    async def preview(self, call: Invocation) -> Draft:
        return Draft(summary=f"Post {call.params['amount']}", impact="", resource_version=None)

    async def invoke(self, call: Invocation) -> Completed | Accepted:
        state = self.state()
        state["calls"] += 1
        self._save(state)
        if (self.directory / "hang-before").exists():
            (self.directory / "reached").write_text(call.idempotency_key)
            await asyncio.Event().wait()
        key = call.idempotency_key
        if key in state["results"]:
            return Completed(output=state["results"][key])
        state["entries"].append(int(call.params["amount"]))
        state["applied"][key] = state["applied"].get(key, 0) + 1
        state["results"][key] = {"balance": sum(state["entries"])}
        self._save(state)
        if (self.directory / "hang-after").exists():
            (self.directory / "reached").write_text(key)
            await asyncio.Event().wait()
        return Completed(output=state["results"][key], receipt={"entry": len(state["entries"])})

    async def receipt(self, instance: str, idempotency_key: str) -> Receipt | None:
        result = self.state()["results"].get(idempotency_key)
        return None if result is None else Receipt(idempotency_key, Completed(output=result))

    async def job(self, instance: str, job_id: str) -> JobState:
        return JobState("failed")

    async def health(self) -> Health:
        return Health(ok=True)


def provider(settings: object) -> DurableLedger:
    return DurableLedger(Path(os.environ["LEDGER_DIR"]))
