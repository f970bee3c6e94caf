"""The scheduling provider: one SQLite database per plant, behind the Provider interface.

Publishing is asynchronous, as it is in the production-scheduling systems this stands for:
``invoke`` records a job under the call's idempotency key and answers ``Accepted``; the job
is performed the first time it is polled with :meth:`SchedulingProvider.job`. The hub's core
is what follows a job (seed 003 §5: the core registers the job id and polls it), so tying the
job's progress to the poll makes every test deterministic without a background task that
could outlive its test or the provider. The core must treat ``running`` as normal all the
same, which :attr:`Faults.job_polls_before_done` lets its tests exercise.

The package's modules import each other relatively, so the hub can import the package under a
name of its own (``lineup_pkg_scheduling_…``) from wherever it unpacked it, and the tree's
copy (``lineup.providers.scheduling``) stays the same code.
"""

from __future__ import annotations

import asyncio
import hmac
import os
import re
import secrets
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

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
from lineup.protocol.capabilities import CapabilitySpec
from lineup.protocol.errors import ErrorCode, InvalidArgument
from lineup.protocol.tools import validate_arguments
from lineup.providers.adapter import AdapterContext, PackageAdapter, capability, preview

from . import _demo
from ._capabilities import PROVIDER_ID, catalogue, manifest
from ._planner import compare, load, plan
from ._store import Job, MissingDatabase, PlantStore

P = ParamSpec("P")
T = TypeVar("T")

_INSTANCE_NAME = re.compile(r"^[A-Za-z0-9_\-][A-Za-z0-9_.\-]{0,99}$")


@dataclass
class Faults:
    """Ways to make the provider misbehave, for the hub's tests of timeouts and unknown
    results. A hang awaits :attr:`released` (never a timer): :meth:`release` lets every hung
    call go on as if nothing had happened; :attr:`hanging` is set once a call is parked (clear
    it to wait for the next one)."""

    hang_publish_after_recording: bool = False
    """A publish records its job, then hangs: a timeout's receipt finds the job."""
    hang_publish_before_recording: bool = False
    """A publish hangs before recording anything: a timeout's receipt finds nothing."""
    hang_reads: bool = False
    """Every read capability hangs."""
    hang_preview: bool = False
    """``preview()`` of a publish hangs."""
    job_polls_before_done: int = 0
    """A job answers ``running`` this many polls before it is performed."""
    released: asyncio.Event = field(default_factory=asyncio.Event)
    hanging: asyncio.Event = field(default_factory=asyncio.Event)

    def release(self) -> None:
        self.released.set()

    async def hang(self) -> None:
        self.hanging.set()
        await self.released.wait()


def _utc_now() -> datetime:
    return datetime.now(UTC)


class SchedulingProvider(PackageAdapter):
    """Production scheduling for the plants under ``root`` (``<root>/<instance>.db``).

    ``api_keys`` maps each instance to the API key a call on it must carry
    (``credentials["apiKey"]``): the hub holds the key and injects it per call; the provider
    compares it and keeps nothing of what it received. ``context`` is the hub's, when the
    package was loaded by it (:func:`make`); without one the tree's manifest describes it."""

    def __init__(
        self,
        root: Path | str,
        api_keys: Mapping[str, str],
        *,
        faults: Faults | None = None,
        clock: Callable[[], datetime] = _utc_now,
        context: AdapterContext | None = None,
    ) -> None:
        for instance in api_keys:
            if not _INSTANCE_NAME.match(instance):
                raise ValueError(f"{instance!r} cannot name a plant's database file")
        super().__init__(context or AdapterContext(manifest=manifest(), data_dir=Path(root)))
        self._root = Path(root)
        self._api_keys = dict(api_keys)
        self._stores = {name: PlantStore(self._root / f"{name}.db") for name in api_keys}
        self.faults = faults or Faults()
        self._clock = clock
        self._specs = catalogue(sorted(self._api_keys), self.manifest)
        self._by_id = {spec.id: spec for spec in self._specs}
        self._polls: dict[tuple[str, str], int] = {}

    # -- the Provider interface -------------------------------------------------------------

    def instances(self) -> Sequence[str]:
        return sorted(self._api_keys)

    @capability("scheduling.orders.query")
    async def query_orders(self, call: Invocation) -> Completed:
        return await self._read(call, _query_orders)

    @capability("scheduling.resources.load")
    async def resource_load(self, call: Invocation) -> Completed:
        return await self._read(call, _resource_load)

    @capability("scheduling.schedule.preview")
    async def trial_schedule(self, call: Invocation) -> Completed:
        return await self._read(call, _trial_schedule)

    @capability("scheduling.schedule.publish")
    async def publish(self, call: Invocation) -> Accepted:
        _, store = self._admit(call)
        return await self._publish(call, store)

    @preview("scheduling.schedule.publish")
    async def publish_draft(self, call: Invocation) -> Draft:
        _, store = self._admit(call)
        if self.faults.hang_preview:
            await self.faults.hang()
        return await self._run(_publish_draft, store, call.instance, call.params)

    async def receipt(self, instance: str, idempotency_key: str) -> Receipt | None:
        """The publish job of ``idempotency_key``: ``Completed`` with its output once it
        succeeded, else ``Accepted`` with its job id (running, or failed: :meth:`job` tells
        the error). Reads keep no record of their keys, so theirs are ``None``."""
        store = self._store(instance)
        job = await self._run(store.job_by_key, idempotency_key)
        if job is None:
            return None
        if job.status == "succeeded" and job.result is not None:
            outcome: Completed | Accepted = Completed(
                output=job.result, receipt=_job_receipt(instance, job)
            )
        else:
            outcome = Accepted(job_id=job.id, receipt=_job_receipt(instance, job))
        return Receipt(idempotency_key=idempotency_key, outcome=outcome)

    async def job(self, instance: str, job_id: str) -> JobState:
        store = self._store(instance)
        job = await self._run(store.job, job_id)
        if job is None:
            raise ProviderError(ErrorCode.NOT_FOUND, f"There is no job {job_id} on {instance}.")
        if job.status == "running":
            polls = self._polls.get((instance, job_id), 0)
            if polls < self.faults.job_polls_before_done:
                self._polls[(instance, job_id)] = polls + 1
            else:
                self._polls.pop((instance, job_id), None)
                job = await self._run(store.perform_job, job_id, self._clock().isoformat())
        return _job_state(instance, job)

    async def health(self) -> Health:
        problems: list[str] = []
        for instance, store in sorted(self._stores.items()):
            try:
                missing = await asyncio.to_thread(store.missing_tables)
            except MissingDatabase:
                problems.append(f"{instance}: the database is not there")
            except sqlite3.Error as exc:
                problems.append(f"{instance}: the database does not open ({exc})")
            else:
                if missing:
                    problems.append(f"{instance}: tables missing: {', '.join(missing)}")
        checked = int(self._clock().timestamp() * 1000)
        if problems:
            return Health(ok=False, detail="; ".join(problems), checked_at_ms=checked)
        return Health(ok=True, detail=f"{len(self._stores)} plant(s)", checked_at_ms=checked)

    # -- setting plants up ------------------------------------------------------------------

    async def initialize(self, instance: str) -> None:
        """Create the instance's database and its tables, empty (idempotent)."""
        await asyncio.to_thread(self._store(instance).initialize)

    async def seed_demo(self, instance: str) -> None:
        """Fill an empty instance with the demo plant (nothing happens to one with data)."""
        store = self._store(instance)
        await asyncio.to_thread(_seed_demo, store, self._clock().isoformat())

    # -- the parts --------------------------------------------------------------------------

    def _store(self, instance: str) -> PlantStore:
        store = self._stores.get(instance)
        if store is None:
            raise ProviderError(
                ErrorCode.NOT_FOUND, f"The scheduling system has no plant {instance!r}."
            )
        return store

    def _admit(self, call: Invocation) -> tuple[CapabilitySpec, PlantStore]:
        """The capability and the plant of ``call``, once it may run: known, with the
        instance's key, with parameters that fit the capability's input schema."""
        spec = self._by_id.get(call.capability)
        if spec is None:
            raise ProviderError(
                ErrorCode.NOT_FOUND, f"The scheduling system has no capability {call.capability}."
            )
        store = self._store(call.instance)
        given = call.credentials.get("apiKey", "")
        expected = self._api_keys[call.instance]
        if not given or not hmac.compare_digest(given.encode(), expected.encode()):
            raise ProviderError(
                ErrorCode.FORBIDDEN,
                f"The scheduling system refused the call: the API key for {call.instance}"
                " is missing or wrong.",
            )
        try:
            validate_arguments(spec.input_schema, call.params)
        except InvalidArgument as exc:
            raise ProviderError(
                ErrorCode.INVALID_ARGUMENT, exc.message, details=exc.details
            ) from None
        return spec, store

    async def _read(
        self, call: Invocation, work: Callable[[PlantStore, Mapping[str, Any]], dict[str, Any]]
    ) -> Completed:
        _, store = self._admit(call)
        if self.faults.hang_reads:
            await self.faults.hang()
        output = await self._run(work, store, call.params)
        return Completed(output=output, receipt={"instance": call.instance})

    async def _run(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return await asyncio.to_thread(fn, *args, **kwargs)
        except MissingDatabase:
            raise ProviderError(
                ErrorCode.UNAVAILABLE, "The plant's database has not been set up."
            ) from None
        except sqlite3.Error:
            raise ProviderError(
                ErrorCode.UNAVAILABLE, "The plant's database could not be read or written."
            ) from None

    async def _publish(self, call: Invocation, store: PlantStore) -> Accepted:
        if not call.idempotency_key:
            raise ProviderError(ErrorCode.INVALID_ARGUMENT, "A publish needs an idempotency key.")
        if self.faults.hang_publish_before_recording:
            await self.faults.hang()
        draft_id = str(call.params["draftId"])
        based_on = int(call.params["basedOnVersion"])
        found = await self._run(store.job_by_key, call.idempotency_key)
        if found is not None:
            job = found
        else:
            draft = await self._run(store.draft, draft_id)
            _check_draft(draft_id, draft, based_on)
            job, _ = await self._run(
                store.record_job,
                idempotency_key=call.idempotency_key,
                execution_id=call.execution_id,
                draft_id=draft_id,
                based_on_version=based_on,
                expected_version=call.expected_version,
            )
        if job.draft_id != draft_id or job.based_on_version != based_on:
            raise ProviderError(
                ErrorCode.CONFLICT,
                "This idempotency key was used for another publish"
                f" ({job.draft_id} on version {job.based_on_version}).",
            )
        if self.faults.hang_publish_after_recording:
            await self.faults.hang()
        return Accepted(job_id=job.id, receipt=_job_receipt(call.instance, job))


DEMO_PLANT = "plant-1"


def make(context: AdapterContext) -> SchedulingProvider:
    """The package's entry point: the plants ``config["instances"]`` names (the demo plant
    when it names none) under ``config["root"]`` (else the provider's data directory), each
    with its API key in the system's own configuration, ``<root>/<plant>.key`` (mode 0600,
    made on first start, as an operator would create an API key in the real system)."""
    root = Path(context.config.get("root") or context.data_dir)
    root.mkdir(parents=True, exist_ok=True, mode=0o700)
    plants = [str(p) for p in context.config.get("instances") or [DEMO_PLANT]]
    keys = {plant: system_key(root / f"{plant}.key") for plant in plants}
    return SchedulingProvider(root, keys, context=context)


def system_key(path: Path) -> str:
    """The API key the plant's system keeps at ``path``, made the first time."""
    if path.exists():
        return path.read_text().strip()
    key = secrets.token_urlsafe(32)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(key + "\n")
    return key


# -- the work, in a worker thread -----------------------------------------------------------


def _query_orders(store: PlantStore, params: Mapping[str, Any]) -> dict[str, Any]:
    orders = store.query_orders(
        status=params.get("status"),
        due_before=params.get("dueBefore"),
        limit=int(params.get("limit", 100)),
    )
    return {
        "orders": [
            {
                "id": o.id,
                "product": o.product,
                "quantity": o.quantity,
                "dueDate": o.due_date,
                "priority": o.priority,
                "status": o.status,
            }
            for o in orders
        ]
    }


def _resource_load(store: PlantStore, params: Mapping[str, Any]) -> dict[str, Any]:
    plant = store.plant()
    version, assignments = store.published()
    first, last = params.get("from"), params.get("to")
    if first is not None and last is not None and first > last:
        raise ProviderError(ErrorCode.INVALID_ARGUMENT, f"`from` ({first}) is after `to` ({last}).")
    days = [d for d in plant.days if (first is None or d >= first) and (last is None or d <= last)]
    return {
        "scheduleVersion": version,
        "resources": [{"id": r, "name": name} for r, name in plant.resources.items()],
        "load": load(assignments, plant.calendars, days),
    }


def _trial_schedule(store: PlantStore, params: Mapping[str, Any]) -> dict[str, Any]:
    plant = store.plant()
    version, _ = store.published()
    days = plant.days[: int(params.get("horizonDays", len(plant.days)))]
    orders = [o for o in plant.orders if o.status != "done"]
    wanted = params.get("orderIds")
    if wanted is not None:
        known = {o.id for o in orders}
        unknown = sorted(set(wanted) - known)
        if unknown:
            raise ProviderError(
                ErrorCode.NOT_FOUND,
                f"No open order {', '.join(unknown)} in the plant.",
                details={"orderIds": unknown},
            )
        orders = [o for o in orders if o.id in set(wanted)]
    result = plan(orders=orders, operations=plant.operations, calendars=plant.calendars, days=days)
    draft = {
        "basedOnVersion": version,
        "horizon": {"from": days[0], "to": days[-1]} if days else None,
        "assignments": result.assignments,
        "lateOrders": result.late_orders,
        "load": result.load,
    }
    return {"draftId": store.add_draft(draft), **draft}


def _check_draft(draft_id: str, draft: Mapping[str, Any] | None, based_on: int) -> None:
    if draft is None:
        raise ProviderError(ErrorCode.NOT_FOUND, f"There is no trial schedule {draft_id}.")
    if draft["basedOnVersion"] != based_on:
        raise ProviderError(
            ErrorCode.INVALID_ARGUMENT,
            f"{draft_id} was made against version {draft['basedOnVersion']}, not {based_on}.",
        )


def _publish_draft(store: PlantStore, instance: str, params: Mapping[str, Any]) -> Draft:
    draft_id = str(params["draftId"])
    based_on = int(params["basedOnVersion"])
    draft = store.draft(draft_id)
    _check_draft(draft_id, draft, based_on)
    assert draft is not None
    current, published = store.published()
    if current != based_on:
        raise ProviderError(
            ErrorCode.CONFLICT,
            f"{draft_id} is stale: it was made against version {based_on}, and version"
            f" {current} has been published since. Make a new trial schedule.",
        )
    assignments = draft["assignments"]
    late = draft["lateOrders"]
    changes = compare(published, assignments)
    resources = {a["resourceId"] for a in assignments}
    horizon = draft.get("horizon") or {}
    summary = (
        f"Publish trial schedule {draft_id} on {instance} as version {current + 1}"
        f" (replacing version {current}): {len(assignments)} operations on"
        f" {len(resources)} resources"
        + (f", {horizon['from']} to {horizon['to']}." if horizon else ".")
    )
    late_words = (
        "no order late"
        if not late
        else f"{len(late)} order(s) late: "
        + ", ".join(
            f"{o['orderId']} ({o['daysLate']} day(s))"
            if o["daysLate"] is not None
            else f"{o['orderId']} (not planned in the horizon)"
            for o in late
        )
    )
    impact = (
        f"{changes.moved} operation(s) move, {changes.added} added, {changes.removed} removed;"
        f" {late_words}; resources whose plan changes: "
        + (", ".join(changes.resources) if changes.resources else "none")
        + "."
    )
    data = {
        **draft,
        "changes": {
            "moved": changes.moved,
            "added": changes.added,
            "removed": changes.removed,
            "resources": changes.resources,
        },
    }
    return Draft(summary=summary, impact=impact, resource_version=str(current), data=data)


def _seed_demo(store: PlantStore, published_at: str) -> None:
    store.initialize()
    if not store.is_empty():
        return
    orders = [*_demo.ORDERS, _demo.RUSH_ORDER]
    calendars = _demo.calendars()
    store.load_plant(
        resources=_demo.RESOURCES,
        calendars=calendars,
        orders=orders,
        operations=_demo.operations({o.id for o in orders}),
    )
    before_rush = [o for o in _demo.ORDERS if o.status != "done"]
    first = plan(
        orders=before_rush,
        operations=_demo.operations({o.id for o in before_rush}),
        calendars=calendars,
        days=sorted({d for days in calendars.values() for d in days}),
    )
    store.publish_initial(first.assignments, published_at)


def _job_receipt(instance: str, job: Job) -> dict[str, Any]:
    receipt: dict[str, Any] = {
        "system": PROVIDER_ID,
        "instance": instance,
        "jobId": job.id,
        "idempotencyKey": job.idempotency_key,
        "draftId": job.draft_id,
        "status": job.status,
    }
    if job.status == "succeeded" and job.result is not None:
        receipt["publishedVersion"] = job.result["publishedVersion"]
    return receipt


def _job_state(instance: str, job: Job) -> JobState:
    receipt = _job_receipt(instance, job)
    if job.status == "running":
        return JobState(status="running", receipt=receipt)
    if job.status == "succeeded":
        return JobState(status="succeeded", output=job.result, receipt=receipt)
    error = (job.result or {}).get("error", {})
    try:
        code = ErrorCode(error.get("code", ""))
    except ValueError:
        code = ErrorCode.UNKNOWN_RESULT
    return JobState(
        status="failed",
        error=ProviderError(code, str(error.get("message", "The publish failed."))),
        receipt=receipt,
    )
