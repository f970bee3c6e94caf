"""A small provider the governance tests control: a ledger with entries, where every applied
idempotency key is counted, so "a retry does not apply twice" is checked against what the
system itself did, not against what the hub says.

Capabilities (instance ``books``):

* ``ledger.balance.read`` — read, sync: the balance and the version (number of entries).
* ``ledger.entry.post`` — write, sync, preview, idempotent replay: adds an entry; refuses a
  stale ``expected_version`` with ``conflict``.
* ``ledger.note.add`` — write, sync, no preview, **no** idempotent replay.
* ``ledger.batch.submit`` — write, async, idempotent replay: a job done after ``polls`` looks.

Faults: ``hang_after_apply`` (the call applies, then never answers), ``hang_before_apply``
(the call never answers and applies nothing), ``fail_with`` (raise a ProviderError code
once), ``fail_times`` (that many times). Hangs wait on an event the test can set.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from lineup.core.provider import (
    Accepted,
    Completed,
    Draft,
    Health,
    Invocation,
    JobState,
    ProviderError,
    Receipt,
)
from lineup.protocol.capabilities import CapabilitySpec, Effect, Mode
from lineup.protocol.errors import ErrorCode

API_KEY = "ledger-secret-key-0123456789"

AMOUNT = {
    "type": "object",
    "properties": {
        "amount": {"type": "integer", "minimum": -1_000_000, "maximum": 1_000_000},
        "memo": {"type": "string", "maxLength": 200},
    },
    "required": ["amount"],
    "additionalProperties": False,
}


@dataclass
class Faults:
    hang_after_apply: int = 0
    hang_before_apply: int = 0
    fail_with: ErrorCode | None = None
    fail_times: int = 0
    released: asyncio.Event = field(default_factory=asyncio.Event)


class LedgerProvider:
    def __init__(self, *, timeout_s: float = 5.0, polls: int = 1) -> None:
        self.entries: list[dict[str, Any]] = []
        self.applied: dict[str, int] = {}
        """How many times each idempotency key changed the ledger (must never exceed 1)."""
        self.results: dict[str, Completed | Accepted] = {}
        self.jobs: dict[str, dict[str, Any]] = {}
        self.seen_credentials: list[dict[str, str]] = []
        self.faults = Faults()
        self.timeout_s = timeout_s
        self.polls = polls
        self.calls = 0

    @property
    def id(self) -> str:
        return "ledger"

    def instances(self) -> Sequence[str]:
        return ["books"]

    def describe(self) -> Sequence[CapabilitySpec]:
        base = {"provider": "ledger", "timeout_s": self.timeout_s}
        return [
            CapabilitySpec(
                id="ledger.balance.read",
                effect=Effect.READ,
                description="The ledger's balance.",
                input_schema={"type": "object", "additionalProperties": False},
                output_schema={
                    "type": "object",
                    "properties": {"balance": {"type": "integer"}, "version": {"type": "string"}},
                },
                **base,
            ),
            CapabilitySpec(
                id="ledger.entry.post",
                effect=Effect.WRITE,
                description="Post an entry to the ledger.",
                input_schema=AMOUNT,
                preview=True,
                idempotent_replay=True,
                **base,
            ),
            CapabilitySpec(
                id="ledger.note.add",
                effect=Effect.WRITE,
                description="Add a note (cannot be replayed safely).",
                input_schema=AMOUNT,
                **base,
            ),
            CapabilitySpec(
                id="ledger.batch.submit",
                effect=Effect.WRITE,
                mode=Mode.ASYNC,
                description="Submit a batch of entries, processed as a job.",
                input_schema=AMOUNT,
                preview=True,
                idempotent_replay=True,
                **base,
            ),
        ]

    @property
    def version(self) -> str:
        return f"v{len(self.entries)}"

    @property
    def balance(self) -> int:
        return sum(int(e["amount"]) for e in self.entries)

    def _check(self, call: Invocation) -> None:
        self.seen_credentials.append(dict(call.credentials))
        if call.credentials.get("apiKey") != API_KEY:
            raise ProviderError(ErrorCode.FORBIDDEN, "The ledger refuses calls without its key.")

    async def preview(self, call: Invocation) -> Draft:
        self._check(call)
        amount = int(call.params["amount"])
        return Draft(
            summary=f"Post {amount} to the books",
            impact=f"The balance goes from {self.balance} to {self.balance + amount}.",
            resource_version=self.version,
            data={"balanceBefore": self.balance, "balanceAfter": self.balance + amount},
        )

    def _apply(self, call: Invocation) -> Completed:
        self.applied[call.idempotency_key] = self.applied.get(call.idempotency_key, 0) + 1
        self.entries.append({"amount": int(call.params["amount"]), "key": call.idempotency_key})
        done = Completed(
            output={"balance": self.balance, "version": self.version},
            receipt={"entry": len(self.entries), "key": call.idempotency_key},
        )
        self.results[call.idempotency_key] = done
        return done

    async def invoke(self, call: Invocation) -> Completed | Accepted:
        self.calls += 1
        self._check(call)
        if self.faults.fail_times > 0 and self.faults.fail_with is not None:
            self.faults.fail_times -= 1
            raise ProviderError(self.faults.fail_with, "The ledger is busy.")
        if self.faults.hang_before_apply > 0:
            self.faults.hang_before_apply -= 1
            await self.faults.released.wait()
        if call.capability == "ledger.balance.read":
            return Completed(output={"balance": self.balance, "version": self.version})
        if call.idempotency_key in self.results:
            return self.results[call.idempotency_key]
        if call.expected_version is not None and call.expected_version != self.version:
            raise ProviderError(
                ErrorCode.CONFLICT,
                f"The books moved on (version {self.version}, approved {call.expected_version}).",
            )
        if call.capability == "ledger.batch.submit":
            job_id = f"job-{len(self.jobs) + 1}"
            self.jobs[job_id] = {"call": call, "polls": 0}
            accepted = Accepted(job_id=job_id, receipt={"job": job_id})
            self.results[call.idempotency_key] = accepted
            return accepted
        done = self._apply(call)
        if self.faults.hang_after_apply > 0:
            self.faults.hang_after_apply -= 1
            await self.faults.released.wait()
        return done

    async def receipt(self, instance: str, idempotency_key: str) -> Receipt | None:
        found = self.results.get(idempotency_key)
        return None if found is None else Receipt(idempotency_key, found)

    async def job(self, instance: str, job_id: str) -> JobState:
        job = self.jobs.get(job_id)
        if job is None:
            raise ProviderError(ErrorCode.NOT_FOUND, f"No job {job_id}.")
        job["polls"] += 1
        if job["polls"] < self.polls:
            return JobState("running")
        if "done" not in job:
            job["done"] = self._apply(job["call"])
        done: Completed = job["done"]
        return JobState("succeeded", output=done.output, receipt=done.receipt)

    async def health(self) -> Health:
        return Health(ok=True)
