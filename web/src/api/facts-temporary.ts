// TEMPORARY: payloads of the recorded facts that docs/spec/schemas/facts/ does not describe
// yet, written by hand from docs/protocol.md section 5.4 in the generator's style. Once the hub
// exports a schema for every fact, `npm run gen:types` covers them all and this file goes.

import type { Attachment, ToolDefinition } from "./generated/protocol";

export interface WorkspaceCreatedPayload {
  workspaceId: string;
  name: string;
  ownerUserId: string;
  [k: string]: unknown;
}
export interface MemberJoinedPayload {
  userId: string;
  email: string;
  displayName: string;
  role: string;
  [k: string]: unknown;
}
export interface AgentPairedPayload {
  agentId: string;
  name: string;
  runtime?: string | null;
  agentVersion?: string | null;
  [k: string]: unknown;
}
export interface AgentConnectedPayload {
  agentId: string;
  agentVersion: string;
  runtime: string;
  capabilities: string[];
  tools?: ToolDefinition[] | null;
  [k: string]: unknown;
}
export interface AgentStatusChangedPayload {
  agentId: string;
  status: "online" | "offline";
  /** Milliseconds since the epoch (UTC). */
  lastHeartbeatAt?: number | null;
  [k: string]: unknown;
}
export interface AgentRenamedPayload {
  agentId: string;
  name: string;
  [k: string]: unknown;
}
export interface AgentRevokedPayload {
  agentId: string;
  [k: string]: unknown;
}
export interface ConversationCreatedPayload {
  conversationId: string;
  title: string;
  agentIds: string[];
  [k: string]: unknown;
}
export interface Author {
  kind: "user" | "agent" | "system";
  id: string;
  name?: string | null;
  [k: string]: unknown;
}
export interface ContentBlock {
  type: string;
  text?: string | null;
  data?: {
    [k: string]: unknown;
  } | null;
  [k: string]: unknown;
}
export interface MessageCreatedPayload {
  messageId: string;
  author: Author;
  content: string;
  blocks?: ContentBlock[] | null;
  attachments?: Attachment[] | null;
  targetAgentId?: string | null;
  taskId?: string | null;
  steer?: boolean;
  [k: string]: unknown;
}
export interface TaskCreatedPayload {
  taskId: string;
  title: string;
  description?: string | null;
  targetAgentId: string;
  createdBy: string;
  [k: string]: unknown;
}
export interface ToolRegisteredPayload {
  deviceId: string;
  userId: string;
  name?: string | null;
  tools: ToolDefinition[];
  [k: string]: unknown;
}
export interface ToolCalledPayload {
  toolCallId: string;
  callId: string;
  agentId: string;
  name: string;
  action?: string | null;
  arguments: {
    [k: string]: unknown;
  };
  instanceId?: string | null;
  timeoutMs?: number | null;
  /** Milliseconds since the epoch (UTC). */
  expiresAt?: number | null;
  targetAgentId: string;
  [k: string]: unknown;
}
export interface ToolCompletedPayload {
  toolCallId: string;
  callId: string;
  name: string;
  action?: string | null;
  result?: {
    message: string;
    [k: string]: unknown;
  } | null;
  error?: {
    code: string;
    message: string;
    [k: string]: unknown;
  } | null;
  answeredBy: string;
  answeredByName?: string | null;
  /** Milliseconds since the epoch (UTC). */
  answeredAt: number;
  deviceId?: string | null;
  expired?: boolean;
  targetAgentId: string;
  [k: string]: unknown;
}
export interface ToolCancelledPayload {
  toolCallId: string;
  callId: string;
  reason?: string | null;
  taskId?: string | null;
  targetAgentId: string;
  [k: string]: unknown;
}

export interface TemporaryFactPayloads {
  "agent.connected": AgentConnectedPayload;
  "agent.paired": AgentPairedPayload;
  "agent.renamed": AgentRenamedPayload;
  "agent.revoked": AgentRevokedPayload;
  "agent.status_changed": AgentStatusChangedPayload;
  "conversation.created": ConversationCreatedPayload;
  "member.joined": MemberJoinedPayload;
  "message.created": MessageCreatedPayload;
  "task.created": TaskCreatedPayload;
  "tool.cancelled": ToolCancelledPayload;
  "tool.called": ToolCalledPayload;
  "tool.completed": ToolCompletedPayload;
  "tool.registered": ToolRegisteredPayload;
  "workspace.created": WorkspaceCreatedPayload;
}
