"""``lineup serve``, ``lineup user create``, ``lineup secrets``, ``lineup audit``,
``lineup log compact`` and ``lineup session``: the hub's part of the command line."""

from __future__ import annotations

import argparse
import asyncio
import collections
import gc
import getpass
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TextIO

from lineup.hub.config import Settings, lineup_home
from lineup.hub.tls import (
    TlsSetupError,
    add_tls_arguments,
    tls_from_arguments,
)
from lineup.hub.tls import (
    describe as describe_tls,
)

if TYPE_CHECKING:
    from lineup.core.audit import Verification
    from lineup.hub.hosted import EngineHost
    from lineup.hub.retention import Compaction
    from lineup.hub.session_files import Exported, Imported


def add_commands(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    *,
    engine_host: Callable[[Settings], EngineHost] | None = None,
) -> None:
    """``engine_host`` makes what runs the hub's hosted agents (``lineup.engines``): given by
    ``lineup``'s command line, since the hub itself does not use the agent SDK."""
    serve = commands.add_parser("serve", help="start the hub (SQLite under LINEUP_HOME by default)")
    serve.add_argument("--host", default=os.environ.get("LINEUP_HOST", "127.0.0.1"))
    serve.add_argument("--port", type=int, default=int(os.environ.get("LINEUP_PORT", "8000")))
    serve.add_argument(
        "--node-id", default=None, help="this node's name in a cluster (LINEUP_NODE_ID)"
    )
    serve.add_argument("--log-level", default=os.environ.get("LINEUP_LOG_LEVEL", "info"))
    serve.add_argument(
        "--log-format",
        choices=("text", "json"),
        default=os.environ.get("LINEUP_LOG_FORMAT", "text"),
        help="json: one JSON object per line (LINEUP_LOG_FORMAT)",
    )
    serve.add_argument(
        "--no-engines", action="store_true", help="host no agents (engines) in this process"
    )
    add_tls_arguments(serve)
    serve.set_defaults(func=_serve, engine_host=engine_host)

    user = commands.add_parser("user", help="manage people's accounts")
    user_commands = user.add_subparsers(dest="user_command", metavar="ACTION", required=True)
    create = user_commands.add_parser("create", help="create an account and its first workspace")
    create.add_argument("--email", required=True)
    create.add_argument("--name", default="", help="display name")
    create.add_argument("--workspace", default=None, help="first workspace's name")
    create.add_argument(
        "--password-env",
        default="LINEUP_PASSWORD",
        help="environment variable holding the password (else you are asked)",
    )
    create.set_defaults(func=_user_create)

    secrets = commands.add_parser("secrets", help="the key that seals secrets in the database")
    secret_commands = secrets.add_subparsers(
        dest="secrets_command", metavar="ACTION", required=True
    )
    secret_commands.add_parser(
        "new-key", help="print a fresh key for LINEUP_SECRET_KEY or the key file"
    ).set_defaults(func=_secrets_new_key)
    secret_commands.add_parser(
        "rotate",
        help="seal every stored secret again under the first key (then older keys can go)",
    ).set_defaults(func=_secrets_rotate)

    audit = commands.add_parser("audit", help="the governance audit chain")
    audit_commands = audit.add_subparsers(dest="audit_command", metavar="ACTION", required=True)
    audit_commands.add_parser(
        "verify", help="check the whole chain and its head; exit 1 naming the first bad entry"
    ).set_defaults(func=_audit_verify)
    export = audit_commands.add_parser(
        "export", help="write the chain as JSON lines, one entry per line"
    )
    export.add_argument("--out", default=None, help="file to write (default: standard output)")
    export.add_argument("--workspace", default=None, help="only this workspace's entries")
    export.set_defaults(func=_audit_export)

    log_parser = commands.add_parser("log", help="the event log")
    log_commands = log_parser.add_subparsers(dest="log_command", metavar="ACTION", required=True)
    compact = log_commands.add_parser(
        "compact",
        help="compact every workspace's log by its retention policy now",
        description="Delete events older than each workspace's retention (LINEUP_RETENTION_"
        "DAYS / LINEUP_RETENTION_MAX_EVENTS, or its own retention.* settings), keeping what is "
        "still needed, and print the figures. The hub does this by itself every "
        "LINEUP_RETENTION_INTERVAL; running both at once is harmless.",
    )
    compact.add_argument(
        "--dry-run", action="store_true", help="count what would be deleted; change nothing"
    )
    compact.set_defaults(func=_log_compact)

    _add_session_commands(commands)

    creds = commands.add_parser(
        "credentials", help="what the hub holds to reach each provider's system (sealed)"
    )
    cred_commands = creds.add_subparsers(
        dest="credentials_command", metavar="ACTION", required=True
    )
    put = cred_commands.add_parser(
        "set",
        help="hold NAME for PROVIDER's INSTANCE; the value is read from standard input",
    )
    put.add_argument("provider")
    put.add_argument("instance")
    put.add_argument("name", help="e.g. apiKey")
    put.set_defaults(func=_credentials_set)
    cred_commands.add_parser(
        "list", help="which providers and instances have credentials (never their values)"
    ).set_defaults(func=_credentials_list)


def _serve(args: argparse.Namespace) -> int:
    import uvicorn

    from lineup.hub.app import AgentSocketFirst, create_app
    from lineup.hub.connections import raise_open_files_limit, uvicorn_options
    from lineup.hub.logs import configure  # JSON logs, request ids

    try:
        tls = tls_from_arguments(args, lineup_home())
    except (TlsSetupError, OSError) as problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    settings = Settings.from_env(host=args.host, port=args.port, node_id=args.node_id, tls=tls)
    log_config = configure(args.log_level, args.log_format, settings.node_id)
    where = (
        settings.database_url.split("@")[-1]
        if "@" in settings.database_url
        else (settings.database_url)
    )
    print(f"LineUp hub on {settings.base_url}  (database: {where})", flush=True)
    print(
        "Connect the demo agent: sign in, open Agents → Connect my agent, then run\n"
        f"  lineup demo-agent --hub {settings.base_url} --code <CODE>",
        flush=True,
    )
    if tls is not None:
        print(describe_tls(tls), flush=True)
    raise_open_files_limit()  # every connection is a file: the hard limit, not the soft one
    make_host = None if args.no_engines else args.engine_host
    app = create_app(settings, engine_host=make_host(settings) if make_host else None)
    _settle_garbage_collector()
    uvicorn.run(
        AgentSocketFirst(app),
        host=settings.host,
        port=settings.port,
        log_level=args.log_level.lower(),
        proxy_headers=True,
        timeout_graceful_shutdown=10,
        ws_max_size=1024 * 1024,
        # a deflate context costs ~250 KiB per socket; frames are small JSON
        ws_per_message_deflate=False,
        ws=_lean_websockets(),  # 10,000 idle agents on a node
        log_config=log_config,
        **uvicorn_options(settings),  # header and keep-alive timeouts, per-address cap
        ssl_certfile=str(tls.cert_file) if tls is not None else None,
        ssl_keyfile=str(tls.key_file) if tls is not None else None,
    )
    return 0


def _settle_garbage_collector() -> None:
    """Keep the cyclic garbage collector off the per-event path of a long-running hub.

    Everything loaded so far (modules, the app, SQLAlchemy's metadata) lives as long as the
    process: frozen, it is no longer scanned by every full collection. A larger first
    threshold means fewer collections of the young objects each event leaves in flight
    (the append path leaves no reference cycles behind, so little waits longer to be freed).
    Measured end to end: a quarter of the hub's CPU per agent event went to collections
    (docs/benchmarks.md).
    """
    gc.collect()
    gc.freeze()
    gc.set_threshold(10_000, 50, 100)


def _lean_websockets() -> type[asyncio.Protocol] | str:
    """uvicorn's WebSocket protocol, lighter per idle connection (10,000 agents).

    It lets go of the handshake's request and response once the socket is open (their header
    structures were some 3 KiB a connection, and the scope keeps the headers the app reads),
    and keeps no keep-alive ping timer for agents' sockets: an agent beats every 25 s and the
    hub's monitor closes one that misses two beats, so the protocol ping only duplicated that
    (10,000 agents: 500 pings a second). People's apps have no heartbeat; their sockets keep it.
    It relies on that protocol's internals; tests/e2e run it (``lineup serve``) on every change.
    """
    from lineup.hub.app import AGENT_SOCKET_PATH

    try:
        from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
    except ImportError:  # an older uvicorn: its own choice, with the ping and the handshake
        return "auto"

    class LeanWebSocketsProtocol(WebSocketsSansIOProtocol):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.queue = _Inbox()  # type: ignore[assignment]

        def handle_connect(self, event: Any) -> None:
            super().handle_connect(event)
            self.request = None  # type: ignore[assignment]

        def start_keepalive(self) -> None:
            if self.scope["path"] != self.root_path + AGENT_SOCKET_PATH:
                super().start_keepalive()

        async def send(self, message: Any) -> None:
            await super().send(message)
            if self.handshake_complete and self.response is not None:
                self.response = None  # type: ignore[assignment]
                _restart_parser(self.conn)

    return LeanWebSocketsProtocol


class _Inbox:
    """What uvicorn's protocol uses of the ``asyncio.Queue`` it keeps per socket for the
    app's ``receive`` (one reader): ``put_nowait``, ``get`` and ``empty``. The queue's three
    deques and its event were some 2.4 KiB of an idle socket; this holds a deque only while
    something waits to be read, and a future only while the app waits."""

    __slots__ = ("_items", "_waiter")

    def __init__(self) -> None:
        self._items: collections.deque[Any] | None = None
        self._waiter: asyncio.Future[None] | None = None

    def put_nowait(self, item: Any) -> None:
        if self._items is None:
            self._items = collections.deque()
        self._items.append(item)
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def get(self) -> Any:
        while not self._items:
            waiter = self._waiter = asyncio.get_running_loop().create_future()
            try:
                await waiter
            finally:
                self._waiter = None
        items = self._items
        item = items.popleft()
        if not items:
            self._items = None
        return item

    def empty(self) -> bool:
        return not self._items

    def qsize(self) -> int:
        return len(self._items) if self._items else 0


def _restart_parser(conn: Any) -> None:
    """Parse frames with a parser that never saw the handshake: the server's parser reads
    the HTTP request into a local and then parses frames in the same generator, so that
    request and its headers (some 2.5 KiB) stayed alive in its frame for the socket's life.
    Only while nothing is buffered (the client waits for the handshake's answer before it
    sends a frame): the old parser then waits at the start of a frame, where the new one
    starts too."""
    from websockets.protocol import Protocol, State

    reader = getattr(conn, "reader", None)
    if (
        getattr(conn, "state", None) is not State.OPEN
        or reader is None
        or reader.buffer
        or reader.eof
        or getattr(conn, "current_size", None) is not None
    ):
        return
    conn.parser = Protocol.parse(conn)
    next(conn.parser)


def _user_create(args: argparse.Namespace) -> int:
    password = os.environ.get(args.password_env) or getpass.getpass("Password: ")
    try:
        user_id, workspace_id = asyncio.run(
            create_user(Settings.from_env(), args.email, password, args.name, args.workspace)
        )
    except Exception as exc:  # shown to a person at a terminal
        message = getattr(exc, "message", str(exc))
        print(f"error: {message}", file=sys.stderr)
        return 1
    print(f"created user {user_id} with workspace {workspace_id}")
    return 0


async def create_user(
    settings: Settings, email: str, password: str, name: str, workspace: str | None
) -> tuple[str, str]:
    from lineup.hub.accounts import sign_up
    from lineup.hub.state import HubState
    from lineup.store import Store

    store = await Store.open(settings.database_url)
    try:
        await store.migrate()
        hub = HubState.create(settings, store)
        user, workspace_id = await sign_up(hub, email, password, name, workspace)
        return user.id, workspace_id
    finally:
        await store.close()


def _secrets_new_key(_: argparse.Namespace) -> int:
    from lineup.store.sealed import new_key_text

    print(new_key_text())
    return 0


def _secrets_rotate(_: argparse.Namespace) -> int:
    try:
        kid, changed = asyncio.run(rotate_secrets(Settings.from_env()))
    except Exception as exc:  # shown to a person at a terminal
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"{changed} stored secrets sealed again; all now under key {kid}")
    return 0


async def rotate_secrets(settings: Settings) -> tuple[str, int]:
    """Seal what is plain or under an older key with the current key: the id of the current
    key and how many values changed. Nothing changes if any value opens with no key."""
    from lineup.hub.secret_keys import reseal_stored
    from lineup.store import Store

    store = await Store.open(settings.database_url)
    try:
        await store.migrate()
        keyring, changed = await reseal_stored(settings, store)
    finally:
        await store.close()
    return keyring.current_id, changed


def _audit_verify(_: argparse.Namespace) -> int:
    from lineup.hub.audit import describe

    try:
        result = asyncio.run(verify_audit(Settings.from_env()))
    except Exception as exc:  # shown to a person at a terminal
        print(f"error: {getattr(exc, 'message', str(exc))}", file=sys.stderr)
        return 2
    print(describe(result))
    return 0 if result.ok else 1


async def verify_audit(settings: Settings) -> Verification:
    """The verification of the whole stored chain (``lineup.core.audit.Verification``)."""
    from lineup.hub.audit import verify_chain
    from lineup.store import Store

    store = await Store.open(settings.database_url)
    try:
        await store.migrate()
        return await verify_chain(store)
    finally:
        await store.close()


def _audit_export(args: argparse.Namespace) -> int:
    try:
        if args.out is None:
            count = asyncio.run(export_audit(Settings.from_env(), sys.stdout, args.workspace))
        else:
            with open(args.out, "w", encoding="utf-8", newline="\n") as out:
                count = asyncio.run(export_audit(Settings.from_env(), out, args.workspace))
    except json.JSONDecodeError:  # a stored entry's data is not JSON
        print(
            "error: an audit entry cannot be read (its data is not JSON); "
            "'lineup audit verify' names it",
            file=sys.stderr,
        )
        return 1
    except Exception as exc:  # shown to a person at a terminal
        print(f"error: {getattr(exc, 'message', str(exc))}", file=sys.stderr)
        return 2
    if args.out is not None:
        print(f"wrote {count} audit {'entry' if count == 1 else 'entries'} to {args.out}")
    return 0


async def export_audit(settings: Settings, out: TextIO, workspace_id: str | None) -> int:
    from lineup.hub.audit import export_chain
    from lineup.store import Store

    store = await Store.open(settings.database_url)
    try:
        await store.migrate()
        return await export_chain(store, out.write, workspace_id=workspace_id)
    finally:
        await store.close()


def _log_compact(args: argparse.Namespace) -> int:
    try:
        done = asyncio.run(compact_log(Settings.from_env(), dry_run=args.dry_run))
    except Exception as exc:  # shown to a person at a terminal
        print(f"error: {getattr(exc, 'message', str(exc))}", file=sys.stderr)
        return 2
    for line in describe_compaction(done, dry_run=args.dry_run):
        print(line)
    return 0


async def compact_log(settings: Settings, *, dry_run: bool = False) -> list[Compaction]:
    """Every workspace's log compacted by its policy now (``lineup.hub.retention``)."""
    from lineup.hub.retention import compact
    from lineup.store import Store

    store = await Store.open(settings.database_url)
    try:
        await store.migrate()
        return await compact(store, settings, int(time.time() * 1000), dry_run=dry_run)
    finally:
        await store.close()


def describe_compaction(done: Sequence[Compaction], *, dry_run: bool) -> list[str]:
    """One line per workspace, then the totals: what ``lineup log compact`` prints."""
    verb = "would delete" if dry_run else "deleted"
    lines = []
    for c in done:
        policy = c.policy
        limits = ", ".join(
            part
            for part in (
                f"{policy.max_age_days} days" if policy.max_age_days else "",
                f"{policy.max_events} events" if policy.max_events else "",
            )
            if part
        )
        lines.append(
            f"{c.workspace_id}: horizon {c.horizon_before} -> {c.horizon_after} of "
            f"{c.last_sequence}; {verb} {c.deleted} events, {c.kept} kept below the horizon "
            f"({limits or 'kept forever'}; {c.seconds * 1000:.0f} ms)"
        )
    deleted = sum(c.deleted for c in done)
    seconds = sum(c.seconds for c in done)
    rate = f", {deleted / seconds:,.0f} events/s" if deleted and seconds > 0 else ""
    lines.append(f"{len(done)} workspaces: {verb} {deleted} events in {seconds:.2f} s{rate}")
    return lines


def _add_session_commands(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
) -> None:
    session = commands.add_parser(
        "session", help="a conversation as a session file (JSONL, docs/sessions.md)"
    )
    actions = session.add_subparsers(dest="session_command", metavar="ACTION", required=True)
    export = actions.add_parser(
        "export",
        help="write a conversation as a session file",
        description="Write the conversation as a session file (docs/sessions.md): its "
        "messages, what its agents did, its cards and approvals, files as references.",
    )
    export.add_argument("--conversation", required=True, metavar="ID", help="its id (conv_…)")
    export.add_argument("--out", default=None, help="file to write (default: standard output)")
    export.set_defaults(func=_session_export)
    load = actions.add_parser(
        "import",
        help="make a new conversation of a session file (LineUp's or Pi's)",
        description="Record a session file (LineUp's, any version, or Pi's) as a new "
        "conversation of a workspace, every branch kept; a file that cannot be read is "
        "refused naming its first bad line.",
    )
    load.add_argument("file", help="the .jsonl file ('-': standard input)")
    load.add_argument("--user", required=True, metavar="EMAIL", help="who imports it")
    load.add_argument(
        "--workspace", default=None, help="the workspace (default: the user's only one)"
    )
    load.add_argument("--project", default=None, metavar="ID", help="the project it goes in")
    load.set_defaults(func=_session_import)


def _session_export(args: argparse.Namespace) -> int:
    try:
        exported = asyncio.run(export_session(Settings.from_env(), args.conversation))
    except Exception as exc:  # shown to a person at a terminal
        print(f"error: {getattr(exc, 'message', str(exc))}", file=sys.stderr)
        return 1
    if args.out is None:
        sys.stdout.buffer.write(exported.content)
        sys.stdout.flush()
        return 0
    with open(args.out, "wb") as out:
        out.write(exported.content)
    lines = exported.content.count(b"\n")
    print(f"wrote {args.conversation} to {args.out} ({lines} lines)")
    return 0


async def export_session(settings: Settings, conversation_id: str) -> Exported:
    """The session file of a conversation, found in whichever workspace it is."""
    from lineup.hub.session_files import export_conversation
    from lineup.hub.state import HubState
    from lineup.protocol.errors import NotFound
    from lineup.store import Store
    from lineup.store.session_files import conversation_workspace

    store = await Store.open(settings.database_url)
    try:
        await store.migrate()
        workspace = await store.read(
            lambda r: conversation_workspace(r.connection, conversation_id)
        )
        if workspace is None:
            raise NotFound(f"No conversation {conversation_id!r} in this hub.")
        hub = HubState.create(settings, store)
        return await export_conversation(hub, workspace, conversation_id, None)
    finally:
        await store.close()


def _session_import(args: argparse.Namespace) -> int:
    try:
        if args.file == "-":
            data = sys.stdin.buffer.read()
        else:
            with open(args.file, "rb") as source:
                data = source.read()
        done = asyncio.run(
            import_session_file(Settings.from_env(), data, args.user, args.workspace, args.project)
        )
    except Exception as exc:  # shown to a person at a terminal
        print(f"error: {getattr(exc, 'message', str(exc))}", file=sys.stderr)
        return 1
    print(
        f"imported {args.file} as conversation {done.conversation_id}: {done.entries} entries, "
        f"{done.messages} messages shown, {done.branches} "
        f"{'branch' if done.branches == 1 else 'branches'} (a {done.source_format} file, "
        f"version {done.source_version})"
    )
    return 0


async def import_session_file(
    settings: Settings,
    data: bytes,
    email: str,
    workspace_id: str | None,
    project_id: str | None,
) -> Imported:
    """Record ``data`` as a new conversation of ``email``'s workspace (their only one when
    ``workspace_id`` is None), as that person would by uploading it."""
    from lineup.hub.accounts import normalise_email, person_in
    from lineup.hub.session_files import import_session
    from lineup.hub.state import HubState
    from lineup.protocol.errors import InvalidArgument, NotFound
    from lineup.store import Store

    store = await Store.open(settings.database_url)
    try:
        await store.migrate()
        user = await store.read(lambda r: r.get_user_by_email(normalise_email(email)))
        if user is None:
            raise NotFound(f"No account with the email {email!r}.")
        if workspace_id is None:
            theirs = await store.read(lambda r: r.list_user_workspaces(user.id))
            if len(theirs) != 1:
                names = ", ".join(w.workspace.id for w in theirs) or "none"
                raise InvalidArgument(
                    f"{email} is in {len(theirs)} workspaces ({names}); name one with --workspace."
                )
            workspace_id = theirs[0].workspace.id
        hub = HubState.create(settings, store)
        person = await person_in(hub, user, workspace_id)
        return await import_session(hub, person, data, project_id=project_id)
    finally:
        await store.close()


def _credentials_set(args: argparse.Namespace) -> int:
    value = sys.stdin.readline().rstrip("\r\n")
    if not value:
        print("error: give the value on standard input (it is never an argument)", file=sys.stderr)
        return 2
    try:
        asyncio.run(
            set_credential(Settings.from_env(), args.provider, args.instance, args.name, value)
        )
    except Exception as exc:  # shown to a person at a terminal
        print(f"error: {getattr(exc, 'message', str(exc))}", file=sys.stderr)
        return 1
    print(f"{args.provider}/{args.instance}: {args.name} held, sealed")
    return 0


async def set_credential(
    settings: Settings, provider: str, instance: str, name: str, value: str
) -> None:
    """Seal ``name`` = ``value`` among the credentials injected into ``provider``'s calls on
    ``instance`` (the other names it holds stay as they are)."""
    from lineup.hub.secret_keys import load_keyring
    from lineup.store import Store
    from lineup.store import governance as gov_store

    keyring = load_keyring(settings)
    context = gov_store.credential_context(provider, instance)
    store = await Store.open(settings.database_url)
    try:
        await store.migrate()

        def job(tx: Any) -> None:
            sealed = gov_store.get_credential(tx.connection, provider, instance)
            values = json.loads(keyring.open(sealed, context)) if sealed else {}
            values[name] = value
            now = int(time.time() * 1000)
            gov_store.put_credential(
                tx.connection, provider, instance, keyring.seal(json.dumps(values), context), now
            )

        await store.write(job)
    finally:
        await store.close()


def _credentials_list(_: argparse.Namespace) -> int:
    try:
        rows = asyncio.run(list_credentials(Settings.from_env()))
    except Exception as exc:  # shown to a person at a terminal
        print(f"error: {getattr(exc, 'message', str(exc))}", file=sys.stderr)
        return 1
    for provider, instance, names in rows:
        print(f"{provider}/{instance}: {', '.join(names)}")
    return 0


async def list_credentials(settings: Settings) -> list[tuple[str, str, list[str]]]:
    from lineup.hub.secret_keys import load_keyring
    from lineup.store import Store
    from lineup.store import governance as gov_store

    keyring = load_keyring(settings)
    store = await Store.open(settings.database_url)
    try:
        await store.migrate()
        stored = await store.read(lambda r: gov_store.all_credentials(r.connection))
    finally:
        await store.close()
    out = []
    for provider, instance, sealed in stored:
        values = json.loads(keyring.open(sealed, gov_store.credential_context(provider, instance)))
        out.append((provider, instance, sorted(values)))
    return out
