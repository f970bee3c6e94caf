"""Prebuilt Core statements run straight on the driver: the append path's hot statements.

``Connection.execute`` builds an execution context, processes parameters by name and wraps
every result for each call; on the writer's hot path (four or five statements per agent
event) that machinery cost more than SQLite itself, and on PostgreSQL a fifth of the hub's
CPU per event. :func:`run` compiles a statement once per set of parameter names and
dialect, and afterwards hands the DBAPI cursor the SQL text and the positional values —
the same SQL and the same type processing (JSON, booleans), minus the per-call
construction. Errors are raised as ``Connection.execute`` raises them (SQLAlchemy's
``IntegrityError`` and kin) and counted in ``engines.DB_ERRORS``. On asyncpg the statement
goes to asyncpg itself, beneath SQLAlchemy's adapter cursor (:func:`_on_asyncpg`).
:func:`tuples` returns a query's rows as the driver made them. Writes a batch holds back
(``HELD``, ``lineup.store.append_buffer``) are made before any of these runs.

Only inside a transaction: outside one, ``Connection.execute`` would begin one and the
driver would not, so there it is used as is.

Statements given here must be built once (module constants, or cached): the compiled form
is kept per statement object. They must be simple: no expanding ``IN`` parameters, no
``literal_execute``, no columns with Python-side defaults.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from sqlalchemy.engine import Connection
from sqlalchemy.exc import DBAPIError
from sqlalchemy.sql.base import Executable
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.elements import ClauseElement
from sqlalchemy.util import await_only

from lineup.store.engines import DB_ERRORS

Processor = Callable[[Any], Any] | None


@dataclass(frozen=True, slots=True)
class Rows:
    """A statement's outcome: rows as mappings of column name to value, and the row count."""

    rows: list[dict[str, Any]]
    rowcount: int

    def first(self) -> dict[str, Any] | None:
        return self.rows[0] if self.rows else None

    def scalar(self) -> Any:
        """The first column of the first row, or ``None`` without rows."""
        return next(iter(self.rows[0].values())) if self.rows else None

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self.rows)


HELD = "lineup_held_writes"
"""Key in ``Connection.info``: writes held back to be made together (``append_buffer``), made
before any other statement runs on the connection."""


class Held(Protocol):
    def __bool__(self) -> bool: ...

    def flush(self, conn: Connection) -> None: ...


@dataclass(frozen=True, slots=True)
class _Prepared:
    sql: str
    # per positional parameter: its name, the value compiled into the statement (for binds
    # such as the ``1`` in ``x + 1``) and the type's bind processor
    binds: tuple[tuple[str, Any, Processor], ...]
    columns: tuple[tuple[str, Processor], ...]


_MISSING = object()
_PREPARED_LIMIT = 1024
_prepared: dict[tuple[Executable, frozenset[str], str], _Prepared] = {}


def run(conn: Connection, stmt: Executable, params: Mapping[str, Any] | None = None) -> Rows:
    """Execute ``stmt`` with ``params`` in ``conn``'s current transaction."""
    params = params or {}
    if not conn.in_transaction():
        # Connection.execute would begin one (autobegin); the driver would not.
        result = conn.execute(stmt, dict(params))
        rows = [dict(row._mapping) for row in result] if result.returns_rows else []
        return Rows(rows, result.rowcount)
    prepared, fetched, rowcount = _execute(conn, stmt, params)
    columns = prepared.columns
    return Rows(
        [
            {
                name: value if process is None else process(value)
                for (name, process), value in zip(columns, row, strict=True)
            }
            for row in fetched
        ],
        rowcount,
    )


def tuples(
    conn: Connection, stmt: Executable, params: Mapping[str, Any] | None = None
) -> Sequence[Sequence[Any]]:
    """The rows of a query whose columns the driver returns as they are (no result
    processing: text, numbers), each as the driver made it, in the columns' order — for a
    replay's pages of a thousand rows, where a mapping or a SQLAlchemy row per row costs
    more than the row itself. Inside a transaction only."""
    prepared, fetched, _ = _execute(conn, stmt, params or {})
    if any(process is not None for _, process in prepared.columns):
        raise ValueError("statements.tuples takes columns without result processing only")
    return fetched


def _prepared_for(conn: Connection, stmt: Executable, params: Mapping[str, Any]) -> _Prepared:
    key = (stmt, frozenset(params), conn.dialect.name)
    prepared = _prepared.get(key)
    if prepared is None:
        if len(_prepared) >= _PREPARED_LIMIT:
            _prepared.clear()  # statements built per call would otherwise pile up here
        prepared = _prepared[key] = _prepare(conn, stmt, params)
    return prepared


def _args(prepared: _Prepared, params: Mapping[str, Any]) -> list[Any]:
    args = []
    for name, default, process in prepared.binds:
        value = params.get(name, default)
        if value is _MISSING:
            raise KeyError(f"statement parameter {name!r} was not given")
        args.append(value if process is None else process(value))
    return args


def _execute(
    conn: Connection, stmt: Executable, params: Mapping[str, Any]
) -> tuple[_Prepared, Sequence[Any], int]:
    held = conn.info.get(HELD)
    if held:
        held.flush(conn)  # appends held back go first: this statement may read what they wrote
    dialect = conn.dialect
    prepared = _prepared_for(conn, stmt, params)
    args = _args(prepared, params)
    raw = conn.connection.dbapi_connection
    assert raw is not None
    error_base = dialect.loaded_dbapi.Error
    fetched: Sequence[Any]
    try:
        if dialect.driver == "asyncpg":
            fetched, rowcount = _on_asyncpg(raw, dialect, prepared.sql, args)
            if not prepared.columns:
                fetched = ()
        else:
            cursor = raw.cursor()
            cursor.execute(prepared.sql, args)
            fetched = cursor.fetchall() if prepared.columns else ()
            rowcount = cursor.rowcount
    except error_base as exc:
        # As Connection.execute would: count it (see engines.DB_ERRORS) and raise it as
        # SQLAlchemy's exception of the same kind (IntegrityError, OperationalError, …).
        conn.info[DB_ERRORS] = conn.info.get(DB_ERRORS, 0) + 1
        raise DBAPIError.instance(prepared.sql, args, exc, error_base, dialect=dialect) from exc
    return prepared, fetched, rowcount


_STATUS_COUNT = re.compile(r"(?:SELECT|UPDATE|DELETE|INSERT \d+) (\d+)")


def _on_asyncpg(raw: Any, dialect: Any, sql: str, args: list[Any]) -> tuple[Sequence[Any], int]:
    """One statement straight on the asyncpg connection beneath SQLAlchemy's adapter.

    The adapter's cursor costs about as much CPU per statement as asyncpg itself (a mutex, a
    cursor object, its row deque, the status parsed by a regular expression built per call);
    on the writer's path, several statements per event, that was a third of the hub's CPU.
    This uses the adapter's own pieces — its transaction (begun as its cursor would begin
    it), its per-connection cache of prepared statements and its translation of asyncpg's
    errors into the DBAPI's classes — so a connection used both ways stays in one state.
    """

    async def execute() -> tuple[Sequence[Any], int]:
        if not raw._started:
            await raw._start_transaction()
        statement, _ = await raw._prepare(sql, dialect._invalidate_schema_cache_asof)
        fetched = await statement.fetch(*args)
        found = _STATUS_COUNT.match(statement.get_statusmsg() or "")
        return fetched, int(found.group(1)) if found else -1

    try:
        return await_only(execute())
    except Exception as error:
        raw._handle_exception(error)  # raises it as the DBAPI's error of the same kind
        raise


def _prepare(conn: Connection, stmt: Executable, params: Mapping[str, Any]) -> _Prepared:
    assert isinstance(stmt, ClauseElement)
    compiled = stmt.compile(dialect=conn.dialect, column_keys=list(params))
    assert isinstance(compiled, SQLCompiler)
    if compiled.escaped_bind_names or compiled.literal_execute_params:
        raise ValueError("statements.run takes simple statements only")
    if compiled.insert_prefetch or compiled.update_prefetch:
        raise ValueError("statements.run takes no columns with Python-side defaults")
    processors = compiled._bind_processors
    binds: list[tuple[str, Any, Processor]] = []
    for name in compiled.positiontup or ():
        bind = compiled.binds[name]
        if bind.expanding:
            raise ValueError("statements.run takes no expanding (IN) parameters")
        default = _MISSING if bind.required else bind.effective_value
        process = processors.get(name)
        assert process is None or callable(process)
        binds.append((name, default, process))
    dialect = conn.dialect
    columns = tuple(
        (entry.keyname, entry.type._cached_result_processor(dialect, None))
        for entry in compiled._result_columns
    )
    return _Prepared(compiled.string, tuple(binds), columns)
