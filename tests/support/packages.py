"""Provider packages for tests, as files.

* ``marked``: a small valid package whose adapter leaves a mark when it is imported — so a
  test can prove that a refused package's code never ran. The mark is a file at the path in
  ``LINEUP_TEST_IMPORT_MARKER``, written by the adapter module's top level (and by its
  fixture module's), appending one line per import.
* ``notes``: a small system kept in the package's data directory, at any version.
  ``notes.list`` reads; ``notes.export`` is an async write whose job ends only once the test
  releases it (a file ``release`` in the provider's data directory), so a test can act while
  an execution is in flight; from 2.0.0 on, ``notes.count`` is added (a wider surface).
* the shipped and broken package directories, and signing with a key a test trusts.
"""

from __future__ import annotations

import json
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import lineup
from lineup.core import package as pkg
from lineup.providers.packaging.authoring import trusted_key_line

MARKER_ENV = "LINEUP_TEST_IMPORT_MARKER"

SRC = Path(lineup.__file__).resolve().parent
SHIPPED = {name: SRC / "providers" / name for name in ("scheduling", "files")}
BROKEN_ROOT = Path(__file__).resolve().parent / "broken_providers"
BROKEN = {
    "wrong_schema": "schema",
    "non_idempotent": "idempotent_replay",
    "swallowed_error": "error_mapping",
    "hang": "timeout_unknown",
}
"""Each broken package and the rule it must fail."""

_ADAPTER = '''\
"""Leaves a mark when imported, then greets."""

from __future__ import annotations

import os

from lineup.core.provider import Completed, Invocation, ProviderError
from lineup.protocol.errors import ErrorCode, InvalidArgument
from lineup.protocol.tools import validate_arguments
from lineup.providers.adapter import AdapterContext, PackageAdapter, capability

with open(os.environ["LINEUP_TEST_IMPORT_MARKER"], "a") as mark:
    mark.write("adapter imported\\n")


class Marked(PackageAdapter):
    @capability("marked.greeting.read")
    async def greeting(self, call: Invocation) -> Completed:
        if call.instance not in self.instances():
            raise ProviderError(ErrorCode.NOT_FOUND, "No such instance.")
        try:
            validate_arguments(self.describe()[0].input_schema, call.params)
        except InvalidArgument as exc:
            raise ProviderError(ErrorCode.INVALID_ARGUMENT, exc.message) from None
        return Completed(output={"greeting": "Hello, " + call.params["name"]})
EXTRA


def make(context: AdapterContext) -> Marked:
    return Marked(context)
'''

_FIXTURE = """\
from __future__ import annotations

from pathlib import Path

from lineup.core.contract import ContractFixture
from lineup.providers.adapter import AdapterContext, manifest_at

from ..adapter import make


async def fixture(workdir: Path) -> ContractFixture:
    context = AdapterContext(
        manifest=manifest_at(Path(__file__).parents[1]),
        data_dir=workdir,
        config={"instances": ["test"]},
    )
    return ContractFixture(make(context), "test", {}, {"marked.greeting.read": {"name": "Ada"}})
"""


def _capability(capability_id: str) -> dict[str, Any]:
    return {
        "id": capability_id,
        "effect": "read",
        "description": "A greeting.",
        "inputSchema": {
            "type": "object",
            "additionalProperties": False,
            "required": ["name"],
            "properties": {"name": {"type": "string", "minLength": 1}},
        },
        "outputSchema": {
            "type": "object",
            "required": ["greeting"],
            "properties": {"greeting": {"type": "string"}},
        },
        "timeoutS": 5,
    }


def marked_package(*, claims: tuple[str, ...] = (), extra_handler: str = "") -> dict[str, bytes]:
    """The files of the ``marked`` package; ``claims`` adds capabilities to its manifest
    (which its adapter has no handler for), ``extra_handler`` code to its adapter class."""
    manifest = {
        "id": "marked",
        "version": "1.0.0",
        "vendor": "LineUp tests",
        "name": "Marked",
        "platform": ">=0.1, <1",
        "auth": {"kind": "none"},
        "adapter": {"entry": "adapter:make", "contract": "tests.contract:fixture"},
        "capabilities": [_capability(c) for c in ("marked.greeting.read", *claims)],
    }
    return {
        "provider.json": json.dumps(manifest, indent=2).encode(),
        "adapter.py": _ADAPTER.replace("EXTRA", extra_handler).encode(),
        "tests/contract.py": _FIXTURE.encode(),
    }


def write_package(files: dict[str, bytes], directory: Path) -> Path:
    for relative, content in files.items():
        target = directory.joinpath(*relative.split("/"))
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
    return directory


@dataclass(frozen=True)
class Signer:
    private_key: bytes
    public_key: bytes

    @classmethod
    def new(cls) -> Signer:
        private, public = pkg.new_signing_key()
        return cls(private, public)

    def trust_file(self, path: Path, *, development: bool = False) -> Path:
        path.write_text(trusted_key_line(self.public_key) + " tests" + "\n")
        return path


def _manifest(provider_id: str, version: str, auth: str = "none") -> dict[str, object]:
    capabilities: list[dict[str, object]] = [
        {
            "id": f"{provider_id}.list",
            "effect": "read",
            "description": "The notes.",
            "inputSchema": {"type": "object", "additionalProperties": False},
            "outputSchema": {
                "type": "object",
                "required": ["notes"],
                "properties": {"notes": {"type": "array", "items": {"type": "string"}}},
            },
        },
        {
            "id": f"{provider_id}.export",
            "effect": "write",
            "mode": "async",
            "idempotentReplay": True,
            "description": "Export the notes to a file (a job).",
            "inputSchema": {
                "type": "object",
                "required": ["name"],
                "properties": {"name": {"type": "string", "minLength": 1, "maxLength": 50}},
                "additionalProperties": False,
            },
            "outputSchema": {
                "type": "object",
                "required": ["exported"],
                "properties": {"exported": {"type": "integer"}},
            },
        },
    ]
    if pkg.version_key(version) >= (2, 0, 0):
        capabilities.append(
            {
                "id": f"{provider_id}.count",
                "effect": "read",
                "description": "How many notes there are.",
                "inputSchema": {"type": "object", "additionalProperties": False},
                "outputSchema": {
                    "type": "object",
                    "required": ["count"],
                    "properties": {"count": {"type": "integer"}},
                },
            }
        )
    return {
        "id": provider_id,
        "version": version,
        "vendor": "LineUp tests",
        "name": f"Notes {version}",
        "description": "A test system of notes.",
        "platform": ">=0.1, <1",
        "auth": {"kind": auth},
        "adapter": {"entry": "adapter:make", "contract": "tests.contract:fixture"},
        "capabilities": capabilities,
    }


_NOTES_ADAPTER = '''
"""The notes test system: notes and receipts in JSON files under the data directory."""

from __future__ import annotations

import json

from lineup.core.provider import Accepted, Completed, Health, Invocation, JobState, ProviderError
from lineup.core.provider import BoundAccount, Receipt
from lineup.protocol.errors import ErrorCode
from lineup.providers.adapter import AdapterContext, PackageAdapter, capability

NEEDS_TOKEN = __NEEDS_TOKEN__


class Notes(PackageAdapter):
    def _file(self, name):
        return self.context.data_dir / name

    def _load(self, name, default):
        path = self._file(name)
        return json.loads(path.read_text()) if path.exists() else default

    def _save(self, name, value):
        self._file(name).write_text(json.dumps(value))

    def _instance(self, call):
        if call.instance not in self.instances():
            raise ProviderError(ErrorCode.NOT_FOUND, f"no instance {call.instance!r}")
        if NEEDS_TOKEN and call.credentials.get("token") not in self._load("tokens.json", []):
            raise ProviderError(ErrorCode.FORBIDDEN, "sign in first")

    async def exchange(self, request):
        if request.kind != "password-exchange" or request.password != "right":
            raise ProviderError(ErrorCode.FORBIDDEN, "wrong username or password")
        token = f"t-{request.username}"
        self._save("tokens.json", [*self._load("tokens.json", []), token])
        return BoundAccount(credentials={"token": token}, account=request.username)

    @capability("__PID__.list")
    async def list_notes(self, call: Invocation) -> Completed:
        self._instance(call)
        return Completed(output={"notes": self._load("notes.json", [])})

    @capability("__PID__.export")
    async def export(self, call: Invocation) -> Accepted:
        self._instance(call)
        if not isinstance(call.params.get("name"), str) or not call.params["name"]:
            raise ProviderError(ErrorCode.INVALID_ARGUMENT, "name is a non-empty string")
        receipts = self._load("receipts.json", {})
        job = receipts.get(call.idempotency_key)
        if job is None:
            job = f"job-{len(receipts) + 1}"
            receipts[call.idempotency_key] = job
            self._save("receipts.json", receipts)
        self.context.log.info("export %s accepted as %s", call.params["name"], job)
        return Accepted(job_id=job)
__EXTRA__
    async def receipt(self, instance, idempotency_key):
        job = self._load("receipts.json", {}).get(idempotency_key)
        return None if job is None else Receipt(idempotency_key, Accepted(job_id=job))

    async def job(self, instance, job_id):
        if job_id not in self._load("receipts.json", {}).values():
            raise ProviderError(ErrorCode.NOT_FOUND, f"no job {job_id!r}")
        if self.context.config.get("instant") or self._file("release").exists():
            return JobState("succeeded", output={"exported": len(self._load("notes.json", []))})
        return JobState("running")

    async def health(self):
        return Health(ok=not self._file("sick").exists(), detail="notes at hand")


def make(context: AdapterContext) -> Notes:
    return Notes(context)
'''

_NOTES_COUNT = """
    @capability("__PID__.count")
    async def count(self, call: Invocation) -> Completed:
        self._instance(call)
        return Completed(output={"count": len(self._load("notes.json", []))})
"""

_NOTES_CONTRACT = '''
"""The notes package's contract fixture: a throwaway instance with instant jobs."""

from __future__ import annotations

import json
from pathlib import Path

from lineup.core.contract import ContractFixture
from lineup.core.package import Manifest
from lineup.providers.adapter import AdapterContext

from ..adapter import make


async def fixture(workdir: Path) -> ContractFixture:
    (workdir / "tokens.json").write_text(json.dumps(["t-kit"]))
    here = Path(__file__).resolve().parent.parent
    manifest = Manifest.model_validate(json.loads((here / "provider.json").read_text()))
    context = AdapterContext(
        manifest=manifest, data_dir=workdir, config={"instances": ["test"], "instant": True}
    )
    return ContractFixture(
        provider=make(context),
        instance="test",
        credentials={"token": "t-kit"} if __NEEDS_TOKEN__ else {},
        samples={
            "__PID__.list": {},
            "__PID__.export": {"name": "contract"},
            "__PID__.count": {},
        },
    )
'''


def package_files(
    provider_id: str = "notes", version: str = "1.0.0", auth: str = "none"
) -> dict[str, bytes]:
    """The notes package; with ``auth="password-exchange"`` each person binds an account
    (password ``right``) and calls without its token are ``forbidden``."""
    extra = _NOTES_COUNT if pkg.version_key(version) >= (2, 0, 0) else ""
    needs = str(auth != "none")
    adapter = textwrap.dedent(_NOTES_ADAPTER).replace("__EXTRA__", extra)
    adapter = adapter.replace("__PID__", provider_id).replace("__NEEDS_TOKEN__", needs)
    contract = textwrap.dedent(_NOTES_CONTRACT).replace("__PID__", provider_id)
    return {
        pkg.MANIFEST: json.dumps(_manifest(provider_id, version, auth), indent=2).encode(),
        "__init__.py": b"",
        "adapter.py": adapter.encode(),
        "tests/__init__.py": b"",
        "tests/contract.py": contract.replace("__NEEDS_TOKEN__", needs).encode(),
    }


def signed_archive(
    directory: Path,
    signer: Signer,
    provider_id: str = "notes",
    version: str = "1.0.0",
    files: dict[str, bytes] | None = None,
) -> Path:
    """A signed ``.lineup-provider`` of the notes package (or ``files``) in ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    signed = pkg.sign(files or package_files(provider_id, version), signer.private_key)
    path = directory / f"{provider_id}-{version}{pkg.ARCHIVE_SUFFIX}"
    path.write_bytes(pkg.write_archive(signed))
    return path


TEST_SIGNER = Signer.new()
"""The key the browser tests' hubs trust (made once per test process)."""

IN_TREE = SRC / "providers"


def trusted_keys_file(directory: Path) -> Path:
    return TEST_SIGNER.trust_file(directory / "trusted-keys")


def in_tree_files(provider_id: str, version: str) -> dict[str, bytes]:
    """A package shipped in the tree (``files``, ``scheduling``) as files, at ``version``."""
    from lineup.providers.packaging.loader import read_package_dir

    files = read_package_dir(IN_TREE / provider_id)
    manifest = json.loads(files[pkg.MANIFEST])
    manifest["version"] = version
    files[pkg.MANIFEST] = json.dumps(manifest, indent=2).encode()
    return files


def signed_package(directory: Path, provider_id: str = "notes", version: str = "1.0.0") -> Path:
    """A ``.lineup-provider`` signed by :data:`TEST_SIGNER`: an in-tree package at
    ``version``, or the notes test package under ``provider_id``."""
    files = (
        in_tree_files(provider_id, version)
        if (IN_TREE / provider_id / pkg.MANIFEST).exists()
        else package_files(provider_id, version)
    )
    return signed_archive(directory, TEST_SIGNER, provider_id, version, files)
