"""Executions: the provider called for a recorded execution, its outcome recorded once.

The execution (with its idempotency key) is in the log before :meth:`Executor.start` is
called, so whatever happens next — a timeout, a crash of this hub — the core knows there may be
an effect to account for. The rules of what to do after each attempt are
:mod:`lineup.core.executions`'; this module does the calls, the waiting and the records.

An execution found unfinished after a restart (or one whose node died) is resumed: its
receipt is asked for first; without one it is called again only when its provider replays an
idempotency key safely, and otherwise ends ``unknown_result``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import jsonschema

from lineup.core import executions as rules
from lineup.core.provider import Accepted, Completed, Invocation, ProviderError, Receipt
from lineup.hub import audit
from lineup.hub.governance import bindings
from lineup.hub.governance.catalogue import CatalogueEntry, CatalogueView
from lineup.hub.recorder import Writing
from lineup.protocol import facts
from lineup.protocol.errors import (
    RETRYABLE,
    ErrorCode,
    LineupError,
    NotFound,
    Unauthenticated,
    Unavailable,
)
from lineup.store import governance as gov_store
from lineup.store.governance import ExecutionRecord, InvocationRecord

if TYPE_CHECKING:
    from lineup.hub.governance.registry import Registry
    from lineup.hub.state import HubState

log = logging.getLogger("lineup.hub.governance")

UNFINISHED = ("started", "accepted")
ORPHAN_MARGIN_MS = 30_000
"""How long after an execution's last sign of life, beyond its attempts' timeouts, another
node may take it as orphaned (its node died) and resume it."""


def _error(code: ErrorCode, message: str) -> dict[str, Any]:
    return {"code": code.value, "message": message, "retryable": code in RETRYABLE}


class Executor:
    """Runs executions after their commit. Every provider call is bounded with
    ``asyncio.timeout``: on Python 3.11 ``asyncio.wait_for`` can swallow a cancellation that
    arrives as the call ends, and a hub that stops must be able to stop its executions."""

    def __init__(self, hub: HubState, registry: Registry) -> None:
        self.hub = hub
        self.registry = registry
        self._running: dict[str, asyncio.Task[None]] = {}

    def start(self, workspace_id: str, execution_id: str, *, resumed: bool = False) -> None:
        if execution_id in self._running:
            return
        task = asyncio.get_running_loop().create_task(
            self._run(workspace_id, execution_id, resumed), name=f"execution-{execution_id}"
        )
        self._running[execution_id] = task
        task.add_done_callback(lambda _: self._running.pop(execution_id, None))

    def running(self, execution_id: str) -> bool:
        return execution_id in self._running

    async def close(self) -> None:
        tasks = list(self._running.values())
        for task in tasks:
            task.cancel()
        if tasks:  # each logged its own failure
            await asyncio.gather(*tasks, return_exceptions=True)

    async def resume_unfinished(self, now_ms: int, *, all_of_them: bool = False) -> int:
        """Resume executions nobody runs: all of them at a start (``all_of_them``), else those
        whose node has been silent long enough (the monitor's pass, once per cluster)."""
        rows = await self.hub.store.read(lambda r: gov_store.unfinished_executions(r.connection))
        resumed = 0
        views: dict[str, CatalogueView] = {}  # read once per workspace in this pass
        for row in rows:
            if self.running(row.id):
                continue
            if not all_of_them:
                view = views.get(row.workspace_id)
                if view is None:
                    view = views[row.workspace_id] = await self.registry.view(row.workspace_id)
                if not self._orphaned(view.find(row.capability), row, now_ms):
                    continue
            self.start(row.workspace_id, row.id, resumed=True)
            resumed += 1
        return resumed

    def _orphaned(self, entry: CatalogueEntry | None, row: ExecutionRecord, now_ms: int) -> bool:
        if entry is None:
            return True
        spec = entry.spec
        if row.status == "accepted":  # a job: followed by whoever holds it; poll interval
            quiet = self.hub.settings.job_poll_interval * 1000 * 10
        else:
            quiet = spec.timeout_s * 1000 * rules.MAX_ATTEMPTS
        return now_ms - row.updated_at > quiet + ORPHAN_MARGIN_MS

    # --- one execution -----------------------------------------------------------------

    async def _run(self, ws: str, execution_id: str, resumed: bool) -> None:
        try:
            await self._execute(ws, execution_id, resumed)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("execution %s failed in the hub", execution_id)

    async def _read(self, ws: str, execution_id: str) -> tuple[ExecutionRecord, InvocationRecord]:
        def read(r: Any) -> tuple[ExecutionRecord | None, InvocationRecord | None]:
            exe = gov_store.get_execution(r.connection, ws, execution_id)
            inv = (
                None
                if exe is None
                else gov_store.get_invocation(r.connection, ws, exe.invocation_id)
            )
            return exe, inv

        exe, inv = await self.hub.store.read(read)
        if exe is None or inv is None:
            raise NotFound(f"No execution {execution_id!r}.")
        return exe, inv

    async def _execute(self, ws: str, execution_id: str, resumed: bool) -> None:
        exe, inv = await self._read(ws, execution_id)
        if exe.status not in UNFINISHED:
            return
        entry_or_none = (await self.registry.view(ws)).find(exe.capability)
        if entry_or_none is None:
            await self._finish(
                exe,
                inv,
                "unknown_result",
                error=_error(
                    ErrorCode.UNKNOWN_RESULT,
                    f"The provider of {exe.capability} is no longer on this hub; whether the "
                    "call took effect is unknown.",
                ),
            )
            return
        entry = entry_or_none
        call = Invocation(  # a receipt or a job is asked without credentials
            capability=exe.capability,
            instance=exe.instance,
            params=inv.params,
            execution_id=exe.id,
            idempotency_key=exe.idempotency_key,
            expected_version=exe.expected_version,
        )
        if exe.status == "accepted" and exe.job_id is not None:
            await self._follow(exe, inv, entry, call, exe.job_id)
            return
        attempt = exe.attempts
        if resumed or attempt > 0:
            receipt = await self._receipt(entry, call)
            if receipt is not None:
                await self._settle(exe, inv, entry, call, receipt.outcome)
                return
            step = rules.resume(receipt_found=False, idempotent_replay=entry.spec.idempotent_replay)
            if step == "unknown":
                await self._unknown(exe, inv, rules.Unknown(rules.UNSAFE_TO_REPLAY))
                return
        # the provider has not applied the call (never called, or no receipt and safe to
        # replay): a person's binding that cannot carry it fails it, and nothing happened
        who = bindings.OnBehalf(exe.workspace_id, inv.on_behalf_of)
        try:
            held = await bindings.credentials_for(self.hub, entry.provider, exe.instance, who)
        except (Unauthenticated, Unavailable) as exc:
            await self._finish(exe, inv, "failed", error=_error(exc.code, exc.message))
            return
        call = replace(call, credentials=held)
        while True:
            attempt += 1
            try:
                async with asyncio.timeout(entry.spec.timeout_s):
                    outcome = await entry.provider.invoke(call)
            except TimeoutError:
                receipt = await self._receipt(entry, call)
                decision = rules.after_timeout(
                    receipt_found=receipt is not None,
                    idempotent_replay=entry.spec.idempotent_replay,
                    attempt=attempt,
                )
                found = "receipt found" if receipt is not None else "no receipt"
                await self._attempted(exe, attempt, "timeout", found)
                if receipt is not None:
                    outcome = receipt.outcome
                elif isinstance(decision, rules.Retry):
                    continue
                else:
                    assert isinstance(decision, rules.Unknown)
                    await self._unknown(exe, inv, decision)
                    return
            except ProviderError as exc:
                message = exc.message
                if exc.code is ErrorCode.UNAUTHENTICATED:  # the system signed the person out
                    signed_out = await bindings.signed_out(
                        self.hub, entry.provider, exe.instance, who
                    )
                    message = message if signed_out is None else signed_out.message
                choice = rules.after_error(exc.code, message, attempt=attempt)
                if isinstance(choice, rules.Retry):
                    await self._attempted(exe, attempt, exc.code.value, exc.message)
                    await asyncio.sleep(min(0.05 * 2**attempt, 2.0))
                    continue
                await self._finish(exe, inv, "failed", error=_error(choice.code, choice.message))
                return
            except Exception:
                log.exception("provider %s failed on %s", entry.provider.id, exe.id)
                await self._finish(
                    exe,
                    inv,
                    "unknown_result",
                    error=_error(
                        ErrorCode.UNKNOWN_RESULT,
                        f"{entry.provider.id} failed unexpectedly during the call; whether it "
                        "took effect is unknown. Check the system before trying again.",
                    ),
                )
                return
            await self._settle(exe, inv, entry, call, outcome)
            return

    async def _unknown(
        self,
        exe: ExecutionRecord,
        inv: InvocationRecord,
        unknown: rules.Unknown,
    ) -> None:
        await self._finish(
            exe, inv, "unknown_result", error=_error(ErrorCode.UNKNOWN_RESULT, unknown.message)
        )

    async def _receipt(self, entry: CatalogueEntry, call: Invocation) -> Receipt | None:
        try:
            async with asyncio.timeout(entry.spec.timeout_s):
                return await entry.provider.receipt(call.instance, call.idempotency_key)
        except Exception:  # a receipt that cannot be had is no receipt
            log.warning("no receipt from %s for %s", entry.provider.id, call.execution_id)
            return None

    async def _settle(
        self,
        exe: ExecutionRecord,
        inv: InvocationRecord,
        entry: CatalogueEntry,
        call: Invocation,
        outcome: Completed | Accepted,
    ) -> None:
        if isinstance(outcome, Completed):
            output = dict(outcome.output)
            self._check_output(entry, output)
            await self._finish(exe, inv, "succeeded", output=output, receipt=dict(outcome.receipt))
            return
        await self._accepted(exe, inv, outcome)
        await self._follow(exe, inv, entry, call, outcome.job_id)

    def _check_output(self, entry: CatalogueEntry, output: Mapping[str, Any]) -> None:
        problem = jsonschema.exceptions.best_match(entry.output_validator.iter_errors(output))
        if problem is not None:  # recorded as it came: the effect happened
            log.warning("%s answered outside its output schema: %s", entry.spec.id, problem.message)

    async def _follow(
        self,
        exe: ExecutionRecord,
        inv: InvocationRecord,
        entry: CatalogueEntry,
        call: Invocation,
        job_id: str,
    ) -> None:
        interval = self.hub.settings.job_poll_interval
        while True:
            try:
                async with asyncio.timeout(entry.spec.timeout_s):
                    state = await entry.provider.job(call.instance, job_id)
            except Exception as exc:
                log.warning("job %s of %s: %r", job_id, exe.id, exc)
                await asyncio.sleep(interval)
                continue
            if state.status == "running":
                await asyncio.sleep(interval)
                continue
            if state.status == "succeeded":
                output = dict(state.output or {})
                self._check_output(entry, output)
                await self._finish(
                    exe, inv, "succeeded", output=output, receipt=dict(state.receipt)
                )
                return
            error = state.error or ProviderError(ErrorCode.UNKNOWN_RESULT, "The job failed.")
            await self._finish(
                exe,
                inv,
                "failed",
                error=_error(error.code, error.message),
                receipt=dict(state.receipt),
            )
            return

    # --- records -----------------------------------------------------------------------

    async def _attempted(
        self, exe: ExecutionRecord, attempt: int, outcome: str, detail: str
    ) -> None:
        def job(w: Writing) -> None:
            w.append(
                exe.workspace_id,
                facts.ExecutionAttemptedPayload(
                    execution_id=exe.id, attempt=attempt, outcome=outcome, detail=detail
                ),
                actor="hub",
            )

        await self.hub.recorder.run(job)

    async def _accepted(
        self, exe: ExecutionRecord, inv: InvocationRecord, outcome: Accepted
    ) -> None:
        def job(w: Writing) -> None:
            now = gov_store.get_execution(w.read.connection, exe.workspace_id, exe.id)
            if now is None or now.status != "started":
                return
            w.append(
                exe.workspace_id,
                facts.ExecutionAcceptedPayload(
                    execution_id=exe.id,
                    invocation_id=inv.id,
                    agent_invocation_id=inv.agent_invocation_id,
                    capability=exe.capability,
                    job_id=outcome.job_id,
                    receipt=dict(outcome.receipt) or None,
                    target_agent_id=inv.agent_id,
                ),
                actor="hub",
                conversation_id=inv.conversation_id,
                task_id=inv.task_id,
            )
            audit.record(
                w,
                "execution.accepted",
                workspace_id=exe.workspace_id,
                actor="hub",
                subject=f"execution:{exe.id}",
                data={"jobId": outcome.job_id},
            )

        await self.hub.recorder.run(job)

    async def _finish(
        self,
        exe: ExecutionRecord,
        inv: InvocationRecord,
        status: str,
        *,
        output: dict[str, Any] | None = None,
        error: dict[str, Any] | None = None,
        receipt: dict[str, Any] | None = None,
    ) -> None:
        def job(w: Writing) -> None:
            now = gov_store.get_execution(w.read.connection, exe.workspace_id, exe.id)
            if now is None or now.status not in UNFINISHED:
                return  # another node (or an earlier pass) finished it first
            w.append(
                exe.workspace_id,
                facts.ExecutionFinishedPayload(
                    execution_id=exe.id,
                    invocation_id=inv.id,
                    agent_invocation_id=inv.agent_invocation_id,
                    capability=exe.capability,
                    status=status,
                    output=output,
                    error=error,
                    receipt=receipt or None,
                    target_agent_id=inv.agent_id,
                ),
                actor="hub",
                conversation_id=inv.conversation_id,
                task_id=inv.task_id,
            )
            audit.record(
                w,
                "execution.finished",
                workspace_id=exe.workspace_id,
                actor="hub",
                subject=f"execution:{exe.id}",
                data={
                    "status": status,
                    "errorCode": None if error is None else error.get("code"),
                    "receipt": receipt or None,
                },
            )

        try:
            await self.hub.recorder.run(job)
        except LineupError:
            log.exception("could not record the end of execution %s", exe.id)
