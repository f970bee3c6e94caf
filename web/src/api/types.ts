// The names the app uses for the hub's HTTP views and recorded facts. Every shape comes from a
// generated file (src/api/generated/, made by `npm run gen:types` from docs/spec/); where a
// view declares a field looser than the protocol says it is (a status as any string, an
// interaction's request as any object), the field is narrowed here to the protocol's type.

import type { FactPayloads } from "./generated/facts";
import type { FramePayloads } from "./generated/frames";
import type { components } from "./generated/openapi";
import type { InteractionRequest, InteractionResponse, ToolDefinition } from "./generated/protocol";

type Schemas = components["schemas"];

/** ``View`` with the fields of ``Narrow`` replaced by theirs. */
type Narrowed<View, Narrow> = Omit<View, keyof Narrow> & Narrow;

export type Iso = string;

export type { InputFormat, InteractionOption, InteractionType, Risk } from "./generated/protocol";
export type { InteractionRequest, InteractionResponse, ToolDefinition };

export type User = Schemas["User"];
export type Workspace = Schemas["Workspace"];
export type RotatedCredential = Schemas["RotatedCredential"];
export type Me = Schemas["Me"];
export type SignUpResult = Schemas["SignedUp"];
export type SignInResult = Schemas["SignedIn"];

export type Agent = Schemas["Agent"];
export type AgentStatus = Agent["status"];
export type PairingCode = Schemas["PairingCode"];
export type HubInfo = Schemas["HubInfo"];
export type AgentLogLine = Schemas["AgentLogLine"];
export type AgentLogs = Schemas["AgentLogs"];

/** Agents the hub runs itself: an engine in a working directory, talking to a model endpoint
 * (src/lineup/hub/api/hosted.py). The endpoint's key is never sent back (`hasApiKey`). */
export type HostedAgent = Schemas["HostedAgentView"];
export type NewHostedAgent = Schemas["NewHostedAgent"];
export type ModelApi = NewHostedAgent["model"]["api"];
export type EngineCatalog = Schemas["EngineCatalog"];
export type Engine = Schemas["EngineView"];

export type Conversation = Schemas["Conversation"];
export type ImportedSession = Schemas["ImportedSession"];
export type Author = Narrowed<Schemas["Author"], { name?: string | null }>;
export type Attachment = Schemas["Attachment"];
export type ContentBlock = Schemas["ContentBlock"];
export type Message = Narrowed<
  Schemas["Message"],
  { author: Author; blocks: ContentBlock[] | null; attachments: Attachment[] | null }
>;

export type TaskStatus = Schemas["Task"]["status"];
export type Task = Schemas["Task"];

export type InteractionStatus = Schemas["Interaction"]["status"];
export type Interaction = Narrowed<
  Schemas["Interaction"],
  {
    type: InteractionRequest["type"];
    request: InteractionRequest;
    response: InteractionResponse | null;
  }
>;

export type Artifact = Schemas["Artifact"];

/** Every recorded fact's payload by its type, from the facts' schemas. */
export type HubFactPayloads = FactPayloads;
export type FactType = keyof HubFactPayloads;

/** A recorded event as people's apps see it: the envelope, the actor and a payload typed by
 * the event's type, so `if (e.type === "task.status_changed") e.payload.status` needs no cast. */
export type HubEvent = {
  [T in FactType]: Narrowed<Schemas["Event"], { type: T; payload: HubFactPayloads[T] }>;
}[FactType];

/** The payload of fact ``T``. */
export type FactPayload<T extends FactType> = HubFactPayloads[T];

/** Frames the people's socket carries besides recorded facts. */
export type { FramePayloads };

export type MessagesPage = Narrowed<
  Schemas["MessagesPage"],
  { messages: Message[]; interactions: Interaction[] }
>;
export type PostedMessage = Narrowed<Schemas["PostedMessage"], { message: Message }>;
export type TaskDetail = Narrowed<Schemas["TaskDetail"], { interactions: Interaction[]; timeline: HubEvent[] }>;
export type Inbox = Narrowed<Schemas["Inbox"], { waitingForMe: Interaction[]; waitingTools: ToolCall[] }>;

export type TaskFilter = "all" | "running" | "waiting" | "done";

export type EventsPage = Narrowed<Schemas["EventsPage"], { events: HubEvent[] }>;
export type RawEvent = Schemas["RawEvent"];
export type RawEvents = Schemas["RawEvents"];
/** What a person can open the raw events of: `kind:id`. */
export type RawSubject = `${"task" | "message" | "interaction" | "tool_call" | "artifact" | "conversation" | "agent" | "approval"}:${string}`;

export type JsonSchema = Record<string, unknown>;

export type ToolActionDefinition = Extract<ToolDefinition, { type: "app" }>["actions"][number];

/** `result` of seed 000 §4.5: `message` always, and whatever fields the tool adds. */
export interface ToolResultBody {
  message: string;
  [field: string]: unknown;
}

export type ToolError = Schemas["ToolError"];

export type ToolCallStatus = Schemas["ToolCall"]["status"];

/** An agent's call of an app tool, as the hub shows it. `id` is the hub's (`tc_…`). */
export type ToolCall = Narrowed<
  Schemas["ToolCall"],
  { result: ToolResultBody | null; error: ToolError | null }
>;

export type CanvasStroke = Schemas["CanvasStroke"];
export type CanvasInstance = Schemas["Canvas"];

export type ToolAnswer = Narrowed<Schemas["ToolAnswer"], { result?: ToolResultBody | null }>;

export type AvailableTools = Narrowed<Schemas["AvailableTools"], { tools: ToolDefinition[] }>;

// --- governance (docs/protocol.md §7.15)

export type ProjectRole = "owner" | "editor" | "viewer";
export type Project = Schemas["ProjectView"];
export type ProjectDetail = Schemas["ProjectDetail"];
export type ProjectMember = Schemas["ProjectMemberView"];
export type WorkspaceMember = Schemas["MemberView"];
export type CapabilitySpec = Schemas["CapabilitySpec"];
export type CapabilityEntry = Schemas["CapabilityView"];
export type PolicyRule = Schemas["RuleView"];
export type StandingPermission = Schemas["PermissionView"];
export type Policy = Schemas["Policy"];
export type Approval = Schemas["ApprovalView"];
export type ApprovalStatus = Approval["status"];
export type ApprovalView = "waiting" | "raised" | "done" | "all";
export type Execution = Schemas["ExecutionView"];
export type ExecutionStatus = Execution["status"];
export type Invocation = Schemas["InvocationView"];
export type AuditEntry = Schemas["AuditEntryView"];
export type RunRecord = Schemas["RunRecord"];

/** A numeric parameter's range in a standing permission, or an exact value / a set. */
export type ParamBound = { min?: number; max?: number } | { equals: unknown } | { in: unknown[] };

export interface StandingRequest {
  minutes?: number;
  calls?: number;
  bounds?: Record<string, ParamBound>;
}

/** What a person sends from a confirm card. */
export type ApprovalDecision =
  | { decision: "approve"; standing?: StandingRequest; reason?: string }
  | { decision: "reject"; reason: string };

export interface NewRule {
  capability: string;
  effect: "allow" | "deny";
  projectId?: string;
  instance?: string;
  roles?: ProjectRole[];
}

// --- providers: installed packages, what can be installed, and their changes through approval
// (src/lineup/hub/api/providers.py).

export type Provider = Schemas["ProviderView"];
export type ProviderDetail = Schemas["ProviderDetail"];
export type ProviderState = Provider["state"];
export type ProviderSource = Provider["source"];
export type ProviderAuthKind = Provider["auth"]["kind"];
/** One health probe's result. */
export type ProviderHealth = Schemas["HealthView"];
/** One check of the contract kit: `capability` is null for the provider-wide ones (health). */
export type ContractCheck = Schemas["ContractCheck"];
/** The contract kit's report on one version. */
export type ContractReport = Schemas["ContractView"];
/** A lifecycle step waiting for, or past, a workspace owner's decision. */
export type ProviderChange = Schemas["ChangeView"];
export type ProviderChangeAction = ProviderChange["action"];
export type ProviderChangeStatus = ProviderChange["status"];
export type PersonRef = Schemas["PersonRef"];
/** How a change moves the capabilities agents can call: ids added, removed, changed. */
export type CapabilitySurface = Schemas["SurfaceView"];
export type ProviderLogLine = Schemas["LogLine"];
/** A package found in the discovery directory or uploaded: its manifest, read and checked,
 * nothing in it run. */
export type AvailablePackage = Schemas["AvailablePackage"];
export type ProviderChangeRequest = Schemas["ChangeRequest"];
export type ProviderChangeDecision = Schemas["Decision"];
