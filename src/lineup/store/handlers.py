"""How a projection of one fact type is written down: the handler's type, and a table entry
that keeps each handler to its fact's model for the type checker."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar, cast

from sqlalchemy.engine import Connection

from lineup.protocol import facts as f

if TYPE_CHECKING:
    from lineup.store.eventlog import StoredEvent

Handler = Callable[[Connection, "StoredEvent", f.Fact], None]
"""A projection of one fact type: the event's envelope and its payload as the fact's model."""
F = TypeVar("F", bound=f.Fact)


def on(
    model: type[F], handler: Callable[[Connection, StoredEvent, F], None]
) -> tuple[str, Handler]:
    """One entry of a ``HANDLERS`` table: ``handler`` projects ``model``'s facts."""
    return model.fact_type, cast(Handler, handler)
