"""The files ``lineup provider new`` starts a package with: a manifest with one read
capability, an adapter handling it, and a contract fixture — a package that passes
``lineup provider test`` as it is, for its author to change one step at a time."""

from __future__ import annotations

import json
import re
from string import Template

_ID = re.compile(r"^[a-z][a-z0-9_]{0,63}$")

_ADAPTER = Template('''\
"""The $id provider: what it reaches, and why a person would let an agent use it.

Each capability its manifest (provider.json) lists has a handler here, marked with
@capability("<id>") — the hub reads these marks before it imports anything, and refuses a
package whose manifest claims a capability no handler takes. A write would also have a
@preview("<id>") handler making the draft its confirm card shows.
"""

from __future__ import annotations

from lineup.core.provider import Completed, Invocation, ProviderError
from lineup.protocol.errors import ErrorCode, InvalidArgument
from lineup.protocol.tools import validate_arguments
from lineup.providers.adapter import AdapterContext, PackageAdapter, capability


class ${camel}Provider(PackageAdapter):
    @capability("$id.greeting.read")
    async def greeting(self, call: Invocation) -> Completed:
        self.admit(call)
        return Completed(output={"greeting": f"Hello, {call.params['name']}!"})

    def admit(self, call: Invocation) -> None:
        """Refuse what the contract says must be refused: an instance this provider does
        not reach (not_found) and parameters outside the input schema (invalid_argument).
        A system with accounts also refuses missing or wrong call.credentials (forbidden)."""
        if call.instance not in self.instances():
            raise ProviderError(ErrorCode.NOT_FOUND, f"There is no instance {call.instance!r}.")
        spec = next(s for s in self.describe() if s.id == call.capability)
        try:
            validate_arguments(spec.input_schema, call.params)
        except InvalidArgument as exc:
            raise ProviderError(ErrorCode.INVALID_ARGUMENT, exc.message) from None


def make(context: AdapterContext) -> ${camel}Provider:
    """The package's entry point (adapter.entry in provider.json)."""
    return ${camel}Provider(context)
''')

_FIXTURE = Template('''\
"""The contract fixture (adapter.contract in provider.json): a throwaway instance inside
workdir, for `lineup provider test` and the hub's install step to run the contract kit on."""

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
    return ContractFixture(
        provider=make(context),
        instance="test",
        credentials={},
        samples={"$id.greeting.read": {"name": "Ada"}},
    )
''')

_README = Template("""\
# $id

A LineUp provider package. `lineup provider test .` runs the contract kit on it;
`lineup provider pack . --key KEYFILE` signs it into a `.lineup-provider` archive that a hub
whose operator trusts the key can install. The format, the adapter API and the kit's rules:
LineUp's docs/providers.md.
""")


def files_for(provider_id: str) -> dict[str, bytes]:
    """The template package's files for a provider named ``provider_id``."""
    if not _ID.match(provider_id):
        raise ValueError(
            f"{provider_id!r} is not a provider id: lowercase letters, digits and _,"
            " starting with a letter"
        )
    camel = "".join(part.capitalize() for part in provider_id.split("_"))
    manifest = {
        "id": provider_id,
        "version": "0.1.0",
        "vendor": "Your name",
        "name": provider_id.replace("_", " ").capitalize(),
        "description": "What this provider reaches.",
        "platform": ">=0.1, <1",
        "auth": {"kind": "none"},
        "adapter": {"entry": "adapter:make", "contract": "tests.contract:fixture"},
        "capabilities": [
            {
                "id": f"{provider_id}.greeting.read",
                "effect": "read",
                "mode": "sync",
                "description": "A greeting for `name`.",
                "inputSchema": {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["name"],
                    "properties": {"name": {"type": "string", "minLength": 1, "maxLength": 100}},
                },
                "outputSchema": {
                    "type": "object",
                    "required": ["greeting"],
                    "properties": {"greeting": {"type": "string"}},
                },
                "timeoutS": 10,
            }
        ],
    }
    return {
        "provider.json": (json.dumps(manifest, indent=2) + "\n").encode(),
        "adapter.py": _ADAPTER.substitute(id=provider_id, camel=camel).encode(),
        "tests/contract.py": _FIXTURE.substitute(id=provider_id).encode(),
        "README.md": _README.substitute(id=provider_id).encode(),
    }
