// The hub's HTTP views (src/lineup/hub/api/views.py): camelCase keys, ISO 8601 UTC timestamps.

export type Iso = string;

export interface User {
  id: string;
  email: string;
  displayName: string;
}

export interface Workspace {
  id: string;
  name: string;
  role: string;
}

export interface Me {
  user: User;
  workspaces: Workspace[];
}

export interface SignUpResult extends Me {
  workspaceId: string;
  csrfToken: string;
}

export interface SignInResult extends Me {
  csrfToken: string;
}

export type AgentStatus = "never_connected" | "online" | "offline" | "revoked";

export interface Agent {
  id: string;
  name: string;
  runtime: string | null;
  version: string | null;
  status: AgentStatus;
  online: boolean;
  capabilities: string[];
  tools: unknown[];
  lastHeartbeatAt: Iso | null;
  connectedAt: Iso | null;
  /** When the hub last found its connection lost. */
  offlineAt?: Iso | null;
  revokedAt: Iso | null;
  createdAt: Iso | null;
}

export interface PairingCode {
  code: string;
  expiresAt: Iso;
  expiresInSeconds: number;
  hubUrl: string;
  command: string;
  sdkCommand: string;
}

export interface Conversation {
  id: string;
  title: string;
  agentIds: string[];
  createdAt: Iso | null;
  updatedAt: Iso | null;
  lastSequence: number | null;
}

export interface Author {
  kind: "user" | "agent" | "system";
  id: string;
  name?: string | null;
}

export interface Attachment {
  name: string;
  url: string;
  mimeType?: string | null;
}

export interface ContentBlock {
  type: string;
  text?: string | null;
  data?: Record<string, unknown> | null;
}

export interface Message {
  id: string;
  conversationId: string;
  author: Author;
  content: string;
  blocks: ContentBlock[] | null;
  attachments: Attachment[] | null;
  targetAgentId: string | null;
  taskId: string | null;
  createdAt: Iso | null;
  sequence: number | null;
}

export type TaskStatus =
  | "queued"
  | "running"
  | "waiting_for_human"
  | "succeeded"
  | "failed"
  | "cancelled";

export interface Task {
  id: string;
  conversationId: string | null;
  parentTaskId: string | null;
  title: string;
  description: string | null;
  targetAgentId: string | null;
  status: TaskStatus;
  progress: number | null;
  summary: string | null;
  error: string | null;
  cancelRequested: boolean;
  cancelReason: string | null;
  createdBy: string | null;
  createdAt: Iso | null;
  updatedAt: Iso | null;
  lastSequence: number | null;
  agentConnectionLost: boolean;
  lastHeartbeatAt: Iso | null;
  /** When the hub found the agent's connection lost (set only while agentConnectionLost). */
  connectionLostAt?: Iso | null;
}

export type InteractionType = "approval" | "choice" | "input" | "review";
export type InteractionStatus = "requested" | "resolved" | "expired" | "cancelled";
export type Risk = "low" | "medium" | "high";
export type InputFormat = "text" | "email" | "url" | "number" | "integer";

export interface InteractionOption {
  id: string;
  label: string;
  style?: "primary" | "secondary" | "danger" | null;
  recommended?: boolean;
  description?: string | null;
}

/** What the agent asked (src/lineup/protocol/interaction.py). */
export interface InteractionRequest {
  id: string;
  type: InteractionType;
  title: string;
  description?: string | null;
  why?: string | null;
  impact?: string | null;
  risk?: Risk | null;
  options?: InteractionOption[] | null;
  allowOther?: boolean;
  multiple?: boolean;
  format?: InputFormat | null;
  pattern?: string | null;
  placeholder?: string | null;
  content?: string | null;
  attachments?: Attachment[] | null;
  details?: Record<string, unknown> | null;
  expiresAt?: Iso | null;
}

/** A person's answer: an option, several options, and/or text. */
export interface InteractionResponse {
  optionId?: string;
  optionIds?: string[];
  text?: string;
}

export interface Interaction {
  id: string;
  type: InteractionType;
  status: InteractionStatus;
  taskId: string | null;
  conversationId: string | null;
  agentId: string | null;
  request: InteractionRequest;
  response: InteractionResponse | null;
  respondedBy: string | null;
  respondedByName: string | null;
  respondedAt: Iso | null;
  expiresAt: Iso | null;
  createdAt: Iso | null;
  sequence: number | null;
  /** The title of the task it belongs to, for saying what a card is about. */
  taskTitle?: string | null;
  /** Why it was withdrawn (status cancelled), e.g. "The task was cancelled." */
  cancelReason?: string | null;
}

export interface Artifact {
  id: string;
  taskId: string | null;
  conversationId: string | null;
  name: string;
  url: string;
  mimeType: string | null;
  summary: string | null;
  createdBy: string | null;
  createdAt: Iso | null;
}

/** A recorded event as people's apps see it (downlink.for_person): an envelope plus actor. */
export interface HubEvent {
  id: string;
  type: string;
  version: string;
  occurredAt: Iso;
  workspaceId: string;
  conversationId?: string | null;
  taskId?: string | null;
  sequence?: number | null;
  correlationId?: string | null;
  payload: Record<string, unknown>;
  actor?: string | null;
}

export interface MessagesPage {
  messages: Message[];
  hasMore: boolean;
  tasks: Task[];
  interactions: Interaction[];
  artifacts: Artifact[];
}

export interface PostedMessage {
  message: Message;
  taskId: string | null;
  sequence: number | null;
  duplicate: boolean;
}

export interface TaskDetail {
  task: Task;
  children: Task[];
  interactions: Interaction[];
  artifacts: Artifact[];
  timeline: HubEvent[];
}

export interface Inbox {
  waitingForMe: Interaction[];
  /** Agents' tool calls waiting for an app; counted in `counts.waitingForMe`. */
  waitingTools?: ToolCall[];
  needsAttention: Task[];
  recentlyDone: Task[];
  counts: { waitingForMe: number; needsAttention: number; unread: number };
}

export type TaskFilter = "all" | "running" | "waiting" | "done";

export interface EventsPage {
  events: HubEvent[];
  latestSequence: number;
}

// seed 000 §4 definitions and the hub's views (src/lineup/hub/app_tools.py)

export type JsonSchema = Record<string, unknown>;

export interface ToolActionDefinition {
  name: string;
  description?: string;
  inputSchema: JsonSchema;
}

export type ToolDefinition =
  | { name: string; type: "action"; description?: string; inputSchema: JsonSchema }
  | { name: string; type: "toolset" | "app"; description?: string; actions: ToolActionDefinition[] };

/** `result` of seed 000 §4.5: `message` always, and whatever fields the tool adds. */
export interface ToolResultBody {
  message: string;
  [field: string]: unknown;
}

export interface ToolError {
  code: string;
  message: string;
}

export type ToolCallStatus = "pending" | "completed" | "failed" | "expired" | "cancelled";

/** An agent's call of an app tool, as the hub shows it. `id` is the hub's (`tc_…`). */
export interface ToolCall {
  id: string;
  callId: string;
  agentId: string;
  name: string;
  action: string | null;
  arguments: Record<string, unknown>;
  status: ToolCallStatus;
  conversationId: string | null;
  taskId: string | null;
  instanceId: string | null;
  result: ToolResultBody | null;
  error: ToolError | null;
  answeredBy: string | null;
  answeredByName: string | null;
  answeredAt: Iso | null;
  cancelReason: string | null;
  timeoutMs: number | null;
  expiresAt: Iso | null;
  createdAt: Iso | null;
  updatedAt: Iso | null;
  sequence: number;
}

export interface CanvasStroke {
  path: string;
  color: string | null;
  width: number | null;
  toolCallId: string;
}

export interface CanvasInstance {
  id: string;
  agentId: string;
  toolCallId: string;
  conversationId: string | null;
  taskId: string | null;
  width: number;
  height: number;
  status: "open" | "closed";
  strokes: CanvasStroke[];
  operations: number;
  undone: number;
  createdAt: Iso | null;
  updatedAt: Iso | null;
  lastSequence: number;
}

export interface ToolAnswer {
  result?: ToolResultBody;
  error?: ToolError;
  deviceId?: string;
}

export interface AvailableTools {
  tools: ToolDefinition[];
  builtin: boolean;
  devices: { deviceId: string; userId: string | null; name: string | null; tools: string[]; updatedAt: Iso | null }[];
}
