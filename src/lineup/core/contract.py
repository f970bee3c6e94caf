"""The contract every provider must pass before the core calls it (seed 003 §5, §8).

:func:`check` drives a provider through its own interface, on one instance, and reports each
check under the capability it concerns (``None`` for the provider as a whole) and the rule it
belongs to:

``catalogue``
    ``describe()`` is well formed (ids under the provider's id, input and output schemas that
    are JSON Schemas, writes and reads that declare what they may), every capability has a
    sample, and — given the package's manifest — ``describe()`` lists exactly what the
    manifest declares.
``schema``
    both ways: parameters outside the input schema are refused as ``invalid_argument``, and
    what a valid call answers (and a preview's draft) fits what the capability promises.
``idempotent_replay``
    a write that declares it, sent twice with one idempotency key, is applied once and
    answered the same.
``permission``
    calls without, or with wrong, credentials are refused as ``forbidden`` or
    ``unauthenticated``, and a refused write leaves no receipt (passed with "no credentials to
    refuse" when the provider's instance needs none).
``error_mapping``
    every failure is a :class:`~lineup.core.provider.ProviderError` with a code of the
    taxonomy (an unknown instance is ``not_found``).
``timeout_unknown``
    every call answers within the capability's ``timeoutS`` (capped by the kit's
    ``timeout_s``): one that does not is reported as hung; the receipt of a key settles a call
    whose answer was lost, an unknown key has none, and a write cut off mid-call is settled by
    its receipt or one retry with its key.
``async_job``
    async capabilities answer ``Accepted`` and their job reaches an end; an unknown job is
    ``not_found``.
``health``
    ``health()`` answers ok.

What the kit cannot see is the downstream system itself: that a cut-off call retried with
its key changed the system once is the replay checks' inference from the answers, and a
provider's own tests must prove it against its system's state (and with its own fault
injection, for calls that hang). A call that blocks the event loop (a synchronous sleep or
read in an ``async def``) cannot be bounded from inside the process: whoever runs the kit
bounds its whole run with a wall timeout (the hub runs ``lineup provider test`` in a
subprocess).

The kit does no I/O of its own: it only awaits the provider's methods. ``samples`` gives,
per capability, parameters that are valid when they are used: a mapping, or an async
function that makes them (a publish needs a draft that exists at that moment). Writes are
really performed, so run the kit on a test instance — a package's contract fixture
(:class:`ContractFixture`) makes a throwaway one.
"""

from __future__ import annotations

import asyncio
import uuid
from collections import defaultdict
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from lineup.core.package import Manifest, PackageError
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

Rule = Literal[
    "catalogue",
    "schema",
    "idempotent_replay",
    "permission",
    "error_mapping",
    "timeout_unknown",
    "async_job",
    "health",
]
RULES: tuple[Rule, ...] = (
    "catalogue",
    "schema",
    "idempotent_replay",
    "permission",
    "error_mapping",
    "timeout_unknown",
    "async_job",
    "health",
)

DEFAULT_TIMEOUT_S = 10.0
"""The longest the kit waits for one call, whatever a capability's ``timeoutS`` allows."""

_REFUSALS = frozenset({ErrorCode.FORBIDDEN, ErrorCode.UNAUTHENTICATED})
_WRONG_VALUES: tuple[Any, ...] = (None, [], {}, "contract-not-this", -1, 1.5, True)
_NO_SUCH_INSTANCE = "contract-no-such-instance"
_CANCEL_GRACE_S = 1.0
"""How long a hung call is given to wind down once it is cancelled."""


@dataclass(frozen=True, slots=True)
class Check:
    name: str
    passed: bool
    detail: str = ""
    rule: Rule = "catalogue"
    capability: str | None = None
    """The capability the check is about; ``None`` for the provider as a whole."""


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

    def failed_rules(self) -> set[tuple[str | None, Rule]]:
        """(capability, rule) of every failed check."""
        return {(c.capability, c.rule) for c in self.failures}

    def summary(self) -> str:
        lines = [f"{self.provider}: {len(self.checks) - len(self.failures)}/{len(self.checks)}"]
        lines += [f"FAILED [{c.rule}] {c.name}: {c.detail}" for c in self.failures]
        return "\n".join(lines)

    def wire(self) -> dict[str, Any]:
        """What the hub keeps and shows of a run (the provider console's contract results)."""
        return {
            "passed": self.passed,
            "checks": [
                {
                    "capability": c.capability,
                    "rule": c.rule,
                    "name": c.name,
                    "passed": c.passed,
                    "detail": c.detail,
                }
                for c in self.checks
            ],
        }


@dataclass(frozen=True, slots=True)
class ContractFixture:
    """What a package's contract fixture (``adapter.contract`` in its manifest,
    ``async def fixture(workdir: pathlib.Path) -> ContractFixture``) sets up inside
    ``workdir``: a provider on a throwaway instance, the credentials the hub would inject
    there (empty when its auth kind is ``none``), and valid parameters per capability."""

    provider: Provider
    instance: str
    credentials: Mapping[str, str] = field(default_factory=dict, repr=False)
    samples: Mapping[str, Sample] = field(default_factory=dict)
    max_polls: int = 100
    """How many polls a job may take to end."""


async def _no_pause() -> None:
    return None


async def check(
    provider: Provider,
    *,
    instance: str,
    credentials: Mapping[str, str],
    samples: Mapping[str, Sample],
    manifest: Manifest | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    key_prefix: str | None = None,
    max_polls: int = 100,
    pause: Callable[[], Awaitable[None]] = _no_pause,
) -> ContractReport:
    """Run the contract on ``provider``'s ``instance`` with the ``credentials`` the hub would
    inject. ``manifest``, when the provider comes from a package, is what ``describe()`` must
    agree with. ``timeout_s`` caps how long one call may take (each capability's own
    ``timeoutS`` bounds its calls when shorter). ``pause`` runs between two polls of a job (a
    provider whose jobs progress on their own may need the event loop to turn); a job must
    end within ``max_polls`` polls."""
    kit = _Kit(
        provider, instance, credentials, samples, manifest, timeout_s, key_prefix, max_polls, pause
    )
    await kit.run()
    return ContractReport(provider=_provider_id(provider), checks=tuple(kit.checks))


async def check_fixture(
    fixture: ContractFixture,
    *,
    manifest: Manifest | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> ContractReport:
    """:func:`check` on what a package's contract fixture set up."""
    return await check(
        fixture.provider,
        instance=fixture.instance,
        credentials=fixture.credentials,
        samples=fixture.samples,
        manifest=manifest,
        timeout_s=timeout_s,
        max_polls=fixture.max_polls,
    )


def _provider_id(provider: Provider) -> str:
    try:
        return str(provider.id)
    except Exception:  # a broken provider is reported, not raised
        return "<no id>"


@dataclass
class _Outcome:
    """What one call of the provider did: its value, or the ProviderError it raised; any
    other exception (or no answer in time) has been noted for its rule already."""

    value: Any = None
    error: ProviderError | None = None
    broken: bool = False
    hung: bool = False

    def what_went_wrong(self) -> str:
        if self.hung:
            return "hung (no answer in time)"
        if self.error is not None:
            return f"raised {self.error.code}"
        if self.broken:
            return "raised a bare exception"
        return f"answered {self.value!r}"


@dataclass
class _Kit:
    provider: Provider
    instance: str
    credentials: Mapping[str, str]
    samples: Mapping[str, Sample]
    manifest: Manifest | None
    timeout_s: float
    key_prefix: str | None
    max_polls: int
    pause: Callable[[], Awaitable[None]]
    checks: list[Check] = field(default_factory=list)
    bare: defaultdict[str | None, list[str]] = field(default_factory=lambda: defaultdict(list))
    hung: defaultdict[str | None, list[str]] = field(default_factory=lambda: defaultdict(list))
    keys: int = 0

    def __post_init__(self) -> None:
        if self.key_prefix is None:
            self.key_prefix = f"contract-{uuid.uuid4().hex[:12]}"

    def record(
        self,
        name: str,
        passed: bool,
        detail: str = "",
        *,
        rule: Rule,
        spec: CapabilitySpec | None = None,
        note: str = "",
    ) -> bool:
        """``detail`` explains a failure; ``note`` is what a pass says (a skip's reason)."""
        shown = note if passed else detail
        self.checks.append(Check(name, passed, shown, rule, spec.id if spec else None))
        return passed

    def key(self) -> str:
        self.keys += 1
        return f"{self.key_prefix}-{self.keys}"

    def bound(self, spec: CapabilitySpec | None) -> float:
        return min(spec.timeout_s, self.timeout_s) if spec is not None else self.timeout_s

    async def call(
        self, what: str, make: Callable[[], Awaitable[Any]], spec: CapabilitySpec | None = None
    ) -> _Outcome:
        """Make and await one provider call, bounded by its timeout; note a bare exception
        for the error mapping rule and a hang for the timeout rule."""
        where = spec.id if spec else None

        async def the_call() -> Any:
            return await make()

        task = asyncio.ensure_future(the_call())
        limit = self.bound(spec)
        done, _ = await asyncio.wait({task}, timeout=limit)
        if not done:
            task.cancel()
            await asyncio.wait({task}, timeout=min(limit, _CANCEL_GRACE_S))
            self.hung[where].append(f"{what}: no answer within {limit:g}s")
            return _Outcome(broken=True, hung=True)
        try:
            return _Outcome(value=task.result())
        except ProviderError as exc:
            if not isinstance(exc.code, ErrorCode):
                self.bare[where].append(f"{what}: a ProviderError with code {exc.code!r}")
                return _Outcome(error=exc, broken=True)
            return _Outcome(error=exc)
        except Exception as exc:
            self.bare[where].append(f"{what}: raised {type(exc).__name__}, not a ProviderError")
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
        self.agrees_with_manifest(specs)
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
                "job(unknown id)",
                lambda: self.provider.job(self.instance, f"{self.key_prefix}-no-job"),
            )
            self.expect_error(
                "an unknown job is not_found", outcome, {ErrorCode.NOT_FOUND}, rule="async_job"
            )
        await self.unknown_receipt()
        await self.health()
        for each in [*usable, None]:
            self.mapped_and_bounded(each)

    def mapped_and_bounded(self, spec: CapabilitySpec | None) -> None:
        where = spec.id if spec else None
        prefix = f"{spec.id}: every" if spec else "every"
        self.record(
            f"{prefix} error is a ProviderError with a code of the taxonomy",
            not self.bare[where],
            "; ".join(self.bare[where]),
            rule="error_mapping",
            spec=spec,
        )
        self.record(
            f"{prefix} call answers within {self.bound(spec):g}s",
            not self.hung[where],
            "hung: " + "; ".join(self.hung[where]),
            rule="timeout_unknown",
            spec=spec,
        )

    def describe(self) -> list[CapabilitySpec] | None:
        name = "describe() lists well-formed capabilities under the provider's id"
        try:
            provider_id = str(self.provider.id)
            specs = list(self.provider.describe())
            instances = list(self.provider.instances())
        except Exception as exc:
            self.record(name, False, f"raised {type(exc).__name__}", rule="catalogue")
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
        self.record(name, not problems, "; ".join(problems), rule="catalogue")
        return [s for s in specs if isinstance(s, CapabilitySpec)] if not problems else None

    def agrees_with_manifest(self, specs: list[CapabilitySpec]) -> None:
        """What the adapter describes is what its package declared (and was approved as):
        the same capabilities, each the same but for the instances it fills in."""
        if self.manifest is None:
            return
        name = "describe() lists exactly what the manifest declares"
        try:
            declared = {s.id: s for s in self.manifest.specs()}
        except PackageError as exc:
            self.record(name, False, exc.message, rule="catalogue")
            return
        described = {s.id: s for s in specs}
        problems: list[str] = []
        if self.provider.id != self.manifest.id:
            problems.append(
                f"the provider is {self.provider.id!r}, the manifest {self.manifest.id!r}"
            )
        missing = sorted(set(declared) - set(described))
        extra = sorted(set(described) - set(declared))
        if missing:
            problems.append(f"declared but not described: {', '.join(missing)}")
        if extra:
            problems.append(f"described but not declared: {', '.join(extra)}")
        for cid in sorted(set(declared) & set(described)):
            ours = declared[cid].model_dump(exclude={"instances"})
            theirs = described[cid].model_dump(exclude={"instances"})
            changed = sorted(k for k in ours.keys() | theirs.keys() if ours.get(k) != theirs.get(k))
            if changed:
                problems.append(f"{cid} differs from the manifest in {', '.join(changed)}")
        self.record(name, not problems, "; ".join(problems), rule="catalogue")

    def check_sample(self, spec: CapabilitySpec) -> bool:
        name = f"{spec.id}: has a sample"
        sample = self.samples.get(spec.id)
        if sample is None:
            return self.record(
                name, False, "no sample parameters given", rule="catalogue", spec=spec
            )
        if not callable(sample):
            errors = list(Draft202012Validator(spec.input_schema).iter_errors(dict(sample)))
            if errors:
                return self.record(
                    name,
                    False,
                    f"the sample breaks its schema: {errors[0].message}",
                    rule="catalogue",
                    spec=spec,
                )
        return self.record(name, True, rule="catalogue", spec=spec)

    async def unknown_instance(self, spec: CapabilitySpec) -> None:
        params = await self.sample(spec)
        outcome = await self.call(
            f"{spec.id} on an unknown instance",
            lambda: self.provider.invoke(self.invocation(spec, params, instance=_NO_SUCH_INSTANCE)),
            spec,
        )
        self.expect_error(
            "an unknown instance is not_found",
            outcome,
            {ErrorCode.NOT_FOUND},
            rule="error_mapping",
            spec=spec,
        )

    def expect_error(
        self,
        name: str,
        outcome: _Outcome,
        codes: frozenset[ErrorCode] | set[ErrorCode],
        *,
        rule: Rule,
        spec: CapabilitySpec | None = None,
    ) -> bool:
        if outcome.hung:
            return self.record(name, False, outcome.what_went_wrong(), rule=rule, spec=spec)
        if outcome.broken:
            return self.record(name, False, "did not raise a ProviderError", rule=rule, spec=spec)
        if outcome.error is None:
            return self.record(
                name, False, f"answered {type(outcome.value).__name__}", rule=rule, spec=spec
            )
        passed = outcome.error.code in codes
        expected = " or ".join(sorted(codes))
        return self.record(
            name,
            passed,
            f"raised {outcome.error.code}, expected {expected}",
            rule=rule,
            spec=spec,
        )

    async def refusals(self, spec: CapabilitySpec) -> None:
        if not self.credentials:
            self.record(
                f"{spec.id}: calls without the right credentials are refused",
                True,
                rule="permission",
                note="no credentials to refuse",
                spec=spec,
            )
            return
        wrong = {k: f"{v}-not-this" for k, v in self.credentials.items()}
        await self.refused(spec, "without credentials", {})
        await self.refused(spec, "with wrong credentials", wrong)

    async def refused(self, spec: CapabilitySpec, how: str, credentials: Mapping[str, str]) -> None:
        params = await self.sample(spec)
        key = self.key()
        call = self.invocation(spec, params, key=key, credentials=credentials)
        outcome = await self.call(f"{spec.id} {how}", lambda: self.provider.invoke(call), spec)
        self.expect_error(
            f"{spec.id}: invoke {how} is forbidden",
            outcome,
            _REFUSALS,
            rule="permission",
            spec=spec,
        )
        if spec.effect is Effect.WRITE:
            found = await self.call(
                "receipt", lambda: self.provider.receipt(self.instance, key), spec
            )
            self.record(
                f"{spec.id}: a refused write leaves no receipt",
                not found.broken and found.error is None and found.value is None,
                f"receipt {found.what_went_wrong()}",
                rule="permission",
                spec=spec,
            )
        if spec.preview:
            outcome = await self.call(
                f"preview {spec.id} {how}", lambda: self.provider.preview(call), spec
            )
            self.expect_error(
                f"{spec.id}: preview {how} is forbidden",
                outcome,
                _REFUSALS,
                rule="permission",
                spec=spec,
            )

    async def invalid_params(self, spec: CapabilitySpec) -> None:
        valid = await self.sample(spec)
        invalid = _invalid(spec.input_schema, valid)
        if invalid is None:
            self.record(
                f"{spec.id}: parameters outside the schema are invalid_argument",
                True,
                rule="schema",
                note="skipped: the input schema accepts any variation of the sample",
                spec=spec,
            )
            return
        call = self.invocation(spec, invalid)
        outcome = await self.call(
            f"{spec.id} with invalid params", lambda: self.provider.invoke(call), spec
        )
        self.expect_error(
            f"{spec.id}: invoke with parameters outside the schema is invalid_argument",
            outcome,
            {ErrorCode.INVALID_ARGUMENT},
            rule="schema",
            spec=spec,
        )
        if spec.preview:
            outcome = await self.call(
                f"preview {spec.id} with invalid params", lambda: self.provider.preview(call), spec
            )
            self.expect_error(
                f"{spec.id}: preview with parameters outside the schema is invalid_argument",
                outcome,
                {ErrorCode.INVALID_ARGUMENT},
                rule="schema",
                spec=spec,
            )

    def output_fits(self, name: str, spec: CapabilitySpec, output: Any) -> bool:
        if not isinstance(output, Mapping):
            return self.record(
                name, False, f"the output is a {type(output).__name__}", rule="schema", spec=spec
            )
        errors = list(Draft202012Validator(spec.output_schema).iter_errors(dict(output)))
        return self.record(
            name,
            not errors,
            f"the output breaks the output schema: {errors[0].message}" if errors else "",
            rule="schema",
            spec=spec,
        )

    async def follow(self, spec: CapabilitySpec, job_id: str) -> JobState | None:
        name = f"{spec.id}: its job can be followed"
        for _ in range(self.max_polls):
            outcome = await self.call(
                f"job {job_id}", lambda: self.provider.job(self.instance, job_id), spec
            )
            if outcome.broken or outcome.error is not None:
                self.record(
                    name, False, f"job() {outcome.what_went_wrong()}", rule="async_job", spec=spec
                )
                return None
            state = outcome.value
            if not isinstance(state, JobState):
                self.record(name, False, f"job() answered {state!r}", rule="async_job", spec=spec)
                return None
            if state.status != "running":
                if state.status == "failed" and not (
                    isinstance(state.error, ProviderError)
                    and isinstance(state.error.code, ErrorCode)
                ):
                    self.bare[spec.id].append(
                        f"job {job_id} failed with {state.error!r}, not a ProviderError"
                        " with a code of the taxonomy"
                    )
                return state
            await self.pause()
        self.record(
            f"{spec.id}: its job reaches an end",
            False,
            f"still running after {self.max_polls} polls",
            rule="async_job",
            spec=spec,
        )
        return None

    async def read(self, spec: CapabilitySpec) -> None:
        params = await self.sample(spec)
        outcome = await self.call(
            spec.id, lambda: self.provider.invoke(self.invocation(spec, params)), spec
        )
        name = f"{spec.id}: a read answers what its output schema promises"
        if outcome.broken or outcome.error is not None:
            self.record(name, False, outcome.what_went_wrong(), rule="schema", spec=spec)
            return
        answer = outcome.value
        if spec.mode is Mode.SYNC:
            if isinstance(answer, Completed):
                self.output_fits(name, spec, answer.output)
            else:
                self.record(
                    name,
                    False,
                    f"a sync capability answered {type(answer).__name__}",
                    rule="schema",
                    spec=spec,
                )
            return
        if not self.record(
            f"{spec.id}: an async read answers Accepted with a job",
            isinstance(answer, Accepted) and bool(answer.job_id),
            f"answered {type(answer).__name__}",
            rule="async_job",
            spec=spec,
        ):
            return
        state = await self.follow(spec, answer.job_id)
        if state is not None:
            self.job_succeeded(name, spec, state)

    def job_succeeded(self, name: str, spec: CapabilitySpec, state: JobState) -> bool:
        if state.status == "failed":
            code = state.error.code if state.error else "no error"
            return self.record(
                name,
                False,
                f"the job of a valid sample failed ({code})",
                rule="async_job",
                spec=spec,
            )
        return self.output_fits(name, spec, state.output)

    async def write(self, spec: CapabilitySpec) -> None:
        params = await self.sample(spec)
        if spec.preview:
            outcome = await self.call(
                f"preview {spec.id}",
                lambda: self.provider.preview(self.invocation(spec, params)),
                spec,
            )
            draft = outcome.value
            self.record(
                f"{spec.id}: preview answers a draft with a summary and an impact",
                isinstance(draft, Draft)
                and bool(draft.summary)
                and bool(draft.impact)
                and (draft.resource_version is None or isinstance(draft.resource_version, str)),
                outcome.what_went_wrong(),
                rule="schema",
                spec=spec,
            )
        key = self.key()
        first = await self.call(
            spec.id, lambda: self.provider.invoke(self.invocation(spec, params, key=key)), spec
        )
        name = f"{spec.id}: a valid write is performed"
        if first.broken or first.error is not None:
            self.record(name, False, first.what_went_wrong(), rule="schema", spec=spec)
            return
        answer = first.value
        output: Any = None
        if spec.mode is Mode.SYNC:
            if not isinstance(answer, Completed):
                self.record(
                    name,
                    False,
                    f"a sync write answered {type(answer).__name__}",
                    rule="schema",
                    spec=spec,
                )
                return
            output = answer.output
            self.output_fits(name, spec, output)
        else:
            if not self.record(
                f"{spec.id}: an async write answers Accepted with a job",
                isinstance(answer, Accepted) and bool(answer.job_id),
                f"answered {answer!r}",
                rule="async_job",
                spec=spec,
            ):
                return
            state = await self.follow(spec, answer.job_id)
            if state is None or not self.job_succeeded(name, spec, state):
                return
            output = state.output
        if spec.idempotent_replay:
            await self.replay(spec, params, key, answer, output)
        found = await self.call("receipt", lambda: self.provider.receipt(self.instance, key), spec)
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
        await asyncio.wait({pending}, timeout=self.bound(spec))
        if not pending.done():
            self.hung[spec.id].append(f"{spec.id} cut off: did not end when cancelled")
        elif not pending.cancelled() and pending.exception() is not None:
            exc = pending.exception()
            if not isinstance(exc, ProviderError):
                self.bare[spec.id].append(
                    f"{spec.id} cut off: raised {type(exc).__name__} on cancellation"
                )
        found = await self.call("receipt", lambda: self.provider.receipt(self.instance, key), spec)
        if found.broken or found.error is not None:
            self.record(
                name,
                False,
                f"receipt() {found.what_went_wrong()}",
                rule="timeout_unknown",
                spec=spec,
            )
            return
        settled: Any = found.value.outcome if isinstance(found.value, Receipt) else None
        if settled is None:
            retried = await self.call(
                f"{spec.id} retried", lambda: self.provider.invoke(call), spec
            )
            if retried.broken or retried.error is not None:
                self.record(
                    name,
                    False,
                    f"the retry {retried.what_went_wrong()}",
                    rule="timeout_unknown",
                    spec=spec,
                )
                return
            settled = retried.value
        output = settled.output if isinstance(settled, Completed) else None
        if isinstance(settled, Accepted):
            state = await self.follow(spec, settled.job_id)
            if state is None:
                return
            output = state.output
        again = await self.call(f"{spec.id} again", lambda: self.provider.invoke(call), spec)
        self.record(
            name,
            not again.broken
            and again.error is None
            and self.same_answer(spec, settled, output, again.value),
            f"settled as {settled!r}, then {again.what_went_wrong()}",
            rule="timeout_unknown",
            spec=spec,
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
            f"{spec.id} again",
            lambda: self.provider.invoke(self.invocation(spec, params, key=key)),
            spec,
        )
        name = f"{spec.id}: the same idempotency key again is applied once and answered the same"
        if again.broken or again.error is not None:
            self.record(
                name,
                False,
                f"the repeat {again.what_went_wrong()}",
                rule="idempotent_replay",
                spec=spec,
            )
            return
        same = self.same_answer(spec, first, output, again.value)
        if same and isinstance(again.value, Accepted):
            state = await self.follow(spec, again.value.job_id)
            same = state is not None and dict(state.output or {}) == dict(output or {})
        self.record(
            name,
            same,
            f"first {first!r} with {output!r}, then {again.value!r}",
            rule="idempotent_replay",
            spec=spec,
        )

    def receipt_settles(
        self, spec: CapabilitySpec, key: str, found: _Outcome, first: Any, output: Any
    ) -> None:
        name = f"{spec.id}: the receipt of a used key settles a call whose answer was lost"
        if found.broken or found.error is not None:
            self.record(
                name,
                False,
                f"receipt() {found.what_went_wrong()}",
                rule="timeout_unknown",
                spec=spec,
            )
            return
        receipt = found.value
        if not isinstance(receipt, Receipt) or receipt.idempotency_key != key:
            self.record(
                name, False, f"receipt() answered {receipt!r}", rule="timeout_unknown", spec=spec
            )
            return
        self.record(
            name,
            self.same_answer(spec, first, output, receipt.outcome),
            f"the receipt says {receipt.outcome!r}, the call answered {first!r}",
            rule="timeout_unknown",
            spec=spec,
        )

    async def unknown_receipt(self) -> None:
        name = "an idempotency key never used has no receipt"
        outcome = await self.call(
            "receipt(unknown key)", lambda: self.provider.receipt(self.instance, self.key())
        )
        if outcome.error is not None:
            self.record(
                name,
                False,
                f"raised {outcome.error.code}: receipt() answers None for a key it never saw",
                rule="timeout_unknown",
            )
        elif not outcome.broken:
            self.record(
                name, outcome.value is None, f"answered {outcome.value!r}", rule="timeout_unknown"
            )
        else:
            self.record(name, False, outcome.what_went_wrong(), rule="timeout_unknown")

    async def health(self) -> None:
        outcome = await self.call("health", lambda: self.provider.health())
        health = outcome.value
        self.record(
            "health() answers ok",
            isinstance(health, Health) and health.ok,
            outcome.what_went_wrong(),
            rule="health",
            note=health.detail if isinstance(health, Health) else "",
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
