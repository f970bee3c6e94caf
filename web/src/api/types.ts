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
export type Me = Schemas["Me"];
export type SignUpResult = Schemas["SignedUp"];
export type SignInResult = Schemas["SignedIn"];

export type Agent = Schemas["Agent"];
export type AgentStatus = Agent["status"];
export type PairingCode = Schemas["PairingCode"];

export type Conversation = Schemas["Conversation"];
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
// (src/lineup/hub/api/providers.py). Written by hand until the hub's models are in
// docs/spec/openapi.json; each then becomes its `Schemas["…"]` like the views above.

export type ProviderState = "enabled" | "disabled";
export type ProviderSource = "bundled" | "package";
export type ProviderAuthKind = "oauth" | "password-exchange" | "apikey" | "none";

/** One health probe's result (`HealthView`). */
export interface ProviderHealth {
  ok: boolean;
  detail: string;
  checkedAt: Iso;
}

/** One check of the contract kit: `capability` is null for the provider-wide ones (health). */
export interface ContractCheck {
  capability: string | null;
  rule: string;
  name: string;
  passed: boolean;
  detail: string;
}

/** The contract kit's report on one version (`ContractView`). */
export interface ContractReport {
  passed: boolean;
  checks: ContractCheck[];
}

export type ProviderChangeAction = "install" | "upgrade" | "enable" | "disable" | "rollback" | "uninstall";
export type ProviderChangeStatus = "pending" | "applied" | "rejected" | "failed";

export interface PersonRef {
  userId: string;
  name: string;
}

/** How a change moves the capabilities agents can call: ids added, removed, changed. */
export interface CapabilitySurface {
  added: string[];
  removed: string[];
  changed: string[];
}

/** A lifecycle step waiting for, or past, a workspace owner's decision (`ChangeView`). */
export interface ProviderChange {
  id: string;
  providerId: string;
  action: ProviderChangeAction;
  status: ProviderChangeStatus;
  fromVersion: string | null;
  toVersion: string | null;
  surface: CapabilitySurface;
  contract: ContractReport | null;
  requestedBy: PersonRef;
  requestedAt: Iso;
  decidedBy: PersonRef | null;
  decidedAt: Iso | null;
  reason: string | null;
  /** Why it cannot be approved now ("2 executions in flight"); the hub refuses while any. */
  blockers: string[];
}

/** An installed provider (`ProviderView`). */
export interface Provider {
  id: string;
  name: string;
  vendor: string;
  description: string;
  version: string;
  digest: string;
  state: ProviderState;
  source: ProviderSource;
  /** The signing key's id; null for a bundled provider. */
  signer: string | null;
  /** Signed by a development key the operator allowed. */
  development: boolean;
  auth: { kind: ProviderAuthKind };
  capabilities: CapabilitySpec[];
  /** What a rollback returns to. */
  previous: { version: string; digest: string } | null;
  /** Newest first. */
  health: ProviderHealth[];
  contract: ContractReport | null;
  pendingChange: ProviderChange | null;
  installedAt: Iso;
}

export interface ProviderLogLine {
  at: Iso;
  level: string;
  message: string;
}

export interface ProviderDetail extends Provider {
  logs: ProviderLogLine[];
  bindings: { bound: number; expired: number };
  /** Newest first. */
  changes: ProviderChange[];
}

/** A package found in the discovery directory or uploaded: its manifest, read and checked,
 * nothing in it run. */
export interface AvailablePackage {
  /** What `ProviderChangeRequest.package` names it by. */
  ref: string;
  id: string;
  version: string;
  vendor: string;
  name: string;
  description: string;
  capabilities: string[];
  auth: { kind: ProviderAuthKind };
  signer: string | null;
  development: boolean;
  /** Why it cannot be installed (unsigned, wrong signer, digest, claims…). */
  refused: { rule: string; message: string } | null;
  installedVersion: string | null;
}

export interface ProviderChangeRequest {
  action: ProviderChangeAction;
  /** Every action but install. */
  providerId?: string;
  /** Install and upgrade: an `AvailablePackage.ref`. */
  package?: string;
  reason?: string;
}

export interface ProviderChangeDecision {
  approve: boolean;
  reason?: string;
}
