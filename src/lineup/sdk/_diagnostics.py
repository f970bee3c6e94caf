"""The agent's diagnostic lines: what the SDK logged, redacted, kept in a ring, sent to the hub.

So that a person can see why an agent is offline without a terminal on its machine, a
running agent keeps its own recent log lines — connection attempts, errors, reconnects, its
version, resumed handlers — and sends them as ``agent.logs`` frames after each welcome (the
lines written while the hub was unreachable arrive once it is back), then in batches every
``interval`` seconds. Each line is redacted when it is captured
(:class:`~lineup.protocol.redaction.Redactor`: the credential, LineUp tokens, URLs' secrets,
the fields the adapter marks sensitive, its hook), so the ring never holds what must not
leave the machine. The ring is bounded: when the hub is away for long, the oldest lines go.

Capture: the records of the ``lineup.sdk`` logger (and of any logger the adapter names) made
while *this* agent runs — a context variable set by :meth:`DiagnosticLog.capturing` tells
agents of one process apart, so each sends only its own. Capturing needs INFO records, which
a default logging setup does not make; the tap lowers ``lineup.sdk`` to INFO while an agent
runs and, as the logger's filter, still lets through to the program's own handlers only what
they would have seen without it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import threading
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any

from lineup.protocol.agent_logs import (
    MAX_BATCH_BYTES,
    MAX_LINE_BYTES,
    MAX_LINES,
    MAX_LOGGER_CHARS,
    MAX_MESSAGE_CHARS,
    AgentLogs,
    LogLevel,
    LogLine,
)
from lineup.protocol.codec import encode
from lineup.protocol.envelope import Envelope, wire_size
from lineup.protocol.frames import Ack, ErrorFrame
from lineup.protocol.ids import new_id
from lineup.protocol.redaction import Redactor
from lineup.sdk._transport import Connection

SDK_LOGGER = "lineup.sdk"
RING_LINES = 200
"""Lines an agent keeps until the hub has them."""
INTERVAL = 5.0
"""Seconds between batches once connected."""
_FIELD_DEPTH = 6
_FIELD_ITEMS = 50
_FIELD_TEXT = 500
_PRE_CUT = MAX_MESSAGE_CHARS + 500
"""A message is cut to this before redaction (bounding its cost) and to MAX_MESSAGE_CHARS
after, so no secret cut in two by the first cut can survive in what is kept."""
_TOO_LARGE = {"truncated": "the fields were too large to send"}

# Not reported to the hub: about the diagnostics themselves (a child of the SDK's logger,
# whose records the tap on "lineup.sdk" does not see).
quiet = logging.getLogger("lineup.sdk.diagnostics")

_current: ContextVar[DiagnosticLog | None] = ContextVar("lineup_diagnostics", default=None)
_STANDARD = frozenset(
    logging.LogRecord("", 0, "", 0, "", (), None).__dict__.keys()
    | {"message", "asctime", "taskName"}
)


def _level(levelno: int) -> LogLevel:
    if levelno >= logging.CRITICAL:
        return LogLevel.CRITICAL
    if levelno >= logging.ERROR:
        return LogLevel.ERROR
    if levelno >= logging.WARNING:
        return LogLevel.WARNING
    if levelno >= logging.INFO:
        return LogLevel.INFO
    return LogLevel.DEBUG


def _plain(value: Any, depth: int = 0) -> Any:
    """A JSON value of bounded depth and width; other objects become their ``repr`` (which
    the redactor then reads like any text)."""
    if isinstance(value, str) or value is None or isinstance(value, bool | int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if depth >= _FIELD_DEPTH:
        return "…"
    if isinstance(value, Mapping):
        items = list(value.items())[:_FIELD_ITEMS]
        return {str(k): _plain(v, depth + 1) for k, v in items}
    if isinstance(value, list | tuple | set | frozenset):
        return [_plain(v, depth + 1) for v in list(value)[:_FIELD_ITEMS]]
    try:
        return repr(value)
    except Exception:
        return f"<{type(value).__name__}>"


def _clean(text: str, limit: int) -> str:
    """Storable text: no NUL (no database keeps one), no lone surrogate, at most ``limit``."""
    text = text.replace("\x00", "\ufffd")
    text = text.encode("utf-8", "replace").decode("utf-8")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _cleaned(value: Any) -> Any:
    if isinstance(value, str):
        return _clean(value, _FIELD_TEXT)
    if isinstance(value, dict):
        return {_clean(k, _FIELD_TEXT): _cleaned(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_cleaned(v) for v in value]
    return value


def line_from_record(
    record: logging.LogRecord, redactor: Redactor, line_id: str | None = None
) -> LogLine:
    """One record as a line the hub accepts: redacted, cleaned, within the limits."""
    try:
        message = record.getMessage()
    except Exception:  # a malformed logging call is not the agent's failure
        message = str(record.msg)
    extras = {
        k: v for k, v in record.__dict__.items() if k not in _STANDARD and not k.startswith("_")
    }
    if record.exc_info and record.exc_info[1] is not None:
        error = record.exc_info[1]
        extras["exception"] = f"{type(error).__name__}: {error}"
    # marked values are looked for in what was logged, before it is bounded for the wire
    marked = redactor.marked_values(extras)
    message = redactor.text(message[:_PRE_CUT], marked)
    redacted = redactor.value(_plain(extras), marked) if extras else None
    line: dict[str, Any] = {
        "id": line_id or new_id("log"),
        "ts": datetime.fromtimestamp(record.created, UTC).isoformat(),
        "level": _level(record.levelno).value,
        "logger": _clean(redactor.text(record.name), MAX_LOGGER_CHARS) or "?",
        "message": _clean(message, MAX_MESSAGE_CHARS),
    }
    if redacted:
        line["fields"] = _cleaned(redacted)
    if wire_size(line) > MAX_LINE_BYTES and "fields" in line:
        line["fields"] = dict(_TOO_LARGE)
    while wire_size(line) > MAX_LINE_BYTES:  # a long message of wide characters
        text = line["message"]
        line["message"] = text[: max(0, len(text) * MAX_LINE_BYTES // wire_size(line) - 40)] + "…"
    return LogLine.model_validate(line)


class DiagnosticLog:
    """One running agent's ring of lines not yet acknowledged by the hub."""

    def __init__(
        self,
        redactor: Redactor,
        *,
        capacity: int = RING_LINES,
        loggers: Sequence[str] = (),
    ) -> None:
        self.redactor = redactor
        self.lines: deque[LogLine] = deque(maxlen=capacity)
        self.loggers = tuple(dict.fromkeys((SDK_LOGGER, *loggers)))
        self._lock = threading.Lock()

    def capture(self, record: logging.LogRecord) -> None:
        if record.levelno < logging.INFO:
            return
        try:
            line = line_from_record(record, self.redactor)
        except Exception:  # never fail the program's logging call
            return
        with self._lock:
            self.lines.append(line)

    def batch(self) -> list[LogLine]:
        """The oldest lines that fit in one ``agent.logs`` frame (empty when none wait)."""
        taken: list[LogLine] = []
        size = 0
        with self._lock:
            for line in self.lines:
                weight = line.size()
                if len(taken) == MAX_LINES or size + weight > MAX_BATCH_BYTES:
                    break
                taken.append(line)
                size += weight
        return taken

    def sent(self, lines: Sequence[LogLine]) -> None:
        """The hub has ``lines`` (or refused them for good): forget them."""
        done = {line.id for line in lines}
        with self._lock:
            kept = [line for line in self.lines if line.id not in done]
            self.lines.clear()
            self.lines.extend(kept)

    @contextlib.contextmanager
    def capturing(self) -> Iterator[None]:
        """Capture this agent's records for the duration (in this context and the tasks it
        starts)."""
        token = _current.set(self)
        taps = [_Tap.attach(name) for name in self.loggers]
        try:
            yield
        finally:
            for tap in taps:
                tap.detach()
            _current.reset(token)


class _Tap(logging.Filter):
    """The one filter of a tapped logger in this process, shared by every running agent:
    it hands each record to the agent whose context made it, then lets it through to the
    logger's handlers only if they would have seen it untapped (a filter that said no would
    hide the record from the agents whose filters come after, hence one per logger)."""

    _taps: dict[str, _Tap] = {}  # noqa: RUF012 - the process's registry
    _guard = threading.Lock()

    def __init__(self, logger: logging.Logger) -> None:
        super().__init__()
        self.logger = logger
        self.users = 0
        self.level_before = logger.level
        self.lowered = False

    @classmethod
    def attach(cls, name: str) -> _Tap:
        with cls._guard:
            tap = cls._taps.get(name)
            if tap is None:
                logger = logging.getLogger(name)
                tap = cls._taps[name] = cls(logger)
                logger.addFilter(tap)
                if name == SDK_LOGGER and logger.getEffectiveLevel() > logging.INFO:
                    logger.setLevel(logging.INFO)
                    tap.lowered = True
            tap.users += 1
            return tap

    def detach(self) -> None:
        with self._guard:
            self.users -= 1
            if self.users > 0:
                return
            del self._taps[self.logger.name]
            self.logger.removeFilter(self)
            if self.lowered:
                self.logger.setLevel(self.level_before)

    def _untapped_level(self) -> int:
        if not self.lowered:
            return logging.NOTSET
        if self.level_before != logging.NOTSET:
            return self.level_before
        parent = self.logger.parent
        return parent.getEffectiveLevel() if parent is not None else logging.WARNING

    def filter(self, record: logging.LogRecord) -> bool:
        log = _current.get()
        if log is not None:
            log.capture(record)
        return record.levelno >= self._untapped_level()


# --- sending --------------------------------------------------------------------------------

ExpectAnswer = Callable[[str], "asyncio.Future[Ack | ErrorFrame]"]


class NoLogsAnswer(Exception):
    """The hub did not answer an ``agent.logs`` frame in time."""


async def ship(
    log: DiagnosticLog,
    connection: Connection,
    expect_answer: ExpectAnswer,
    *,
    workspace_id: str,
    interval: float,
    answer_timeout: float,
) -> None:
    """Send the ring, then a batch every ``interval`` seconds, until the connection ends.

    An ack forgets the lines sent (an ack marked ``ignored`` — a hub that does not know
    ``agent.logs`` — ends sending on this connection); a refusal forgets them too, since the
    same lines would be refused again; a retryable error keeps them for the next turn.
    """
    while True:
        lines = log.batch()
        if not lines:
            await asyncio.sleep(interval)
            continue
        envelope = Envelope(
            id=new_id("evt"),
            type="agent.logs",
            occurred_at=datetime.now(UTC),
            workspace_id=workspace_id,
            payload=AgentLogs(lines=lines).wire(),
        )
        pending = expect_answer(envelope.id)
        await connection.send(encode(envelope))
        try:
            async with asyncio.timeout(answer_timeout):
                answer = await pending
        except TimeoutError:
            raise NoLogsAnswer(envelope.id) from None
        if isinstance(answer, Ack):
            log.sent(lines)
            if answer.ignored:
                quiet.info("this hub does not take diagnostic lines; not sending them")
                await asyncio.Future()  # until the connection ends
        elif answer.retryable:
            await asyncio.sleep(interval)
        else:
            log.sent(lines)
            quiet.warning(
                "the hub refused %d diagnostic line(s) (%s: %s)",
                len(lines),
                answer.code.value,
                answer.message,
            )
