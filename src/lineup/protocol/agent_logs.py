"""``agent.logs``: a batch of an adapter's own recent log lines, for the Agents screen.

An agent keeps a bounded ring of what its adapter logged — connection attempts, errors,
reconnects, its version — and sends it to the hub after each welcome and then in batches, so
a person can see why an agent was offline without a terminal on its machine. The lines are
redacted on the agent before they leave it (:mod:`lineup.protocol.redaction`) and again by
the hub. They are not recorded facts: the hub keeps the last few hundred per agent, and a
replay of the log knows nothing of them.

The limits below are the protocol's: a frame beyond any of them is refused whole
(``invalid_argument``, with a ``details.problems`` entry naming the limit) and nothing of
it is kept. The SDK builds batches that fit them.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Annotated, Any

from pydantic import AwareDatetime, Field, field_serializer, model_validator
from pydantic_core import PydanticCustomError

from lineup.protocol._model import WireModel
from lineup.protocol.envelope import Identifier, wire_size
from lineup.protocol.times import format_timestamp

MAX_LINES = 100
"""Lines in one ``agent.logs`` frame."""
MAX_LINE_BYTES = 4096
"""One line, as compact UTF-8 JSON (its ``id``, ``ts``, ``level``, ``logger``, ``message``
and ``fields`` together)."""
MAX_BATCH_BYTES = 64 * 1024
"""All the lines of one frame together, each measured as for :data:`MAX_LINE_BYTES`."""
MAX_MESSAGE_CHARS = 2000
MAX_LOGGER_CHARS = 100


class LogLevel(StrEnum):
    DEBUG = "debug"
    INFO = "info"
    WARNING = "warning"
    ERROR = "error"
    CRITICAL = "critical"


class LogLine(WireModel):
    """One line as the adapter logged it (after redaction). ``id`` is the agent's own name for
    the line, unique per agent: a batch sent again (its ack lost) adds nothing twice."""

    id: Identifier
    ts: AwareDatetime
    level: LogLevel
    logger: Annotated[str, Field(min_length=1, max_length=MAX_LOGGER_CHARS)]
    message: Annotated[str, Field(max_length=MAX_MESSAGE_CHARS)]
    fields: dict[str, Any] | None = None

    @field_serializer("ts")
    def _serialize_time(self, value: datetime) -> str:
        return format_timestamp(value)

    def size(self) -> int:
        """Bytes of the line as compact UTF-8 JSON: what the limits measure."""
        return wire_size(self.wire())

    @model_validator(mode="after")
    def _within_line_limit(self) -> LogLine:
        size = self.size()
        if size > MAX_LINE_BYTES:
            raise PydanticCustomError(
                "line_too_large",
                "This line is {size} bytes as JSON; a line may be at most {limit} bytes.",
                {"size": size, "limit": MAX_LINE_BYTES},
            )
        return self


class AgentLogs(WireModel):
    """The payload of ``agent.logs``: oldest line first."""

    lines: Annotated[list[LogLine], Field(min_length=1, max_length=MAX_LINES)]

    @model_validator(mode="after")
    def _within_batch_limit(self) -> AgentLogs:
        size = sum(line.size() for line in self.lines)
        if size > MAX_BATCH_BYTES:
            raise PydanticCustomError(
                "batch_too_large",
                "The lines are {size} bytes as JSON together; one agent.logs frame may "
                "carry at most {limit} bytes of lines. Send them in several frames.",
                {"size": size, "limit": MAX_BATCH_BYTES},
            )
        return self


__all__ = [
    "MAX_BATCH_BYTES",
    "MAX_LINES",
    "MAX_LINE_BYTES",
    "MAX_LOGGER_CHARS",
    "MAX_MESSAGE_CHARS",
    "AgentLogs",
    "LogLevel",
    "LogLine",
]
