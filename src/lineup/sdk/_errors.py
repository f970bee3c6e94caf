"""The SDK's own exceptions; failures the hub reports keep their taxonomy code.

Exception tree::

    Exception
    ├── HubProblem                 the hub said no, with a diagnostic code and a next step
    │   ├── ConnectionRefusedByHub unauthenticated / forbidden on the WebSocket: final
    │   └── PairingFailed          the pairing code could not be redeemed
    ├── InsecureConnection         the agent would not talk to that hub that way: final
    ├── RequestEnded               a question to a person ended without an answer
    │   ├── InteractionExpired     nobody answered before the interaction's ``expires_at``
    │   └── RequestWithdrawn       the hub withdrew it: its task is being cancelled
    ├── JournalMismatch            a resumed handler did not replay the steps it recorded
    └── asyncio.CancelledError
        └── TaskCancelled          a person asked to stop this task

Errors the hub returns for one frame (``conflict``, ``invalid_argument`` …) surface as the
``lineup.protocol.errors`` classes (``Conflict``, ``InvalidArgument`` …), rebuilt with
:func:`lineup.protocol.errors.error_from_code`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from lineup.protocol.errors import RETRYABLE, ErrorCode, LineupError, error_from_code


class HubProblem(Exception):
    """A refusal from the hub, with what a person needs to fix it.

    ``diagnostic`` is a short code to copy into a bug report or search (``LNP-AUTH-REVOKED``),
    ``next_step`` a sentence saying what to do. ``str()`` shows all three.
    """

    def __init__(
        self,
        code: str,
        message: str,
        *,
        diagnostic: str | None = None,
        next_step: str | None = None,
        details: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.details: dict[str, Any] = dict(details or {})
        self.diagnostic = diagnostic or _text(self.details.get("diagnostic"))
        self.next_step = next_step or _text(self.details.get("nextStep"))

    @property
    def error(self) -> LineupError:
        """The same failure as the taxonomy exception (``Unauthenticated``, ``NotFound`` …)."""
        return error_from_code(self.code, self.message, self.details)

    @property
    def retryable(self) -> bool:
        """Only ``rate_limited`` and ``unavailable`` may be tried again."""
        try:
            return ErrorCode(self.code) in RETRYABLE
        except ValueError:
            return False

    def __str__(self) -> str:
        text = f"{self.message} ({self.code}"
        text += f", diagnostic {self.diagnostic})" if self.diagnostic else ")"
        if self.next_step:
            text += f" Next step: {self.next_step}"
        return text


class ConnectionRefusedByHub(HubProblem):
    """The hub refused this agent's credential (``unauthenticated``) or identity (``forbidden``).

    Final: :meth:`lineup.sdk.Agent.run` raises it instead of reconnecting, because trying again
    with the same credential cannot succeed. Pair the agent again (or ask an admin to restore
    it) and start over. ``close_code`` is the WebSocket close code when there was one (4401).
    """

    def __init__(
        self,
        code: str,
        message: str,
        *,
        diagnostic: str | None = None,
        next_step: str | None = None,
        details: Mapping[str, Any] | None = None,
        close_code: int | None = None,
    ) -> None:
        super().__init__(code, message, diagnostic=diagnostic, next_step=next_step, details=details)
        self.close_code = close_code


class PairingFailed(HubProblem):
    """The pairing code could not be redeemed (wrong, used, expired, throttled, unreachable).

    ``retry_after`` (seconds) is set when the hub throttled the attempt (``rate_limited``).
    """

    @property
    def retry_after(self) -> float | None:
        value = self.details.get("retryAfterMs")
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value) / 1000
        return None


class InsecureConnection(Exception):
    """The agent refused a connection before sending anything: final, never retried.

    ``code`` says why: ``plain_text_to_remote_host`` (``ws://`` or ``http://`` to another
    machine without ``allow_insecure``), ``unsupported_scheme``, ``fingerprint_mismatch``
    (the hub presented another certificate than the pinned one), ``untrusted_certificate``
    (no authority vouches for it and none is pinned; the message names its fingerprint),
    ``unreadable_ca_file``, ``no_certificate``. ``url`` is the address refused.
    """

    def __init__(
        self, code: str, message: str, *, url: str | None = None, next_step: str | None = None
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.url = url
        self.next_step = next_step

    def __str__(self) -> str:
        text = f"{self.message} ({self.code})"
        return f"{text} Next step: {self.next_step}" if self.next_step else text


class RequestEnded(Exception):
    """A request to a person (an interaction or a tool call) ended without an answer, and no
    answer will come: catch this to handle every such ending in one place."""


class InteractionExpired(RequestEnded):
    """Nobody answered the interaction before its ``expires_at``; only raised when one was set."""

    def __init__(self, interaction_id: str, expires_at: datetime) -> None:
        super().__init__(f"Interaction {interaction_id} expired at {expires_at.isoformat()}.")
        self.interaction_id = interaction_id
        self.expires_at = expires_at


class RequestWithdrawn(RequestEnded):
    """The hub withdrew this request (an interaction or a tool call) because its task is being
    cancelled: no answer will come, and a person can no longer give one."""

    def __init__(self, request_id: str, reason: str | None) -> None:
        super().__init__(f"Request {request_id} was withdrawn: {reason or 'no reason given'}")
        self.request_id = request_id
        self.reason = reason


class JournalMismatch(RuntimeError):
    """A resumed handler asked for different steps than the run it resumes had recorded.

    Handlers are replayed after a restart: the same code must call the same
    :class:`~lineup.sdk.TaskContext` methods in the same order. This is raised when it does
    not (the code changed, or it depends on something that changed); the task then fails.
    """


class TaskCancelled(asyncio.CancelledError):
    """A person asked to stop this task.

    The SDK cancels the handler's asyncio task, so the handler sees an
    :class:`asyncio.CancelledError` at its next ``await``; ``TaskCancelled`` (a subclass) is
    what the ``ask_*`` methods raise once a cancel was requested. Let either propagate (after
    any cleanup) and the SDK reports the task ``cancelled``.
    """


class TaskEnded(TaskCancelled):
    """The hub ended this task itself — a person asked to cancel it and the agent did not
    confirm in time (``cause`` is ``"cancel_timeout"``). The SDK cancels the handler as for a
    cancel, but reports nothing: the hub refuses any later report for the task, so the
    reports still queued for it are dropped instead of sent."""

    def __init__(self, task_id: str, cause: str) -> None:
        super().__init__(f"The hub ended task {task_id} ({cause}); nothing more is sent for it.")
        self.task_id = task_id
        self.cause = cause


TASK_ENDED = "task_ended"
"""The ``details.reason`` of the hub's refusal of a report on a task that has ended."""


def refused_as_ended(error: BaseException) -> bool:
    """Whether the hub refused an event because its task has ended already."""
    details = getattr(error, "details", None)
    return isinstance(details, dict) and details.get("reason") == TASK_ENDED


class TaskStopped(Exception):
    """Raise from a handler to stop its task on purpose: it ends ``cancelled`` with
    ``summary`` (for example after a person rejected the approval it needed)."""

    def __init__(self, summary: str) -> None:
        super().__init__(summary)
        self.summary = summary


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None
