"""The LineUp Agent SDK: connect an agent to a LineUp hub, take tasks, ask people.

::

    from lineup.sdk import Agent, AgentConfig, TaskContext, pair

    config = await pair("http://127.0.0.1:8000", "ABCD-EFGH", name="my-agent")  # once
    agent = Agent(AgentConfig.load())

    @agent.task
    async def handle(ctx: TaskContext) -> str:
        await ctx.progress(30, "Planning")
        approval = await ctx.ask_approval("Run the migration?", risk="high")
        return "Migrated" if approval.approved else "Skipped"

    await agent.run()

The agent connects out to the hub over one WebSocket, keeps an outbox, a cursor and a journal
in a local SQLite file, and so survives dropped connections and restarts without losing an
event or doing anything twice.

With no hub on the network, the same agent can serve LineUp itself (direct mode, seed 000
§3.1): give it ``{"mode": "direct", "token": …}`` as its configuration, or set
``LINEUP_MODE=direct`` and ``LINEUP_DIRECT_TOKEN``, and run it with
``await lineup.direct.run(agent)``, which then listens on port 9527 for people with the
token (and connects to the hub when the configuration names one). See
``docs/direct-mode.md``. Relay mode is the same with no shared network: ``{"mode": "relay",
…}`` (or ``LINEUP_MODE=relay``), and the agent's LineUp is reached through a WuKongIM server
both sides connect out to (``docs/relay-mode.md``).
"""

from lineup.protocol.capabilities import CapabilitySpec
from lineup.sdk._activity import Activity, CommandEntry, ToolCallEntry
from lineup.sdk._agent import Agent
from lineup.sdk._answers import Answered, Approval, Choice, InputAnswer, Review
from lineup.sdk._backoff import Backoff
from lineup.sdk._capabilities import Capabilities, InvocationOutcome, StatusCallback
from lineup.sdk._config import AgentConfig, agent_home, default_credentials_path
from lineup.sdk._context import MessageContext, RecordedStep, TaskContext
from lineup.sdk._direct import (
    AgentHost,
    DirectEndpoint,
    DirectModeError,
    DirectOptions,
    HostedAgent,
    HostedIdentity,
    new_direct_token,
)
from lineup.sdk._errors import (
    ConnectionRefusedByHub,
    HubProblem,
    InsecureConnection,
    InteractionExpired,
    JournalMismatch,
    PairingFailed,
    RequestEnded,
    RequestWithdrawn,
    TaskCancelled,
    TaskEnded,
    TaskStopped,
)
from lineup.sdk._pairing import pair
from lineup.sdk._relay import RelayOptions
from lineup.sdk._rotation import rotate_credential
from lineup.sdk._settings import MessageHandler, TaskHandler
from lineup.sdk._tls import TlsOptions
from lineup.sdk._tools import Calculator, Canvas, CanvasTool, ToolReply, Tools
from lineup.sdk._transport import (
    Connection,
    Transport,
    TransportClosed,
    TransportError,
    WebSocketTransport,
)
from lineup.sdk._uploads import UploadedFile

__all__ = [
    "Activity",
    "Agent",
    "AgentConfig",
    "AgentHost",
    "Answered",
    "Approval",
    "Backoff",
    "Calculator",
    "Canvas",
    "CanvasTool",
    "Capabilities",
    "CapabilitySpec",
    "Choice",
    "CommandEntry",
    "Connection",
    "ConnectionRefusedByHub",
    "DirectEndpoint",
    "DirectModeError",
    "DirectOptions",
    "HostedAgent",
    "HostedIdentity",
    "HubProblem",
    "InputAnswer",
    "InsecureConnection",
    "InteractionExpired",
    "InvocationOutcome",
    "JournalMismatch",
    "MessageContext",
    "MessageHandler",
    "PairingFailed",
    "RecordedStep",
    "RelayOptions",
    "RequestEnded",
    "RequestWithdrawn",
    "Review",
    "StatusCallback",
    "TaskCancelled",
    "TaskContext",
    "TaskEnded",
    "TaskHandler",
    "TaskStopped",
    "TlsOptions",
    "ToolCallEntry",
    "ToolReply",
    "Tools",
    "Transport",
    "TransportClosed",
    "TransportError",
    "UploadedFile",
    "WebSocketTransport",
    "agent_home",
    "default_credentials_path",
    "new_direct_token",
    "pair",
    "rotate_credential",
]
