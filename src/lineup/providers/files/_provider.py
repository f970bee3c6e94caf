"""The files provider: directories the operator names, behind the Provider interface.

Small on purpose — it shows that the package format is not the scheduling provider's alone:
reads answer at once, the one write goes through a person's approval with its diff on the
card, is made against the version the person saw (``conflict`` when the file moved on), and
is applied once per idempotency key (its ledger, :mod:`._ledger`). Its system is the local
file system, so it needs no account (auth kind ``none``); what it may reach is what the
operator configured, and no path leaves those directories.

The package's modules import each other relatively, so the hub can import the package under a
name of its own from wherever it unpacked it.
"""

from __future__ import annotations

import asyncio
import difflib
import hashlib
import json
import re
import sqlite3
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

from lineup.core.provider import Completed, Draft, Health, Invocation, ProviderError, Receipt
from lineup.protocol.capabilities import CapabilitySpec
from lineup.protocol.errors import ErrorCode, InvalidArgument
from lineup.protocol.tools import validate_arguments
from lineup.providers.adapter import AdapterContext, PackageAdapter, capability, preview

from ._ledger import Ledger
from ._tree import ABSENT, Tree, version_of

P = ParamSpec("P")
T = TypeVar("T")

_INSTANCE_NAME = re.compile(r"^[A-Za-z0-9_.:\-]{1,100}$")
_MAX_DIFF_CHARS = 200_000


class FilesProvider(PackageAdapter):
    """The directories ``config["instances"]`` names (``{"docs": "/srv/project/docs"}``),
    with the ledger of its writes under the provider's data directory."""

    def __init__(self, context: AdapterContext) -> None:
        super().__init__(context)
        configured = context.config.get("instances") or {}
        if not isinstance(configured, Mapping):
            raise ValueError('config["instances"] maps each instance to its directory')
        self._trees: dict[str, Tree] = {}
        for name, directory in configured.items():
            if not _INSTANCE_NAME.match(str(name)):
                raise ValueError(f"{name!r} cannot name an instance")
            if not Path(directory).is_absolute():
                raise ValueError(f"the directory of {name} must be an absolute path")
            self._trees[str(name)] = Tree(Path(directory))
        self._ledger = Ledger(Path(context.data_dir) / "writes.db")
        self._writing = threading.Lock()
        """Writes one at a time: a call cut off by a timeout goes on in its worker thread,
        and its retry waits for it rather than racing it."""
        self._specs = [
            spec.model_copy(update={"instances": sorted(self._trees)})
            for spec in self.manifest.specs()
        ]
        self._by_id = {spec.id: spec for spec in self._specs}

    def instances(self) -> Sequence[str]:
        return sorted(self._trees)

    # -- the capabilities -------------------------------------------------------------------

    @capability("files.list")
    async def list_directory(self, call: Invocation) -> Completed:
        tree = self._admit(call)
        output = await self._run(tree.listing, str(call.params.get("path", "")))
        return Completed(output=output, receipt={"instance": call.instance})

    @capability("files.read")
    async def read_file(self, call: Invocation) -> Completed:
        tree = self._admit(call)
        output = await self._run(tree.read, str(call.params["path"]))
        return Completed(output=output, receipt={"instance": call.instance})

    @preview("files.write")
    async def write_draft(self, call: Invocation) -> Draft:
        tree = self._admit(call)
        return await self._run(_draft, tree, call.instance, call.params)

    @capability("files.write")
    async def write_file(self, call: Invocation) -> Completed:
        tree = self._admit(call)
        if not call.idempotency_key:
            raise ProviderError(ErrorCode.INVALID_ARGUMENT, "A write needs an idempotency key.")
        return await self._run(self._write, tree, call)

    async def receipt(self, instance: str, idempotency_key: str) -> Receipt | None:
        """A write's outcome once it is done; ``None`` for a key never seen and for one cut
        off mid-write (its retry settles it), and for reads, which keep no record."""
        self._tree(instance)
        entry = await self._run(self._ledger.entry, instance, idempotency_key)
        if entry is None or entry.state != "done" or entry.output is None:
            return None
        return Receipt(idempotency_key, Completed(output=entry.output, receipt=_receipt(instance)))

    async def health(self) -> Health:
        problems = [
            f"{name}: {tree.root} is not a directory"
            for name, tree in sorted(self._trees.items())
            if not tree.root.is_dir()
        ]
        try:
            await asyncio.to_thread(self._ledger.check)
        except sqlite3.Error as exc:
            problems.append(f"the ledger of writes does not open ({exc})")
        if problems:
            return Health(ok=False, detail="; ".join(problems))
        return Health(ok=True, detail=f"{len(self._trees)} directory(ies)")

    # -- the parts --------------------------------------------------------------------------

    def _tree(self, instance: str) -> Tree:
        tree = self._trees.get(instance)
        if tree is None:
            raise ProviderError(ErrorCode.NOT_FOUND, f"There is no directory {instance!r}.")
        return tree

    def _admit(self, call: Invocation) -> Tree:
        spec: CapabilitySpec = self._by_id[call.capability]
        tree = self._tree(call.instance)
        try:
            validate_arguments(spec.input_schema, call.params)
        except InvalidArgument as exc:
            raise ProviderError(
                ErrorCode.INVALID_ARGUMENT, exc.message, details=exc.details
            ) from None
        return tree

    async def _run(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return await asyncio.to_thread(fn, *args, **kwargs)
        except sqlite3.Error:
            raise ProviderError(
                ErrorCode.UNAVAILABLE, "The ledger of writes could not be read or written."
            ) from None
        except PermissionError:
            raise ProviderError(
                ErrorCode.FORBIDDEN, "The file system refused the provider access."
            ) from None
        except OSError as exc:
            raise ProviderError(
                ErrorCode.UNAVAILABLE, f"The file system failed: {exc.strerror}."
            ) from None

    def _write(self, tree: Tree, call: Invocation) -> Completed:
        """Apply the write once per key: a repeat answers what the first answered."""
        content = str(call.params["content"]).encode("utf-8")
        digest = _params_digest(call.params)
        with self._writing:
            path, current = tree.content(str(call.params["path"]))
            now = version_of(current) if current is not None else ABSENT
            after = version_of(content)
            entry = self._ledger.entry(call.instance, call.idempotency_key)
            if entry is not None and entry.params_digest != digest:
                raise ProviderError(
                    ErrorCode.CONFLICT,
                    f"This idempotency key was used for another write (to {entry.path!r}).",
                )
            if entry is not None and entry.state == "done" and entry.output is not None:
                return Completed(output=entry.output, receipt=_receipt(call.instance))
            if entry is not None and now == entry.after:
                before = entry.before  # cut off after the rename: it was done
            else:
                expected = entry.before if entry is not None else call.expected_version
                if expected is not None and now != expected:
                    raise ProviderError(
                        ErrorCode.CONFLICT,
                        f"{path!r} changed since version {expected}: read it again.",
                        details={"currentVersion": now},
                    )
                before = now
                self._ledger.intend(call.instance, call.idempotency_key, digest, path, now, after)
                tree.write(path, content)
            output = {
                "path": path,
                "version": after,
                "previousVersion": before,
                "created": before == ABSENT,
                "bytes": len(content),
            }
            self._ledger.done(call.instance, call.idempotency_key, output)
        return Completed(output=output, receipt=_receipt(call.instance))


def make(context: AdapterContext) -> FilesProvider:
    """The package's entry point."""
    return FilesProvider(context)


def _draft(tree: Tree, instance: str, params: Mapping[str, Any]) -> Draft:
    path, current = tree.content(str(params["path"]))
    new = str(params["content"])
    old = current.decode("utf-8", errors="replace") if current is not None else ""
    diff = "".join(
        difflib.unified_diff(
            old.splitlines(keepends=True),
            new.splitlines(keepends=True),
            fromfile=f"a/{path}" if current is not None else "/dev/null",
            tofile=f"b/{path}",
        )
    )
    if len(diff) > _MAX_DIFF_CHARS:
        diff = diff[:_MAX_DIFF_CHARS] + "\n… (the diff goes on)\n"
    added = sum(1 for line in diff.splitlines() if line.startswith("+") and line[:3] != "+++")
    removed = sum(1 for line in diff.splitlines() if line.startswith("-") and line[:3] != "---")
    size = len(new.encode("utf-8"))
    if current is None:
        impact = f"Creates {path} ({len(new.splitlines())} line(s), {size} bytes)."
    elif not diff:
        impact = f"No change: {path} already has this content."
    else:
        impact = f"{path}: {added} line(s) added, {removed} removed ({size} bytes after)."
    version = version_of(current) if current is not None else ABSENT
    return Draft(
        summary=f"Write {path} in {instance} ({size} bytes).",
        impact=impact,
        resource_version=version,
        data={
            "path": path,
            "diff": diff,
            "before": version,
            "after": version_of(new.encode("utf-8")),
        },
    )


def _params_digest(params: Mapping[str, Any]) -> str:
    canonical = json.dumps(dict(params), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def _receipt(instance: str) -> dict[str, Any]:
    return {"system": "files", "instance": instance}
