"""The scheduling provider, through the Provider interface the hub's core calls."""

from __future__ import annotations

import asyncio
import itertools
import sqlite3
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lineup.core.provider import (
    Accepted,
    Completed,
    Invocation,
    JobState,
    Provider,
    ProviderError,
)
from lineup.protocol.errors import ErrorCode
from lineup.providers.scheduling import (
    ORDERS_QUERY,
    RESOURCES_LOAD,
    SCHEDULE_PREVIEW,
    SCHEDULE_PUBLISH,
    Faults,
    SchedulingProvider,
)
from lineup.providers.scheduling._planner import Operation, Order, plan

PLANT = "plant-1"
KEY = {"apiKey": "plant-1-key"}
WAIT = 5.0


def fixed_clock() -> datetime:
    return datetime(2026, 12, 4, 15, 30, tzinfo=UTC)


def make(root: Path, faults: Faults | None = None) -> SchedulingProvider:
    return SchedulingProvider(
        root, {PLANT: KEY["apiKey"], "plant-2": "other"}, faults=faults, clock=fixed_clock
    )


@pytest.fixture
async def provider(tmp_path: Path) -> SchedulingProvider:
    provider = make(tmp_path)
    await provider.seed_demo(PLANT)
    return provider


def call(
    capability: str,
    params: Mapping[str, Any] | None = None,
    *,
    key: str = "",
    credentials: Mapping[str, str] = KEY,
    expected_version: str | None = None,
) -> Invocation:
    return Invocation(
        capability=capability,
        instance=PLANT,
        params=dict(params or {}),
        execution_id=f"exec-{key}" if key else "",
        idempotency_key=key,
        expected_version=expected_version,
        credentials=credentials,
    )


async def read(provider: SchedulingProvider, capability: str, **params: Any) -> dict[str, Any]:
    answer = await provider.invoke(call(capability, params))
    assert isinstance(answer, Completed)
    return dict(answer.output)


async def trial(provider: SchedulingProvider, **params: Any) -> dict[str, Any]:
    return await read(provider, SCHEDULE_PREVIEW, **params)


async def publish(
    provider: SchedulingProvider, draft: Mapping[str, Any], key: str, **kw: Any
) -> Accepted:
    params = {"draftId": draft["draftId"], "basedOnVersion": draft["basedOnVersion"]}
    answer = await provider.invoke(call(SCHEDULE_PUBLISH, params, key=key, **kw))
    assert isinstance(answer, Accepted)
    return answer


async def settle(provider: SchedulingProvider, job_id: str, polls: int = 10) -> JobState:
    for _ in range(polls):
        state = await provider.job(PLANT, job_id)
        if state.status != "running":
            return state
    raise AssertionError(f"{job_id} still running after {polls} polls")


async def refused(awaitable: Any) -> ProviderError:
    with pytest.raises(ProviderError) as caught:
        await awaitable
    return caught.value


# -- the plant and its reads ------------------------------------------------------------------


def test_the_provider_implements_the_provider_interface(tmp_path: Path) -> None:
    assert isinstance(make(tmp_path), Provider)
    ids = [spec.id for spec in make(tmp_path).describe()]
    assert ids == [ORDERS_QUERY, RESOURCES_LOAD, SCHEDULE_PREVIEW, SCHEDULE_PUBLISH]


def test_only_publishing_is_a_write_and_it_is_async_previewed_and_replay_safe(
    tmp_path: Path,
) -> None:
    specs = {spec.id: spec for spec in make(tmp_path).describe()}
    publish_spec = specs[SCHEDULE_PUBLISH]
    assert [s.id for s in specs.values() if s.effect == "write"] == [SCHEDULE_PUBLISH]
    assert (publish_spec.mode, publish_spec.preview, publish_spec.idempotent_replay) == (
        "async",
        True,
        True,
    )
    assert all(spec.instances == [PLANT, "plant-2"] for spec in specs.values())


async def test_each_plant_has_its_own_database_file_in_wal_mode(
    provider: SchedulingProvider, tmp_path: Path
) -> None:
    assert (tmp_path / "plant-1.db").exists()
    assert not (tmp_path / "plant-2.db").exists()
    conn = sqlite3.connect(tmp_path / "plant-1.db")
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        conn.close()


async def test_seeding_a_plant_twice_changes_nothing(provider: SchedulingProvider) -> None:
    before = await read(provider, ORDERS_QUERY)
    await provider.seed_demo(PLANT)
    assert await read(provider, ORDERS_QUERY) == before


async def test_orders_are_filtered_by_status_and_due_date_and_limited(
    provider: SchedulingProvider,
) -> None:
    everything = (await read(provider, ORDERS_QUERY))["orders"]
    assert len(everything) == 9
    done = (await read(provider, ORDERS_QUERY, status="done"))["orders"]
    assert [o["id"] for o in done] == ["ORD-0998"]
    due = (await read(provider, ORDERS_QUERY, dueBefore="2026-12-10"))["orders"]
    assert {o["id"] for o in due} == {"ORD-0998", "ORD-1001", "ORD-1008"}
    assert all(o["dueDate"] < "2026-12-10" for o in due)
    assert len((await read(provider, ORDERS_QUERY, limit=2))["orders"]) == 2


async def test_resource_load_covers_every_resource_and_day_of_the_range(
    provider: SchedulingProvider,
) -> None:
    answer = await read(provider, RESOURCES_LOAD, **{"from": "2026-12-07", "to": "2026-12-13"})
    assert answer["scheduleVersion"] == 1
    assert {r["id"] for r in answer["resources"]} == {"saw-1", "cnc-1", "cnc-2", "asm-1"}
    assert len(answer["load"]) == 4 * 7
    weekend = [row for row in answer["load"] if row["date"] in ("2026-12-12", "2026-12-13")]
    assert all(row["availableMinutes"] == 0 and row["plannedMinutes"] == 0 for row in weekend)
    assert all(row["plannedMinutes"] <= row["availableMinutes"] for row in answer["load"])
    assert any(row["loadPercent"] > 0 for row in answer["load"])


async def test_a_load_range_that_ends_before_it_starts_is_invalid(
    provider: SchedulingProvider,
) -> None:
    error = await refused(
        provider.invoke(call(RESOURCES_LOAD, {"from": "2026-12-10", "to": "2026-12-07"}))
    )
    assert error.code is ErrorCode.INVALID_ARGUMENT


# -- the scheduler ----------------------------------------------------------------------------


def test_the_scheduler_runs_urgent_orders_first_in_sequence_within_the_calendar() -> None:
    days = ["2026-12-07", "2026-12-08", "2026-12-09"]
    calendars = {"a": dict.fromkeys(days, 480), "b": {"2026-12-07": 0, "2026-12-08": 480}}
    orders = [
        Order("late-low", "x", 1, "2026-12-07", 5, "open"),
        Order("urgent", "y", 1, "2026-12-09", 1, "open"),
    ]
    operations = [
        Operation("urgent", 10, "a", 300),
        Operation("urgent", 20, "b", 200),
        Operation("late-low", 10, "a", 300),
    ]
    result = plan(orders=orders, operations=operations, calendars=calendars, days=days)
    placed = [(a["operationId"], a["date"], a["start"], a["end"]) for a in result.assignments]
    assert placed == [
        ("urgent/10", "2026-12-07", "06:00", "11:00"),
        ("urgent/20", "2026-12-08", "06:00", "09:20"),
        ("late-low/10", "2026-12-08", "06:00", "11:00"),
    ]
    assert result.late_orders == [
        {"orderId": "late-low", "dueDate": "2026-12-07", "finishDate": "2026-12-08", "daysLate": 1}
    ]


def test_an_operation_that_fits_no_day_leaves_its_order_unplanned_and_late() -> None:
    days = ["2026-12-07"]
    result = plan(
        orders=[Order("big", "x", 1, "2026-12-07", 1, "open")],
        operations=[Operation("big", 10, "a", 600), Operation("big", 20, "a", 10)],
        calendars={"a": {"2026-12-07": 480}},
        days=days,
    )
    assert result.assignments == []
    assert result.late_orders[0]["finishDate"] is None


async def test_the_same_plant_gives_the_same_trial_schedule(
    provider: SchedulingProvider,
) -> None:
    first, second = await trial(provider), await trial(provider)
    assert first["draftId"] != second["draftId"]
    assert first["assignments"] == second["assignments"]
    assert first["basedOnVersion"] == 1


async def test_a_trial_schedule_can_be_limited_to_some_orders_and_days(
    provider: SchedulingProvider,
) -> None:
    draft = await trial(provider, orderIds=["ORD-1002", "ORD-1008"], horizonDays=3)
    assert {a["orderId"] for a in draft["assignments"]} == {"ORD-1002", "ORD-1008"}
    assert {row["date"] for row in draft["load"]} == {"2026-12-07", "2026-12-08", "2026-12-09"}
    error = await refused(provider.invoke(call(SCHEDULE_PREVIEW, {"orderIds": ["ORD-9999"]})))
    assert error.code is ErrorCode.NOT_FOUND


# -- preview and publish ----------------------------------------------------------------------


async def test_the_publish_preview_says_what_moves_against_the_published_version(
    provider: SchedulingProvider,
) -> None:
    draft = await trial(provider)
    params = {"draftId": draft["draftId"], "basedOnVersion": 1}
    card = await provider.preview(call(SCHEDULE_PUBLISH, params))
    assert card.resource_version == "1"
    assert "version 2" in card.summary and draft["draftId"] in card.summary
    changes = card.data["changes"]
    assert changes["added"] == 3  # the rush order came in after version 1
    assert changes["moved"] > 0
    assert "ORD-1007" in card.impact  # late
    assert card.data["assignments"] == draft["assignments"]
    assert (await read(provider, RESOURCES_LOAD))["scheduleVersion"] == 1


async def test_publishing_a_trial_schedule_makes_it_the_next_version(
    provider: SchedulingProvider,
) -> None:
    draft = await trial(provider)
    accepted = await publish(provider, draft, "key-1", expected_version="1")
    state = await settle(provider, accepted.job_id)
    assert state.status == "succeeded"
    assert state.output == {
        "publishedVersion": 2,
        "draftId": draft["draftId"],
        "publishedAt": "2026-12-04T15:30:00+00:00",
    }
    assert (await read(provider, RESOURCES_LOAD))["scheduleVersion"] == 2
    assert (await trial(provider))["basedOnVersion"] == 2


async def test_the_same_idempotency_key_twice_publishes_once_and_answers_the_same_job(
    provider: SchedulingProvider,
) -> None:
    draft = await trial(provider)
    first = await publish(provider, draft, "key-1")
    again = await publish(provider, draft, "key-1")
    assert again.job_id == first.job_id
    state = await settle(provider, first.job_id)
    after = await publish(provider, draft, "key-1")
    assert after.job_id == first.job_id
    assert await settle(provider, after.job_id) == state
    assert (await read(provider, RESOURCES_LOAD))["scheduleVersion"] == 2


async def test_concurrent_publishes_with_one_key_record_one_job(
    provider: SchedulingProvider,
) -> None:
    draft = await trial(provider)
    answers = await asyncio.gather(*(publish(provider, draft, "key-1") for _ in range(5)))
    assert len({a.job_id for a in answers}) == 1


async def test_a_key_reused_for_another_publish_is_a_conflict(
    provider: SchedulingProvider,
) -> None:
    one, other = await trial(provider), await trial(provider)
    await publish(provider, one, "key-1")
    params = {"draftId": other["draftId"], "basedOnVersion": 1}
    error = await refused(provider.invoke(call(SCHEDULE_PUBLISH, params, key="key-1")))
    assert error.code is ErrorCode.CONFLICT


async def test_a_draft_made_before_another_publish_fails_as_stale(
    provider: SchedulingProvider,
) -> None:
    one, other = await trial(provider), await trial(provider)
    first = await publish(provider, one, "key-1")
    second = await publish(provider, other, "key-2")
    assert (await settle(provider, first.job_id)).status == "succeeded"
    state = await settle(provider, second.job_id)
    assert state.status == "failed"
    assert state.error is not None and state.error.code is ErrorCode.CONFLICT
    assert "stale" in state.error.message
    assert (await read(provider, RESOURCES_LOAD))["scheduleVersion"] == 2
    params = {"draftId": other["draftId"], "basedOnVersion": 1}
    error = await refused(provider.preview(call(SCHEDULE_PUBLISH, params)))
    assert error.code is ErrorCode.CONFLICT


async def test_a_publish_whose_approved_version_moved_on_fails_as_stale(
    provider: SchedulingProvider,
) -> None:
    draft = await trial(provider)
    accepted = await publish(provider, draft, "key-1", expected_version="0")
    state = await settle(provider, accepted.job_id)
    assert state.error is not None and state.error.code is ErrorCode.CONFLICT
    assert (await read(provider, RESOURCES_LOAD))["scheduleVersion"] == 1


async def test_an_unknown_draft_is_not_found_and_records_nothing(
    provider: SchedulingProvider,
) -> None:
    params = {"draftId": "draft-999", "basedOnVersion": 1}
    attempts = (
        lambda: provider.invoke(call(SCHEDULE_PUBLISH, params, key="key-1")),
        lambda: provider.preview(call(SCHEDULE_PUBLISH, params)),
    )
    for attempt in attempts:
        assert (await refused(attempt())).code is ErrorCode.NOT_FOUND
    assert await provider.receipt(PLANT, "key-1") is None


async def test_a_draft_published_against_another_version_than_its_own_is_invalid(
    provider: SchedulingProvider,
) -> None:
    draft = await trial(provider)
    params = {"draftId": draft["draftId"], "basedOnVersion": 7}
    error = await refused(provider.invoke(call(SCHEDULE_PUBLISH, params, key="key-1")))
    assert error.code is ErrorCode.INVALID_ARGUMENT


@pytest.mark.parametrize(
    "params",
    [{}, {"draftId": "draft-1"}, {"draftId": 5, "basedOnVersion": 1}, {"x": 1}],
)
async def test_publish_parameters_outside_the_schema_are_invalid(
    provider: SchedulingProvider, params: dict[str, Any]
) -> None:
    error = await refused(provider.invoke(call(SCHEDULE_PUBLISH, params, key="key-1")))
    assert error.code is ErrorCode.INVALID_ARGUMENT
    assert error.details["problems"]


async def test_a_publish_without_an_idempotency_key_is_invalid(
    provider: SchedulingProvider,
) -> None:
    draft = await trial(provider)
    params = {"draftId": draft["draftId"], "basedOnVersion": 1}
    error = await refused(provider.invoke(call(SCHEDULE_PUBLISH, params)))
    assert error.code is ErrorCode.INVALID_ARGUMENT


async def test_an_unknown_plant_job_or_capability_is_not_found(
    provider: SchedulingProvider,
) -> None:
    elsewhere = Invocation(capability=ORDERS_QUERY, instance="plant-9", params={}, credentials=KEY)
    unknown = call("scheduling.orders.delete")
    attempts = (
        lambda: provider.invoke(elsewhere),
        lambda: provider.invoke(unknown),
        lambda: provider.job(PLANT, "job-42"),
        lambda: provider.job(PLANT, "nonsense"),
    )
    for attempt in attempts:
        assert (await refused(attempt())).code is ErrorCode.NOT_FOUND


# -- credentials ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "credentials", [{}, {"apiKey": ""}, {"apiKey": "k3y-not-this"}, {"apiKey": "other"}]
)
async def test_a_call_without_the_plants_api_key_is_forbidden(
    provider: SchedulingProvider, credentials: dict[str, str]
) -> None:
    draft = await trial(provider)
    params = {"draftId": draft["draftId"], "basedOnVersion": 1}
    attempts = (
        lambda: provider.invoke(call(ORDERS_QUERY, credentials=credentials)),
        lambda: provider.invoke(
            call(SCHEDULE_PUBLISH, params, key="key-1", credentials=credentials)
        ),
        lambda: provider.preview(call(SCHEDULE_PUBLISH, params, credentials=credentials)),
    )
    for attempt in attempts:
        error = await refused(attempt())
        assert error.code is ErrorCode.FORBIDDEN
        assert "k3y" not in error.message and KEY["apiKey"] not in error.message
    assert await provider.receipt(PLANT, "key-1") is None


# -- receipts ---------------------------------------------------------------------------------


async def test_a_receipt_tells_a_running_job_then_its_outcome(
    provider: SchedulingProvider,
) -> None:
    draft = await trial(provider)
    accepted = await publish(provider, draft, "key-1")
    running = await provider.receipt(PLANT, "key-1")
    assert running is not None and running.idempotency_key == "key-1"
    assert isinstance(running.outcome, Accepted)
    assert running.outcome.job_id == accepted.job_id
    state = await settle(provider, accepted.job_id)
    done = await provider.receipt(PLANT, "key-1")
    assert done is not None and isinstance(done.outcome, Completed)
    assert done.outcome.output == state.output
    assert done.outcome.receipt["publishedVersion"] == 2
    assert await provider.receipt(PLANT, "key-never-used") is None


async def test_the_receipt_of_a_failed_job_leads_to_its_failure(
    provider: SchedulingProvider,
) -> None:
    draft = await trial(provider)
    accepted = await publish(provider, draft, "key-1", expected_version="0")
    await settle(provider, accepted.job_id)
    found = await provider.receipt(PLANT, "key-1")
    assert found is not None and isinstance(found.outcome, Accepted)
    assert (await provider.job(PLANT, found.outcome.job_id)).status == "failed"


# -- faults -----------------------------------------------------------------------------------


async def test_a_publish_that_hangs_after_recording_leaves_a_receipt_behind(
    tmp_path: Path,
) -> None:
    faults = Faults(hang_publish_after_recording=True)
    provider = make(tmp_path, faults)
    await provider.seed_demo(PLANT)
    draft = await trial(provider)
    pending = asyncio.create_task(publish(provider, draft, "key-1"))
    async with asyncio.timeout(WAIT):
        await faults.hanging.wait()
    assert not pending.done()
    found = await provider.receipt(PLANT, "key-1")
    assert found is not None and isinstance(found.outcome, Accepted)
    faults.release()
    async with asyncio.timeout(WAIT):
        assert (await pending).job_id == found.outcome.job_id


async def test_a_publish_cut_off_by_a_timeout_after_recording_is_found_and_retried_once(
    tmp_path: Path,
) -> None:
    faults = Faults(hang_publish_after_recording=True)
    provider = make(tmp_path, faults)
    await provider.seed_demo(PLANT)
    draft = await trial(provider)
    pending = asyncio.create_task(publish(provider, draft, "key-1"))
    async with asyncio.timeout(WAIT):
        await faults.hanging.wait()
    pending.cancel()
    found = await provider.receipt(PLANT, "key-1")
    assert found is not None and isinstance(found.outcome, Accepted)
    faults.release()
    retried = await publish(provider, draft, "key-1")
    assert retried.job_id == found.outcome.job_id
    assert (await settle(provider, retried.job_id)).status == "succeeded"
    assert (await read(provider, RESOURCES_LOAD))["scheduleVersion"] == 2


async def test_a_publish_that_hangs_before_recording_leaves_no_receipt(tmp_path: Path) -> None:
    faults = Faults(hang_publish_before_recording=True)
    provider = make(tmp_path, faults)
    await provider.seed_demo(PLANT)
    draft = await trial(provider)
    pending = asyncio.create_task(publish(provider, draft, "key-1"))
    async with asyncio.timeout(WAIT):
        await faults.hanging.wait()
    pending.cancel()
    assert await provider.receipt(PLANT, "key-1") is None
    faults.release()
    retried = await publish(provider, draft, "key-1")
    assert (await settle(provider, retried.job_id)).status == "succeeded"


async def test_a_hanging_publish_preview_waits_for_its_release(tmp_path: Path) -> None:
    faults = Faults(hang_preview=True)
    provider = make(tmp_path, faults)
    await provider.seed_demo(PLANT)
    draft = await trial(provider)
    params = {"draftId": draft["draftId"], "basedOnVersion": 1}
    pending = asyncio.create_task(provider.preview(call(SCHEDULE_PUBLISH, params)))
    async with asyncio.timeout(WAIT):
        await faults.hanging.wait()
    assert not pending.done()
    faults.release()
    async with asyncio.timeout(WAIT):
        assert (await pending).resource_version == "1"


async def test_hanging_reads_wait_for_their_release(tmp_path: Path) -> None:
    faults = Faults(hang_reads=True)
    provider = make(tmp_path, faults)
    await provider.seed_demo(PLANT)
    pending = asyncio.create_task(read(provider, ORDERS_QUERY))
    async with asyncio.timeout(WAIT):
        await faults.hanging.wait()
    assert not pending.done()
    faults.release()
    async with asyncio.timeout(WAIT):
        assert len((await pending)["orders"]) == 9


async def test_a_hanging_read_is_cut_off_by_the_callers_timeout(tmp_path: Path) -> None:
    faults = Faults(hang_reads=True)
    provider = make(tmp_path, faults)
    await provider.seed_demo(PLANT)
    pending = asyncio.create_task(read(provider, ORDERS_QUERY))
    async with asyncio.timeout(WAIT):
        await faults.hanging.wait()
    pending.cancel()
    with pytest.raises(asyncio.CancelledError):
        await pending
    faults.hang_reads = False
    assert len((await read(provider, ORDERS_QUERY))["orders"]) == 9


async def test_a_job_can_be_made_to_run_for_some_polls(tmp_path: Path) -> None:
    provider = make(tmp_path, Faults(job_polls_before_done=2))
    await provider.seed_demo(PLANT)
    accepted = await publish(provider, await trial(provider), "key-1")
    statuses = [(await provider.job(PLANT, accepted.job_id)).status for _ in range(3)]
    assert statuses == ["running", "running", "succeeded"]


# -- health -----------------------------------------------------------------------------------


async def test_health_is_ok_only_when_every_plants_database_and_schema_are_there(
    tmp_path: Path,
) -> None:
    provider = make(tmp_path)
    await provider.seed_demo(PLANT)
    missing = await provider.health()
    assert not missing.ok and "plant-2" in missing.detail
    await provider.initialize("plant-2")
    healthy = await provider.health()
    assert healthy.ok
    assert healthy.checked_at_ms == int(fixed_clock().timestamp() * 1000)
    conn = sqlite3.connect(tmp_path / "plant-2.db")
    try:
        conn.execute("DROP TABLE jobs")
        conn.commit()
    finally:
        conn.close()
    broken = await provider.health()
    assert not broken.ok and "jobs" in broken.detail


async def test_calls_on_a_plant_never_set_up_are_unavailable(tmp_path: Path) -> None:
    provider = make(tmp_path)
    error = await refused(provider.invoke(call(ORDERS_QUERY)))
    assert error.code is ErrorCode.UNAVAILABLE
    assert not (tmp_path / "plant-1.db").exists()


def test_an_instance_that_cannot_name_a_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        SchedulingProvider(tmp_path, {"..": "k"})


# -- the scheduler's promises, for any plant --------------------------------------------------

_DAYS = ["2026-12-07", "2026-12-08", "2026-12-09", "2026-12-10"]


def _minute(clock: str) -> int:
    hours, minutes = clock.split(":")
    return int(hours) * 60 + int(minutes) - 6 * 60


@st.composite
def plants(draw: st.DrawFn) -> tuple[list[Order], list[Operation], dict[str, dict[str, int]]]:
    resources = ["r1", "r2", "r3"]
    calendars = {
        r: {d: draw(st.sampled_from([0, 240, 480, 960])) for d in _DAYS} for r in resources
    }
    orders: list[Order] = []
    operations: list[Operation] = []
    for n in range(draw(st.integers(0, 6))):
        order = f"o{n}"
        orders.append(
            Order(order, "p", 1, draw(st.sampled_from(_DAYS)), draw(st.integers(1, 3)), "open")
        )
        for seq in range(draw(st.integers(1, 3))):
            resource = draw(st.sampled_from(resources))
            operations.append(Operation(order, (seq + 1) * 10, resource, draw(st.integers(1, 600))))
    return orders, operations, calendars


@given(plants())
def test_any_plan_keeps_calendars_sequences_and_machines_free_of_overlaps(
    plant: tuple[list[Order], list[Operation], dict[str, dict[str, int]]],
) -> None:
    orders, operations, calendars = plant
    result = plan(orders=orders, operations=operations, calendars=calendars, days=_DAYS)
    again = plan(
        orders=list(reversed(orders)), operations=operations, calendars=calendars, days=_DAYS
    )
    assert again == result
    booked: dict[tuple[str, str], list[tuple[int, int]]] = {}
    for a in result.assignments:
        start, end = _minute(a["start"]), _minute(a["end"])
        assert end - start == a["minutes"]
        assert start >= 0 and end <= calendars[a["resourceId"]][a["date"]]
        booked.setdefault((a["resourceId"], a["date"]), []).append((start, end))
    for spans in booked.values():
        spans.sort()
        assert all(left[1] <= right[0] for left, right in itertools.pairwise(spans))
    late = {row["orderId"]: row for row in result.late_orders}
    for order in orders:
        planned = [a for a in result.assignments if a["orderId"] == order.id]
        wanted = [op for op in operations if op.order_id == order.id]
        times = [(a["date"], _minute(a["start"]), _minute(a["end"])) for a in planned]
        assert [a["sequence"] for a in planned] == sorted(op.sequence for op in wanted)[
            : len(planned)
        ]
        assert all(
            (before[0], before[2]) <= (after[0], after[1])
            for before, after in itertools.pairwise(times)
        )
        if len(planned) < len(wanted):
            assert late[order.id]["finishDate"] is None
        else:
            assert (order.id in late) == (planned[-1]["date"] > order.due_date)
    assert all(row["plannedMinutes"] <= row["availableMinutes"] for row in result.load)
