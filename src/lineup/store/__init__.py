"""Persistence for LineUp: the event log, its projections, and a group-commit writer.

One schema and one code path for SQLite (embedded, the default) and PostgreSQL (several hub
nodes). Open with ``await Store.open(url)``, then ``await store.migrate()``. Write with
``await store.write(fn)`` and read with ``await store.read(fn)``, where ``fn`` is a plain
(synchronous) function of a ``WriteTx`` or a ``Reader``.
"""

from lineup.store import audit, auth, sweeps
from lineup.store.eventlog import AppendResult, NewEvent, Sent, StoredEvent, fact_of
from lineup.store.queries import RawEvent, Reader, event_of_raw
from lineup.store.records import (
    Agent,
    AgentCredentialRecord,
    Artifact,
    Conversation,
    DeveloperTokenRecord,
    Interaction,
    InvitationRecord,
    Member,
    Membership,
    Message,
    PairingCodeRecord,
    SessionRecord,
    SessionTokenRecord,
    Task,
    TaskDetail,
    User,
    UserWorkspace,
    Workspace,
)
from lineup.store.store import Store, database_url_from_env
from lineup.store.writer import WriterStats, WriteTx

__all__ = [
    "Agent",
    "AgentCredentialRecord",
    "AppendResult",
    "Artifact",
    "Conversation",
    "DeveloperTokenRecord",
    "Interaction",
    "InvitationRecord",
    "Member",
    "Membership",
    "Message",
    "NewEvent",
    "PairingCodeRecord",
    "RawEvent",
    "Reader",
    "Sent",
    "SessionRecord",
    "SessionTokenRecord",
    "Store",
    "StoredEvent",
    "Task",
    "TaskDetail",
    "User",
    "UserWorkspace",
    "Workspace",
    "WriteTx",
    "WriterStats",
    "audit",
    "auth",
    "database_url_from_env",
    "event_of_raw",
    "fact_of",
    "sweeps",
]
