"""The contract every provider must pass before the core calls it (seed 003 §5, §8).

:func:`check` drives a provider through its own interface, on one instance, and reports what
holds and what does not: its catalogue is well formed (ids under the provider's id, input and
output schemas that are JSON Schemas, writes and reads that declare what they may); reads
answer what their output schema promises; parameters outside the input schema are refused as
``invalid_argument`` and calls without the right credentials as ``forbidden``; every failure
is a :class:`~lineup.core.provider.ProviderError` with a code of the taxonomy; a write sent
twice with one idempotency key is applied once and answered the same (the retry after a
timeout); the receipt of a key settles a call whose answer was lost and an unknown key has
none; async writes answer ``Accepted`` and their job reaches an end; health answers ok.

What the kit cannot see is the downstream system itself: that a cut-off call retried with
its key changed the system once is the replay checks' inference from the answers, and a
provider's own tests must prove it against its system's state (and with its own fault
injection, for calls that hang).

The kit does no I/O of its own: it only awaits the provider's methods. ``samples`` gives,
per capability, parameters that are valid when they are used: a mapping, or an async
function that makes them (a publish needs a draft that exists at that moment). Writes are
really performed, so run the kit on a test instance.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from lineup.core.provider import (
    Accepted,
    Completed,
    Draft,
    Health,
    Invocation,
    JobState,
    Provider,
    ProviderError,
    Receipt,
)
from lineup.protocol.capabilities import CapabilitySpec, Effect, Mode
from lineup.protocol.errors import ErrorCode

Params = Mapping[str, Any]
Sample = Params | Callable[[], Awaitable[Params]]

_REFUSALS = frozenset({ErrorCode.FORBIDDEN, ErrorCode.UNAUTHENTICATED})
_WRONG_VALUES: tuple[Any, ...] = (None, [], {}, "contract-not-this", -1, 1.5, True)
_NO_SUCH_INSTANCE = "contract-no-such-instance"


@dataclass(frozen=True, slots=True)
class Check:
    name: str
    passed: bool
    detail: str = ""


@dataclass(frozen=True, slots=True)
class ContractReport:
    provider: str
    checks: tuple[Check, ...]

    @property
    def passed(self) -> bool:
        return bool(self.checks) and all(c.passed for c in self.checks)

    @property
    def failures(self) -> list[Check]:
        return [c for c in self.checks if not c.passed]

    def summary(self) -> str:
        lines = [f"{self.provider}: {len(self.checks) - len(self.failures)}/{len(self.checks)}"]
        lines += [f"FAILED {c.name}: {c.detail}" for c in self.failures]
        return "\n".join(lines)


async def _no_pause() -> None:
    return None


async def check(
    provider: Provider,
    *,
    instance: str,
    credentials: Mapping[str, str],
    samples: Mapping[str, Sample],
    key_prefix: str | None = None,
    max_polls: int = 100,
    pause: Callable[[], Awaitable[None]] = _no_pause,
) -> ContractReport:
    """Run the contract on ``provider``'s ``instance`` with the ``credentials`` the hub would
    inject. ``pause`` runs between two polls of a job (a provider whose jobs progress on their
    own may need the event loop to turn); a job must end within ``max_polls`` polls."""
    kit = _Kit(provider, instance, credentials, samples, key_prefix, max_polls, pause)
    await kit.run()
    return ContractReport(provider=_provider_id(provider), checks=tuple(kit.checks))


def _provider_id(provider: Provider) -> str:
    try:
        return str(provider.id)
    except Exception:  # a broken provider is reported, not raised
        return "<no id>"


@dataclass
class _Outcome:
    """What one call of the provider did: its value, or the ProviderError it raised; any
    other exception has been reported as a failure already."""

    value: Any = None
    error: ProviderError | None = None
    broken: bool = False


@dataclass
class _Kit:
    provider: Provider
    instance: str
    credentials: Mapping[str, str]
    samples: Mapping[str, Sample]
    key_prefix: str | None
    max_polls: int
    pause: Callable[[], Awaitable[None]]
    checks: list[Check] = field(default_factory=list)
    bare: list[str] = field(default_factory=list)
    keys: int = 0

    def __post_init__(self) -> None:
        if self.key_prefix is None:
            self.key_prefix = f"contract-{uuid.uuid4().hex[:12]}"

    def record(self, name: str, passed: bool, detail: str = "") -> bool:
        self.checks.append(Check(name, passed, detail))
        return passed

    def key(self) -> str:
        self.keys += 1
        return f"{self.key_prefix}-{self.keys}"

    async def call(self, what: str, awaitable: Awaitable[Any]) -> _Outcome:
        try:
            return _Outcome(value=await awaitable)
        except ProviderError as exc:
            if not isinstance(exc.code, ErrorCode):
                self.bare.append(f"{what}: a ProviderError with code {exc.code!r}")
                return _Outcome(error=exc, broken=True)
            return _Outcome(error=exc)
        except Exception as exc:
            self.bare.append(f"{what}: raised {type(exc).__name__}, not a ProviderError")
            return _Outcome(broken=True)

    def invocation(
        self,
        spec: CapabilitySpec,
        params: Params,
        *,
        key: str | None = None,
        credentials: Mapping[str, str] | None = None,
        instance: str | None = None,
    ) -> Invocation:
        key = key or self.key()
        return Invocation(
            capability=spec.id,
            instance=instance or self.instance,
            params=params,
            execution_id=f"exec-{key}",
            idempotency_key=key,
            credentials=self.credentials if credentials is None else credentials,
        )

    async def sample(self, spec: CapabilitySpec) -> Params:
        sample = self.samples[spec.id]
        if callable(sample):
            return dict(await sample())
        return dict(sample)

    # -- the checks -------------------------------------------------------------------------

    async def run(self) -> None:
        specs = self.describe()
        if specs is None:
            return
        usable = [s for s in specs if self.check_sample(s)]
        if usable:
            await self.unknown_instance(usable[0])
        for spec in usable:
            await self.refusals(spec)
            await self.invalid_params(spec)
            if spec.effect is Effect.READ:
                await self.read(spec)
            else:
                await self.write(spec)
        if any(s.mode is Mode.ASYNC for s in specs):
            outcome = await self.call(
                "job(unknown id)", self.provider.job(self.instance, f"{self.key_prefix}-no-job")
            )
            self.expect_error("an unknown job is not_found", outcome, {ErrorCode.NOT_FOUND})
        outcome = await self.call(
            "receipt(unknown key)", self.provider.receipt(self.instance, self.key())
        )
        if not outcome.broken and outcome.error is None:
            self.record(
                "an idempotency key never used has no receipt",
                outcome.value is None,
                f"answered {outcome.value!r}",
            )
        elif outcome.error is not None:
            self.record(
                "an idempotency key never used has no receipt",
                False,
                f"raised {outcome.error.code}: receipt() answers None for a key it never saw",
            )
        await self.health()
        self.record(
            "every error is a ProviderError with a code of the taxonomy",
            not self.bare,
            "; ".join(self.bare),
        )

    def describe(self) -> list[CapabilitySpec] | None:
        name = "describe() lists well-formed capabilities under the provider's id"
        try:
            provider_id = str(self.provider.id)
            specs = list(self.provider.describe())
            instances = list(self.provider.instances())
        except Exception as exc:
            self.record(name, False, f"raised {type(exc).__name__}")
            return None
        problems: list[str] = []
        if not specs:
            problems.append("no capabilities")
        if self.instance not in instances:
            problems.append(f"{self.instance!r} is not one of instances() {instances}")
        seen: set[str] = set()
        for spec in specs:
            if not isinstance(spec, CapabilitySpec):
                problems.append(f"{spec!r} is not a CapabilitySpec")
                continue
            if spec.id in seen:
                problems.append(f"{spec.id} is listed twice")
            seen.add(spec.id)
            if not spec.id.startswith(f"{provider_id}."):
                problems.append(f"{spec.id} is not under {provider_id}.")
            if spec.provider != provider_id:
                problems.append(f"{spec.id} names provider {spec.provider!r}")
            for which, schema in (("input", spec.input_schema), ("output", spec.output_schema)):
                try:
                    Draft202012Validator.check_schema(schema)
                except SchemaError as exc:
                    problems.append(f"{spec.id}'s {which} schema is not JSON Schema: {exc.message}")
            if spec.input_schema.get("type") not in (None, "object"):
                problems.append(f"{spec.id}'s input schema is not for an object")
            if spec.effect is Effect.READ and spec.preview:
                problems.append(f"{spec.id} is a read with a preview: only writes have drafts")
            stray = sorted(set(spec.instances) - set(instances))
            if stray:
                problems.append(f"{spec.id} reaches instances the provider has not: {stray}")
            if spec.instances and self.instance not in spec.instances:
                problems.append(f"{spec.id} does not reach {self.instance}")
        self.record(name, not problems, "; ".join(problems))
        return [s for s in specs if isinstance(s, CapabilitySpec)] if not problems else None

    def check_sample(self, spec: CapabilitySpec) -> bool:
        sample = self.samples.get(spec.id)
        if sample is None:
            return self.record(f"{spec.id}: has a sample", False, "no sample parameters given")
        if not callable(sample):
            errors = list(Draft202012Validator(spec.input_schema).iter_errors(dict(sample)))
            if errors:
                return self.record(
                    f"{spec.id}: has a sample", False, f"the sample breaks its schema: {errors[0]}"
                )
        return True

    async def unknown_instance(self, spec: CapabilitySpec) -> None:
        params = await self.sample(spec)
        outcome = await self.call(
            f"{spec.id} on an unknown instance",
            self.provider.invoke(self.invocation(spec, params, instance=_NO_SUCH_INSTANCE)),
        )
        self.expect_error("an unknown instance is not_found", outcome, {ErrorCode.NOT_FOUND})

    def expect_error(
        self, name: str, outcome: _Outcome, codes: frozenset[ErrorCode] | set[ErrorCode]
    ) -> bool:
        if outcome.broken:
            return self.record(name, False, "did not raise a ProviderError")
        if outcome.error is None:
            return self.record(name, False, f"answered {type(outcome.value).__name__}")
        passed = outcome.error.code in codes
        expected = " or ".join(sorted(codes))
        return self.record(
            name, passed, "" if passed else f"raised {outcome.error.code}, expected {expected}"
        )

    async def refusals(self, spec: CapabilitySpec) -> None:
        wrong_sets: list[tuple[str, Mapping[str, str]]] = [("without credentials", {})]
        if self.credentials:
            wrong = {k: f"{v}-not-this" for k, v in self.credentials.items()}
            wrong_sets.append(("with wrong credentials", wrong))
        for how, credentials in wrong_sets:
            if not self.credentials and not credentials:
                continue
            params = await self.sample(spec)
            key = self.key()
            call = self.invocation(spec, params, key=key, credentials=credentials)
            outcome = await self.call(f"{spec.id} {how}", self.provider.invoke(call))
            self.expect_error(f"{spec.id}: invoke {how} is forbidden", outcome, _REFUSALS)
            if spec.effect is Effect.WRITE:
                found = await self.call("receipt", self.provider.receipt(self.instance, key))
                self.record(
                    f"{spec.id}: a refused write leaves no receipt",
                    not found.broken and found.error is None and found.value is None,
                    f"receipt answered {found.value or found.error!r}",
                )
            if spec.preview:
                outcome = await self.call(f"preview {spec.id} {how}", self.provider.preview(call))
                self.expect_error(f"{spec.id}: preview {how} is forbidden", outcome, _REFUSALS)

    async def invalid_params(self, spec: CapabilitySpec) -> None:
        valid = await self.sample(spec)
        invalid = _invalid(spec.input_schema, valid)
        if invalid is None:
            self.record(
                f"{spec.id}: parameters outside the schema are invalid_argument",
                True,
                "skipped: the input schema accepts any variation of the sample",
            )
            return
        call = self.invocation(spec, invalid)
        outcome = await self.call(f"{spec.id} with invalid params", self.provider.invoke(call))
        self.expect_error(
            f"{spec.id}: invoke with parameters outside the schema is invalid_argument",
            outcome,
            {ErrorCode.INVALID_ARGUMENT},
        )
        if spec.preview:
            outcome = await self.call(
                f"preview {spec.id} with invalid params", self.provider.preview(call)
            )
            self.expect_error(
                f"{spec.id}: preview with parameters outside the schema is invalid_argument",
                outcome,
                {ErrorCode.INVALID_ARGUMENT},
            )

    def output_fits(self, name: str, spec: CapabilitySpec, output: Any) -> bool:
        if not isinstance(output, Mapping):
            return self.record(name, False, f"the output is a {type(output).__name__}")
        errors = list(Draft202012Validator(spec.output_schema).iter_errors(dict(output)))
        return self.record(
            name,
            not errors,
            f"the output breaks the output schema: {errors[0].message}" if errors else "",
        )

    async def follow(self, spec: CapabilitySpec, job_id: str) -> JobState | None:
        for _ in range(self.max_polls):
            outcome = await self.call(f"job {job_id}", self.provider.job(self.instance, job_id))
            if outcome.broken or outcome.error is not None:
                self.record(
                    f"{spec.id}: its job can be followed",
                    False,
                    f"job() raised {outcome.error.code if outcome.error else 'a bare exception'}",
                )
                return None
            state = outcome.value
            if not isinstance(state, JobState):
                self.record(
                    f"{spec.id}: its job can be followed", False, f"job() answered {state!r}"
                )
                return None
            if state.status != "running":
                return state
            await self.pause()
        self.record(
            f"{spec.id}: its job reaches an end",
            False,
            f"still running after {self.max_polls} polls",
        )
        return None

    async def read(self, spec: CapabilitySpec) -> None:
        params = await self.sample(spec)
        outcome = await self.call(spec.id, self.provider.invoke(self.invocation(spec, params)))
        name = f"{spec.id}: a read answers what its output schema promises"
        if outcome.broken or outcome.error is not None:
            self.record(
                name, False, f"raised {outcome.error.code if outcome.error else 'a bare exception'}"
            )
            return
        answer = outcome.value
        if spec.mode is Mode.SYNC:
            if isinstance(answer, Completed):
                self.output_fits(name, spec, answer.output)
            else:
                self.record(name, False, f"a sync capability answered {type(answer).__name__}")
            return
        if not isinstance(answer, Accepted):
            self.record(name, False, f"an async capability answered {type(answer).__name__}")
            return
        state = await self.follow(spec, answer.job_id)
        if state is not None:
            self.job_succeeded(name, spec, state)

    def job_succeeded(self, name: str, spec: CapabilitySpec, state: JobState) -> bool:
        if state.status == "failed":
            code = state.error.code if state.error else "no error"
            return self.record(name, False, f"the job of a valid sample failed ({code})")
        return self.output_fits(name, spec, state.output)

    async def write(self, spec: CapabilitySpec) -> None:
        params = await self.sample(spec)
        if spec.preview:
            outcome = await self.call(
                f"preview {spec.id}", self.provider.preview(self.invocation(spec, params))
            )
            draft = outcome.value
            self.record(
                f"{spec.id}: preview answers a draft with a summary and an impact",
                isinstance(draft, Draft)
                and bool(draft.summary)
                and bool(draft.impact)
                and (draft.resource_version is None or isinstance(draft.resource_version, str)),
                f"answered {draft!r}" if outcome.error is None else f"raised {outcome.error.code}",
            )
        key = self.key()
        first = await self.call(
            spec.id, self.provider.invoke(self.invocation(spec, params, key=key))
        )
        name = f"{spec.id}: a valid write is performed"
        if first.broken or first.error is not None:
            self.record(
                name, False, f"raised {first.error.code if first.error else 'a bare exception'}"
            )
            return
        answer = first.value
        output: Any = None
        if spec.mode is Mode.SYNC:
            if not isinstance(answer, Completed):
                self.record(name, False, f"a sync write answered {type(answer).__name__}")
                return
            output = answer.output
            self.output_fits(name, spec, output)
        else:
            if not self.record(
                f"{spec.id}: an async write answers Accepted with a job",
                isinstance(answer, Accepted) and bool(answer.job_id),
                f"answered {answer!r}",
            ):
                return
            state = await self.follow(spec, answer.job_id)
            if state is None or not self.job_succeeded(name, spec, state):
                return
            output = state.output
        if spec.idempotent_replay:
            await self.replay(spec, params, key, answer, output)
        found = await self.call("receipt", self.provider.receipt(self.instance, key))
        self.receipt_settles(spec, key, found, answer, output)
        if spec.idempotent_replay:
            await self.cut_off(spec)

    async def cut_off(self, spec: CapabilitySpec) -> None:
        """The core's path after a timeout: the call is abandoned wherever it was; the
        receipt settles it, or (nothing was recorded) it is retried with the same key; from
        then on the key answers the same, applied once."""
        name = f"{spec.id}: a write cut off by a timeout is settled by its receipt or one retry"
        params = await self.sample(spec)
        key = self.key()
        call = self.invocation(spec, params, key=key)
        pending = asyncio.ensure_future(self.provider.invoke(call))
        await asyncio.sleep(0)
        pending.cancel()
        try:
            await pending
        except asyncio.CancelledError:
            pass
        except Exception as exc:
            self.bare.append(f"{spec.id} cut off: raised {type(exc).__name__} on cancellation")
        found = await self.call("receipt", self.provider.receipt(self.instance, key))
        if found.broken or found.error is not None:
            self.record(name, False, "receipt() raised")
            return
        settled: Any = found.value.outcome if isinstance(found.value, Receipt) else None
        if settled is None:
            retried = await self.call(f"{spec.id} retried", self.provider.invoke(call))
            if retried.broken or retried.error is not None:
                code = retried.error.code if retried.error else "a bare exception"
                self.record(name, False, f"the retry raised {code}")
                return
            settled = retried.value
        output = settled.output if isinstance(settled, Completed) else None
        if isinstance(settled, Accepted):
            state = await self.follow(spec, settled.job_id)
            if state is None:
                return
            output = state.output
        again = await self.call(f"{spec.id} again", self.provider.invoke(call))
        self.record(
            name,
            not again.broken
            and again.error is None
            and self.same_answer(spec, settled, output, again.value),
            f"settled as {settled!r}, then answered {again.value or again.error!r}",
        )

    def same_answer(self, spec: CapabilitySpec, first: Any, output: Any, again: Any) -> bool:
        if isinstance(again, Accepted):
            return isinstance(first, Accepted) and again.job_id == first.job_id
        if isinstance(again, Completed):
            return dict(again.output) == dict(output or {})
        return False

    async def replay(
        self, spec: CapabilitySpec, params: Params, key: str, first: Any, output: Any
    ) -> None:
        again = await self.call(
            f"{spec.id} again", self.provider.invoke(self.invocation(spec, params, key=key))
        )
        name = f"{spec.id}: the same idempotency key again is applied once and answered the same"
        if again.broken or again.error is not None:
            self.record(
                name,
                False,
                f"the repeat raised {again.error.code if again.error else 'a bare exception'}",
            )
            return
        same = self.same_answer(spec, first, output, again.value)
        if same and isinstance(again.value, Accepted):
            state = await self.follow(spec, again.value.job_id)
            same = state is not None and dict(state.output or {}) == dict(output or {})
        self.record(name, same, f"first {first!r} with {output!r}, then {again.value!r}")

    def receipt_settles(
        self, spec: CapabilitySpec, key: str, found: _Outcome, first: Any, output: Any
    ) -> None:
        name = f"{spec.id}: the receipt of a used key settles a call whose answer was lost"
        if found.broken or found.error is not None:
            self.record(
                name,
                False,
                f"receipt() raised {found.error.code if found.error else 'a bare exception'}",
            )
            return
        receipt = found.value
        if not isinstance(receipt, Receipt) or receipt.idempotency_key != key:
            self.record(name, False, f"receipt() answered {receipt!r}")
            return
        self.record(
            name,
            self.same_answer(spec, first, output, receipt.outcome),
            f"the receipt says {receipt.outcome!r}, the call answered {first!r}",
        )

    async def health(self) -> None:
        outcome = await self.call("health", self.provider.health())
        health = outcome.value
        self.record(
            "health() answers ok",
            isinstance(health, Health) and health.ok,
            f"answered {health!r}" if outcome.error is None else f"raised {outcome.error.code}",
        )


def _variants(schema: Mapping[str, Any], valid: Params) -> Iterator[dict[str, Any]]:
    yield {**valid, "contractUnexpected": True}
    for name in valid:
        yield {k: v for k, v in valid.items() if k != name}
    properties = schema.get("properties", {})
    for name in [*valid, *(p for p in properties if p not in valid)]:
        for wrong in _WRONG_VALUES:
            yield {**valid, name: wrong}


def _invalid(schema: Mapping[str, Any], valid: Params) -> dict[str, Any] | None:
    """Parameters close to ``valid`` that ``schema`` refuses, or None if it refuses none."""
    validator = Draft202012Validator(schema)
    for variant in _variants(schema, valid):
        if not validator.is_valid(variant):
            return variant
    return None
