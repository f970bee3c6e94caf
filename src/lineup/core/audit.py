"""The audit chain: one append-only, hash-chained log of governance for the whole hub.

Every entry carries the hash of the one before it (``prev_hash``; the first carries
:data:`GENESIS`) and its own ``hash``: the RFC 8785 digest (:mod:`lineup.core.canonical`) of
all its other fields. Editing an entry breaks its own hash; removing one leaves a gap in
``seq`` or a ``prev_hash`` that names nothing; the stored head (the last entry's seq and
hash) catches a removed tail. What the chain cannot catch alone is a rewrite of every entry
from some point on together with the head: for that, the head's hash has to be kept
somewhere else (docs/adr/0002-audit-chain.md).

This module only computes and checks; the store keeps the entries (``lineup.store.audit``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from lineup.core.canonical import canonical, digest

GENESIS = "sha256:" + "0" * 64
"""The ``prev_hash`` of the first entry, and the head's hash while the chain is empty."""

_SAFE_FLOAT = float(2**53)


@dataclass(frozen=True)
class Head:
    """Where the chain ends: the last entry's ``seq`` and ``hash`` (0 and :data:`GENESIS`
    when it has none)."""

    seq: int
    hash: str


EMPTY = Head(0, GENESIS)


@dataclass(frozen=True)
class AuditEntry:
    """One governance event: what happened (``kind``) to what (``subject``), by whom."""

    seq: int
    at_ms: int
    kind: str
    workspace_id: str | None
    actor: str
    subject: str
    data: dict[str, Any] = field(hash=False)
    prev_hash: str
    hash: str

    def content(self) -> dict[str, Any]:
        """Every field but ``hash``: what the hash is made over."""
        return _content(
            seq=self.seq,
            at_ms=self.at_ms,
            kind=self.kind,
            workspace_id=self.workspace_id,
            actor=self.actor,
            subject=self.subject,
            data=self.data,
            prev_hash=self.prev_hash,
        )

    def record(self) -> dict[str, Any]:
        """Every field, as exported (one JSON object per entry)."""
        return {**self.content(), "hash": self.hash}

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> AuditEntry:
        """The entry an exported record describes; ``ValueError`` if a field is missing or of
        the wrong type (its hash is not checked here: that is :func:`verify`'s work)."""
        try:
            entry = cls(
                seq=record["seq"],
                at_ms=record["at_ms"],
                kind=record["kind"],
                workspace_id=record["workspace_id"],
                actor=record["actor"],
                subject=record["subject"],
                data=record["data"],
                prev_hash=record["prev_hash"],
                hash=record["hash"],
            )
        except KeyError as missing:
            raise ValueError(f"an audit record needs {missing.args[0]!r}") from None
        checks: tuple[tuple[str, object, type | tuple[type, ...]], ...] = (
            ("seq", entry.seq, int),
            ("at_ms", entry.at_ms, int),
            ("kind", entry.kind, str),
            ("workspace_id", entry.workspace_id, (str, type(None))),
            ("actor", entry.actor, str),
            ("subject", entry.subject, str),
            ("data", entry.data, dict),
            ("prev_hash", entry.prev_hash, str),
            ("hash", entry.hash, str),
        )
        for name, value, expected in checks:
            if not isinstance(value, expected) or isinstance(value, bool):
                raise ValueError(f"an audit record's {name!r} has the wrong type")
        return entry

    @property
    def head(self) -> Head:
        """The head of a chain that ends with this entry."""
        return Head(self.seq, self.hash)


def _content(
    *,
    seq: int,
    at_ms: int,
    kind: str,
    workspace_id: str | None,
    actor: str,
    subject: str,
    data: Mapping[str, Any],
    prev_hash: str,
) -> dict[str, Any]:
    return {
        "seq": seq,
        "at_ms": at_ms,
        "kind": kind,
        "workspace_id": workspace_id,
        "actor": actor,
        "subject": subject,
        "data": data,
        "prev_hash": prev_hash,
    }


def entry_hash(
    *,
    seq: int,
    at_ms: int,
    kind: str,
    workspace_id: str | None,
    actor: str,
    subject: str,
    data: Mapping[str, Any],
    prev_hash: str,
) -> str:
    """``sha256:<hex>`` of the canonical form of every field but the hash itself."""
    return digest(
        _content(
            seq=seq,
            at_ms=at_ms,
            kind=kind,
            workspace_id=workspace_id,
            actor=actor,
            subject=subject,
            data=data,
            prev_hash=prev_hash,
        )
    )


def stored_form(data: Mapping[str, Any]) -> dict[str, Any]:
    """``data`` as every JSON store gives it back, so its hash still holds once read again.

    The canonical form writes ``3.0`` as ``3``, which reads back as an integer; PostgreSQL's
    JSONB writes a large float such as ``1e21`` out in full, which reads back as an integer
    too large to canonicalise. The first is harmless once normalised here; the second is
    refused (``ValueError``), like integers beyond 2^53, which doubles cannot hold exactly.
    """
    _refuse_unsafe_floats(data)
    value = json.loads(canonical(dict(data)))
    canonical(value)  # what was a large integral float is now an integer: refused here
    if not isinstance(value, dict):  # pragma: no cover - a mapping stays an object
        raise ValueError("audit data must be a JSON object")
    return value


def _refuse_unsafe_floats(value: Any) -> None:
    if isinstance(value, float) and math.isfinite(value) and abs(value) >= _SAFE_FLOAT:
        raise ValueError(f"the number {value!r} is beyond what JSON doubles hold exactly")
    if isinstance(value, Mapping):
        for item in value.values():
            _refuse_unsafe_floats(item)
    elif isinstance(value, list | tuple):
        for item in value:
            _refuse_unsafe_floats(item)


def next_entry(
    head: Head,
    *,
    at_ms: int,
    kind: str,
    workspace_id: str | None,
    actor: str,
    subject: str,
    data: Mapping[str, Any],
) -> AuditEntry:
    """The entry that follows ``head``; ``ValueError`` for an empty kind, actor or subject,
    or data that is not canonicalisable JSON."""
    for name, value in (("kind", kind), ("actor", actor), ("subject", subject)):
        if not value:
            raise ValueError(f"an audit entry needs a {name}")
    stored = stored_form(data)
    seq = head.seq + 1
    return AuditEntry(
        seq=seq,
        at_ms=at_ms,
        kind=kind,
        workspace_id=workspace_id,
        actor=actor,
        subject=subject,
        data=stored,
        prev_hash=head.hash,
        hash=entry_hash(
            seq=seq,
            at_ms=at_ms,
            kind=kind,
            workspace_id=workspace_id,
            actor=actor,
            subject=subject,
            data=stored,
            prev_hash=head.hash,
        ),
    )


# --- verification --------------------------------------------------------------------------


class Problem(StrEnum):
    CHANGED = "changed"
    """An entry's hash no longer matches its content."""
    REMOVED = "removed"
    """An entry is missing: a gap in seq, or a ``prev_hash`` that is not the previous hash."""
    REORDERED = "reordered"
    """Entries are out of seq order, or one appears twice."""
    HEAD_MISMATCH = "head_mismatch"
    """The stored head names another last entry: the tail was removed, or entries were
    added without the head."""


@dataclass(frozen=True)
class Verification:
    """What a walk of the chain found."""

    ok: bool
    checked: int
    """Entries found intact, from the first on."""
    head: Head
    """The last intact entry's seq and hash."""
    message: str
    """For a person: that the chain is intact, or what is wrong and where."""
    first_bad_seq: int | None = None
    problem: Problem | None = None
    found: AuditEntry | None = None
    """The entry found where the chain breaks (``None`` when the break is past the last)."""


class ChainWalk:
    """Checks a chain handed over in pages, in seq order, from its first entry on.

    :meth:`feed` takes the next page and answers the first problem it finds (after which
    the walk is over) or ``None``; :meth:`finish` compares the end with the stored head.
    A page is looked ahead in only to tell entries that are out of order from missing ones.
    """

    def __init__(self) -> None:
        self._head = EMPTY
        self._checked = 0
        self._failed: Verification | None = None

    @property
    def head(self) -> Head:
        return self._head

    @property
    def checked(self) -> int:
        return self._checked

    def feed(self, page: Sequence[AuditEntry]) -> Verification | None:
        if self._failed is not None:
            return self._failed
        for index, entry in enumerate(page):
            problem = self._check(entry, page[index + 1 :])
            if problem is not None:
                self._failed = problem
                return problem
            self._head = entry.head
            self._checked += 1
        return None

    def finish(self, head: Head | None = None) -> Verification:
        if self._failed is not None:
            return self._failed
        last = self._head
        if head is not None and head != last:
            if head.seq > last.seq:
                count = head.seq - last.seq
                what = "entry" if count == 1 else f"{count} entries"
                return self._fail(
                    Problem.HEAD_MISMATCH,
                    last.seq + 1,
                    None,
                    f"the stored head is seq {head.seq} but the chain ends at seq {last.seq}: "
                    f"the last {what} were removed",
                )
            if head.seq < last.seq:
                return self._fail(
                    Problem.HEAD_MISMATCH,
                    head.seq + 1,
                    None,
                    f"the chain goes on to seq {last.seq} past the stored head, seq {head.seq}:"
                    " entries were added without the head",
                )
            return self._fail(
                Problem.HEAD_MISMATCH,
                last.seq,
                None,
                f"the stored head's hash for seq {head.seq} is not the hash of the entry "
                "there: that entry or the head was rewritten",
            )
        entries = "entry" if self._checked == 1 else "entries"
        return Verification(
            ok=True,
            checked=self._checked,
            head=last,
            message=f"audit chain intact: {self._checked} {entries}, head {last.hash}",
        )

    def _check(self, entry: AuditEntry, rest: Sequence[AuditEntry]) -> Verification | None:
        prev = self._head
        expected = prev.seq + 1
        intact = _intact(entry)
        if entry.seq != expected:
            if _intact(entry, seq=expected):
                return self._fail(
                    Problem.CHANGED,
                    expected,
                    entry,
                    f"seq {expected} has been renumbered to {entry.seq}",
                )
            if entry.seq > expected and intact:
                if any(later.seq == expected for later in rest):
                    return self._fail(
                        Problem.REORDERED,
                        expected,
                        entry,
                        f"seq {entry.seq} comes where seq {expected} belongs: "
                        "entries are out of order",
                    )
                missing = (
                    f"seq {expected} is missing"
                    if entry.seq == expected + 1
                    else f"seq {expected} to {entry.seq - 1} are missing"
                )
                return self._fail(
                    Problem.REMOVED, expected, entry, f"{missing}: the chain jumps to {entry.seq}"
                )
            if entry.seq < expected and intact:
                return self._fail(
                    Problem.REORDERED,
                    expected,
                    entry,
                    f"seq {entry.seq} appears again after seq {prev.seq}: "
                    "entries are out of order or repeated",
                )
            return self._fail(
                Problem.CHANGED,
                expected,
                entry,
                f"the entry where seq {expected} belongs says seq {entry.seq} and its hash "
                "does not match its content",
            )
        if not intact:
            return self._fail(
                Problem.CHANGED,
                expected,
                entry,
                f"seq {expected} was changed: its hash does not match its content",
            )
        if entry.prev_hash != prev.hash:
            before = "the chain's start" if prev.seq == 0 else f"seq {prev.seq}"
            return self._fail(
                Problem.REMOVED,
                expected,
                entry,
                f"seq {expected} does not follow {before}: its prev_hash is not that entry's "
                "hash, so an entry between them was removed or one of them rewritten whole",
            )
        return None

    def _fail(
        self, problem: Problem, seq: int, found: AuditEntry | None, message: str
    ) -> Verification:
        return Verification(
            ok=False,
            checked=self._checked,
            head=self._head,
            message=message,
            first_bad_seq=seq,
            problem=problem,
            found=found,
        )


def _intact(entry: AuditEntry, *, seq: int | None = None) -> bool:
    """Whether ``entry``'s hash matches its content (with ``seq`` in place of its own)."""
    content = entry.content()
    if seq is not None:
        content["seq"] = seq
    try:
        return digest(content) == entry.hash
    except ValueError:
        return False


def verify(entries: Iterable[AuditEntry], head: Head | None = None) -> Verification:
    """Walk ``entries`` (the chain from its first entry, in seq order) and, when ``head`` is
    given, compare the end with it: the first problem, or that the chain is intact."""
    walk = ChainWalk()
    failed = walk.feed(list(entries))
    return failed if failed is not None else walk.finish(head)
