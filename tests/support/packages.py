"""Provider packages for tests, as files: a small valid one whose adapter leaves a mark when
it is imported — so a test can prove that a refused package's code never ran — and the
shipped and broken package directories.

The mark is a file at the path in ``LINEUP_TEST_IMPORT_MARKER``, written by the adapter
module's top level (and by its fixture module's), appending one line per import.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import lineup

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
