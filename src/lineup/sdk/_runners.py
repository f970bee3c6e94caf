"""The handlers at work: one asyncio task per journaled task or message.

Runners never touch the connection: they write to the journal and the outbox, and wait for
the hub's answers across reconnects. A task's end — succeeded, failed, cancelled — is one
``task.status_changed`` in the outbox, whatever ended it; unless the hub ended the task itself
(a cancel not confirmed in time), which the agent only hears of and reports nothing.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from lineup.protocol.codec import encode
from lineup.protocol.envelope import Envelope
from lineup.protocol.errors import LineupError
from lineup.protocol.events import MessageDelivered, TaskAssigned, TaskStatusChanged, TaskStatusName
from lineup.sdk._context import MessageContext, TaskContext
from lineup.sdk._errors import TaskStopped, refused_as_ended
from lineup.sdk._journal import Runtime, derive_id
from lineup.sdk._settings import MessageHandler, TaskHandler
from lineup.sdk._state import Job

logger = logging.getLogger("lineup.sdk")


class Runners:
    """The running handlers, by journal scope (a task id, or ``message:<id>``)."""

    def __init__(
        self,
        runtime: Runtime,
        task_handler: TaskHandler | None,
        message_handler: MessageHandler | None,
        shutting_down: Callable[[], bool],
    ) -> None:
        self._runtime = runtime
        self._task_handler = task_handler
        self._message_handler = message_handler
        self._shutting_down = shutting_down
        self._runners: dict[str, asyncio.Task[None]] = {}
        self._contexts: dict[str, TaskContext] = {}

    @property
    def handles_messages(self) -> bool:
        return self._message_handler is not None

    def start(self, job: Job) -> None:
        if job.scope in self._runners or job.done:
            return
        work = self._run_task(job.scope) if job.kind == "task" else self._run_message(job.scope)
        runner = asyncio.create_task(work, name=f"lineup:{job.scope}")
        self._runners[job.scope] = runner
        runner.add_done_callback(lambda done: self._runner_done(job.scope, done))

    async def stop_all(self) -> None:
        """Cancel every runner and wait for them (their tasks resume on the next run)."""
        runners = list(self._runners.values())
        for runner in runners:
            runner.cancel()
        await asyncio.gather(*runners, return_exceptions=True)

    def cancel(self, task_id: str, reason: str | None) -> None:
        """A person asked to stop ``task_id``: its handler is cancelled if it runs now; one
        that has not started yet reads the request from the store when it does."""
        context = self._contexts.get(task_id)
        runner = self._runners.get(task_id)
        if context is not None and runner is not None and not runner.done():
            context._request_cancel(reason)
            runner.cancel(f"a person asked to stop task {task_id}")

    def final_report_id(self, task_id: str) -> str:
        """The id of the ``task.status_changed`` that ends ``task_id`` (the same every run)."""
        return derive_id("evt", self._runtime.agent_id, task_id, "finish")

    def end(self, task_id: str, cause: str) -> None:
        """The hub ended ``task_id`` itself (the job is done in the store already): its
        handler, if it runs now, is cancelled and reports nothing."""
        context = self._contexts.get(task_id)
        runner = self._runners.get(task_id)
        if context is not None:
            context._end_by_hub(cause)
        if runner is not None and not runner.done():
            runner.cancel(f"the hub ended task {task_id} ({cause})")

    def _runner_done(self, scope: str, runner: asyncio.Task[None]) -> None:
        if self._runners.get(scope) is runner:
            del self._runners[scope]
        if not runner.cancelled() and runner.exception() is not None:
            logger.error("handler bookkeeping for %s failed", scope, exc_info=runner.exception())

    async def _run_task(self, scope: str) -> None:
        store = self._runtime.store
        job = store.job(scope)
        if job is None or job.done:
            return
        envelope = Envelope.model_validate_json(job.frame)
        context = TaskContext(
            self._runtime, envelope, TaskAssigned.model_validate(envelope.payload)
        )
        self._contexts[scope] = context
        try:
            if job.cancel_requested:
                context._request_cancel(job.cancel_reason)
                self._finish(context, TaskStatusName.CANCELLED)
                return
            handler = self._task_handler
            if handler is None:
                self._finish(
                    context,
                    TaskStatusName.FAILED,
                    error="This agent has no task handler (register one with @agent.task).",
                )
                return
            try:
                try:
                    await context._accept()
                except LineupError as refused:
                    # Not this agent's task (any more): run nothing, report nothing.
                    logger.error(
                        "the hub refused to let this agent take task %s: %s", scope, refused
                    )
                    store.finish_job(scope, "refused")
                    return
                result = await handler(context)
            except asyncio.CancelledError:
                if self._shutting_down():
                    raise  # the agent is stopping: the task resumes when it starts again
                current = asyncio.current_task()
                if current is not None:
                    current.uncancel()
                if context.cancelled.is_set():
                    self._finish(context, TaskStatusName.CANCELLED)
                else:
                    self._finish(context, TaskStatusName.FAILED, error="The handler was cancelled.")
                return
            except TaskStopped as stop:
                self._finish(context, TaskStatusName.CANCELLED, summary=stop.summary)
                return
            except Exception as exc:
                if refused_as_ended(exc):
                    # the hub ended the task before this agent heard of it: its news
                    # (replayed on the downlink) settles the job; nothing is reported
                    logger.warning("the hub refused a report: task %s has ended", scope)
                    context._end_by_hub(str(getattr(exc, "details", {}).get("cause") or "ended"))
                    store.finish_job(scope, "ended")
                    return
                logger.exception("task %s failed", scope)
                self._finish(context, TaskStatusName.FAILED, error=_short_error(exc))
                return
            self._finish(
                context,
                TaskStatusName.SUCCEEDED,
                summary=None if result is None else str(result),
            )
        finally:
            self._contexts.pop(scope, None)

    def _finish(
        self,
        context: TaskContext,
        status: TaskStatusName,
        *,
        summary: str | None = None,
        error: str | None = None,
    ) -> None:
        if context.ended_by_hub is not None:
            logger.info("task %s was ended by the hub (%s)", context.task_id, context.ended_by_hub)
            return  # its job is done already; a report would be refused
        runtime = self._runtime
        payload = TaskStatusChanged(
            status=status,
            progress=100 if status is TaskStatusName.SUCCEEDED else None,
            summary=_clip(summary, 500),
            error=_clip(error, 4000),
        )
        envelope = runtime.make_envelope(
            "task.status_changed",
            payload,
            envelope_id=self.final_report_id(context.task_id),
            task_id=context.task_id,
            conversation_id=context.conversation_id,
        )
        runtime.store.finish_job(context.task_id, status.value, envelope.id, encode(envelope))
        runtime.outbox_changed()
        logger.info("task %s %s", context.task_id, status.value)

    async def _run_message(self, scope: str) -> None:
        store = self._runtime.store
        job = store.job(scope)
        if job is None or job.done:
            return
        envelope = Envelope.model_validate_json(job.frame)
        context = MessageContext(
            self._runtime, envelope, MessageDelivered.model_validate(envelope.payload)
        )
        handler = self._message_handler
        try:
            if handler is not None:
                await handler(context)
        except asyncio.CancelledError:
            if self._shutting_down():
                raise
            logger.warning("the handler of message %s was cancelled", context.message_id)
        except Exception:
            logger.exception("the handler of message %s failed", context.message_id)
        store.finish_job(scope, "done")


def _clip(text: str | None, limit: int) -> str | None:
    if text is None:
        return None
    text = text.strip()
    if not text:
        return None
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _short_error(exc: BaseException) -> str:
    message = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__
