"""The provider contract kit passes a provider that keeps the contract, and fails one that
breaks any part of it."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from lineup.core.contract import RULES, Check, ContractReport, check
from lineup.core.package import Manifest
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
from lineup.protocol.errors import ErrorCode
from lineup.providers.scheduling import (
    ORDERS_QUERY,
    RESOURCES_LOAD,
    SCHEDULE_PREVIEW,
    SCHEDULE_PUBLISH,
    Faults,
    SchedulingProvider,
)

# -- a provider small enough to break on purpose ----------------------------------------------

VALUE_SPEC = CapabilitySpec(
    id="counter.value",
    provider="counter",
    effect="read",
    description="The counter.",
    input_schema={"type": "object", "additionalProperties": False},
    output_schema={
        "type": "object",
        "required": ["value"],
        "properties": {"value": {"type": "integer"}},
    },
    instances=["c1"],
)
ADD_SPEC = CapabilitySpec(
    id="counter.add",
    provider="counter",
    effect="write",
    description="Add to the counter.",
    input_schema={
        "type": "object",
        "additionalProperties": False,
        "required": ["by"],
        "properties": {"by": {"type": "integer", "minimum": 1, "maximum": 10}},
    },
    output_schema={
        "type": "object",
        "required": ["value"],
        "properties": {"value": {"type": "integer"}},
    },
    preview=True,
    idempotent_replay=True,
    instances=["c1"],
)
TOKEN = {"token": "t0ken"}


@dataclass
class Counter:
    """A counter per instance: a read and a replay-safe sync write. Each flag breaks one
    promise of the contract."""

    applies_twice: bool = False
    bare_errors: bool = False
    ignores_credentials: bool = False
    ignores_schema: bool = False
    wrong_output: bool = False
    forgets_receipts: bool = False
    receipts_for_anything: bool = False
    read_with_preview: bool = False
    capability_elsewhere: bool = False
    unhealthy: bool = False
    hangs: bool = False
    value: int = 0
    done: dict[str, Completed] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return "counter"

    def describe(self) -> Sequence[CapabilitySpec]:
        value = VALUE_SPEC
        if self.read_with_preview:
            value = value.model_copy(update={"preview": True})
        if self.capability_elsewhere:
            value = value.model_copy(update={"id": "other.value"})
        return [value, ADD_SPEC]

    def instances(self) -> Sequence[str]:
        return ["c1"]

    def _admit(self, call: Invocation) -> CapabilitySpec:
        specs = {VALUE_SPEC.id: VALUE_SPEC, ADD_SPEC.id: ADD_SPEC}
        if call.instance != "c1" or call.capability not in specs:
            raise ProviderError(ErrorCode.NOT_FOUND, "No such counter.")
        if not self.ignores_credentials and call.credentials.get("token") != TOKEN["token"]:
            raise ProviderError(ErrorCode.FORBIDDEN, "Wrong token.")
        spec = specs[call.capability]
        if not self.ignores_schema and not Draft202012Validator(spec.input_schema).is_valid(
            dict(call.params)
        ):
            if self.bare_errors:
                raise ValueError("bad params")
            raise ProviderError(ErrorCode.INVALID_ARGUMENT, "Bad params.")
        return spec

    async def invoke(self, call: Invocation) -> Completed | Accepted:
        spec = self._admit(call)
        if self.hangs:
            await asyncio.Event().wait()
        if spec is VALUE_SPEC:
            return Completed(output={"value": "many" if self.wrong_output else self.value})
        if call.idempotency_key in self.done and not self.applies_twice:
            return self.done[call.idempotency_key]
        self.value += int(call.params.get("by", 1))
        answer = Completed(output={"value": self.value}, receipt={"key": call.idempotency_key})
        self.done[call.idempotency_key] = answer
        return answer

    async def preview(self, call: Invocation) -> Draft:
        self._admit(call)
        by = int(call.params["by"])
        return Draft(
            summary=f"Add {by}.",
            impact=f"{self.value} → {self.value + by}",
            resource_version=str(self.value),
        )

    async def receipt(self, instance: str, idempotency_key: str) -> Receipt | None:
        if self.receipts_for_anything:
            return Receipt(idempotency_key, Completed(output={"value": self.value}))
        found = self.done.get(idempotency_key)
        if found is None or self.forgets_receipts:
            return None
        return Receipt(idempotency_key, found)

    async def job(self, instance: str, job_id: str) -> JobState:
        raise ProviderError(ErrorCode.NOT_FOUND, "No jobs here.")

    async def health(self) -> Health:
        return Health(ok=not self.unhealthy)


async def check_counter(counter: Counter) -> ContractReport:
    return await check(
        counter,
        instance="c1",
        credentials=TOKEN,
        samples={"counter.value": {}, "counter.add": {"by": 2}},
    )


def failed(report: ContractReport) -> str:
    return "\n".join(f"{c.name}: {c.detail}" for c in report.failures)


# -- passing ------------------------------------------------------------------------------


async def test_a_provider_that_keeps_the_contract_passes_it() -> None:
    report = await check_counter(Counter())
    assert report.passed, report.summary()


async def test_the_scheduling_provider_passes_the_contract(tmp_path: Path) -> None:
    provider = SchedulingProvider(tmp_path, {"plant-1": "k"})
    await provider.seed_demo("plant-1")
    report = await check(
        provider,
        instance="plant-1",
        credentials={"apiKey": "k"},
        samples=scheduling_samples(provider),
    )
    assert report.passed, report.summary()
    names = " ".join(c.name for c in report.checks)
    for promise in ("Accepted", "idempotency key again", "receipt", "forbidden", "invalid"):
        assert promise in names


def scheduling_samples(provider: SchedulingProvider) -> dict[str, Any]:
    async def a_fresh_draft() -> Mapping[str, Any]:
        answer = await provider.invoke(
            Invocation(SCHEDULE_PREVIEW, "plant-1", {}, credentials={"apiKey": "k"})
        )
        assert isinstance(answer, Completed)
        return {
            "draftId": answer.output["draftId"],
            "basedOnVersion": answer.output["basedOnVersion"],
        }

    return {
        ORDERS_QUERY: {"status": "open"},
        RESOURCES_LOAD: {"from": "2026-12-07", "to": "2026-12-11"},
        SCHEDULE_PREVIEW: {"horizonDays": 10},
        SCHEDULE_PUBLISH: a_fresh_draft,
    }


# -- failing ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("breakage", "broken_promise"),
    [
        ("applies_twice", "same idempotency key again is applied once"),
        ("bare_errors", "every error is a ProviderError"),
        ("ignores_credentials", "without credentials is forbidden"),
        ("ignores_schema", "outside the schema is invalid_argument"),
        ("wrong_output", "a read answers what its output schema promises"),
        ("forgets_receipts", "the receipt of a used key"),
        ("receipts_for_anything", "never used has no receipt"),
        ("read_with_preview", "describe()"),
        ("capability_elsewhere", "describe()"),
        ("unhealthy", "health()"),
    ],
)
async def test_a_provider_that_breaks_a_promise_fails_the_contract(
    breakage: str, broken_promise: str
) -> None:
    counter = Counter()
    setattr(counter, breakage, True)
    report = await check_counter(counter)
    assert not report.passed
    assert any(broken_promise in c.name for c in report.failures), failed(report)


async def test_a_capability_without_a_sample_fails_the_contract() -> None:
    report = await check(Counter(), instance="c1", credentials=TOKEN, samples={"counter.value": {}})
    assert [c.name for c in report.failures] == ["counter.add: has a sample"]


async def test_an_instance_the_provider_does_not_have_fails_the_contract() -> None:
    report = await check(
        Counter(),
        instance="c9",
        credentials=TOKEN,
        samples={"counter.value": {}, "counter.add": {"by": 1}},
    )
    assert not report.passed


async def test_a_job_that_never_ends_fails_the_contract(tmp_path: Path) -> None:
    provider = SchedulingProvider(
        tmp_path, {"plant-1": "k"}, faults=Faults(job_polls_before_done=1000)
    )
    await provider.seed_demo("plant-1")
    report = await check(
        provider,
        instance="plant-1",
        credentials={"apiKey": "k"},
        samples=scheduling_samples(provider),
        max_polls=5,
    )
    assert any("reaches an end" in c.name for c in report.failures), report.summary()


class ForgetfulScheduling(SchedulingProvider):
    async def receipt(self, instance: str, idempotency_key: str) -> Receipt | None:
        return None


class ReplayingScheduling(SchedulingProvider):
    """Publishes a key again on every call: a fresh key for each."""

    calls = 0

    async def invoke(self, call: Invocation) -> Completed | Accepted:
        if call.capability == SCHEDULE_PUBLISH and call.credentials:
            self.calls += 1
            fresh = Invocation(
                call.capability,
                call.instance,
                call.params,
                call.execution_id,
                f"{call.idempotency_key}#{self.calls}",
                call.expected_version,
                call.credentials,
            )
            return await super().invoke(fresh)
        return await super().invoke(call)


@pytest.mark.parametrize(
    ("kind", "broken_promise"),
    [
        (ForgetfulScheduling, "the receipt of a used key"),
        (ReplayingScheduling, "same idempotency key again is applied once"),
    ],
)
async def test_a_broken_scheduling_provider_fails_the_contract(
    tmp_path: Path, kind: type[SchedulingProvider], broken_promise: str
) -> None:
    provider = kind(tmp_path, {"plant-1": "k"})
    await provider.seed_demo("plant-1")
    report = await check(
        provider,
        instance="plant-1",
        credentials={"apiKey": "k"},
        samples=scheduling_samples(provider),
    )
    assert any(broken_promise in c.name for c in report.failures), report.summary()


def test_a_report_without_checks_has_not_passed() -> None:
    assert not ContractReport(provider="x", checks=()).passed


# -- the report: each check under its capability and rule ------------------------------------


@pytest.mark.parametrize(
    ("breakage", "capability", "rule"),
    [
        ("applies_twice", "counter.add", "idempotent_replay"),
        ("bare_errors", "counter.value", "error_mapping"),
        ("ignores_credentials", "counter.add", "permission"),
        ("ignores_schema", "counter.add", "schema"),
        ("wrong_output", "counter.value", "schema"),
        ("forgets_receipts", "counter.add", "timeout_unknown"),
        ("receipts_for_anything", None, "timeout_unknown"),
        ("read_with_preview", None, "catalogue"),
        ("unhealthy", None, "health"),
    ],
)
async def test_a_broken_promise_fails_under_its_capability_and_rule(
    breakage: str, capability: str | None, rule: str
) -> None:
    counter = Counter()
    setattr(counter, breakage, True)
    report = await check_counter(counter)
    assert (capability, rule) in report.failed_rules(), failed(report)


async def test_every_check_names_one_of_the_rules() -> None:
    report = await check_counter(Counter())
    assert {c.rule for c in report.checks} <= set(RULES)
    assert {c.capability for c in report.checks} == {None, "counter.value", "counter.add"}
    for capability in ("counter.value", "counter.add"):
        rules = {c.rule for c in report.checks if c.capability == capability}
        assert {"catalogue", "schema", "permission", "error_mapping", "timeout_unknown"} <= rules


async def test_a_call_that_does_not_answer_in_time_fails_as_hung() -> None:
    report = await check(
        Counter(hangs=True),
        instance="c1",
        credentials=TOKEN,
        samples={"counter.value": {}, "counter.add": {"by": 2}},
        timeout_s=0.05,
    )
    hung = [c for c in report.failures if c.rule == "timeout_unknown" and "hung" in c.detail]
    assert {c.capability for c in hung} == {"counter.value", "counter.add"}


async def test_without_credentials_to_refuse_the_permission_rule_passes_saying_so() -> None:
    counter = Counter(ignores_credentials=True)
    report = await check(
        counter,
        instance="c1",
        credentials={},
        samples={"counter.value": {}, "counter.add": {"by": 2}},
    )
    permission = [c for c in report.checks if c.rule == "permission"]
    assert [(c.passed, c.detail) for c in permission] == [(True, "no credentials to refuse")] * 2


def counter_manifest(*specs: CapabilitySpec) -> Manifest:
    return Manifest.model_validate(
        {
            "id": "counter",
            "version": "1.0.0",
            "vendor": "tests",
            "name": "Counter",
            "platform": ">=0.1",
            "auth": {"kind": "apikey"},
            "adapter": {"entry": "adapter:make"},
            "capabilities": [
                s.model_dump(mode="json", by_alias=True, exclude={"provider", "instances"})
                for s in specs
            ],
        }
    )


async def test_describe_must_list_exactly_what_the_manifest_declares() -> None:
    samples = {"counter.value": {}, "counter.add": {"by": 2}}
    agreeing = counter_manifest(VALUE_SPEC, ADD_SPEC)
    report = await check(
        Counter(), instance="c1", credentials=TOKEN, samples=samples, manifest=agreeing
    )
    assert report.passed, report.summary()
    loosened = ADD_SPEC.model_copy(update={"idempotent_replay": False})
    for manifest, says in [
        (counter_manifest(VALUE_SPEC), "described but not declared: counter.add"),
        (counter_manifest(VALUE_SPEC, loosened), "counter.add differs from the manifest"),
    ]:
        report = await check(
            Counter(), instance="c1", credentials=TOKEN, samples=samples, manifest=manifest
        )
        [failure] = report.failures
        assert (failure.rule, failure.capability) == ("catalogue", None)
        assert says in failure.detail


class SyncRaiser(Counter):
    def health(self) -> Any:  # not even a coroutine
        raise RuntimeError("boom")


async def test_a_method_that_raises_before_returning_an_awaitable_is_reported() -> None:
    report = await check_counter(SyncRaiser())
    assert "health" in {c.rule for c in report.failures}
    assert (None, "error_mapping") in report.failed_rules()


def test_the_wire_form_is_what_the_console_shows() -> None:
    report = ContractReport(
        provider="x",
        checks=(
            Check("describe", True, rule="catalogue"),
            Check("x.a: read fits", False, "'many' is not an integer", "schema", "x.a"),
        ),
    )
    assert report.wire() == {
        "passed": False,
        "checks": [
            {
                "capability": None,
                "rule": "catalogue",
                "name": "describe",
                "passed": True,
                "detail": "",
            },
            {
                "capability": "x.a",
                "rule": "schema",
                "name": "x.a: read fits",
                "passed": False,
                "detail": "'many' is not an integer",
            },
        ],
    }
