// The typed client of the hub's HTTP API (src/lineup/hub/api/*.py).

import { Transport } from "./client";
import type {
  Agent,
  AvailableTools,
  CanvasInstance,
  Conversation,
  EventsPage,
  Inbox,
  Interaction,
  InteractionResponse,
  Me,
  MessagesPage,
  PairingCode,
  PostedMessage,
  SignInResult,
  SignUpResult,
  TaskDetail,
  TaskFilter,
  Task,
  ToolAnswer,
  ToolCall,
  ToolCallStatus,
  ToolDefinition,
  Workspace,
} from "./types";

const enc = encodeURIComponent;

/** Accounts: no workspace needed. */
export class AccountApi {
  constructor(readonly transport: Transport) {}

  me(): Promise<Me> {
    return this.transport.get("/api/auth/me");
  }

  signUp(body: {
    email: string;
    password: string;
    displayName: string;
    workspaceName: string;
    invitationCode?: string;
  }): Promise<SignUpResult> {
    return this.transport.post("/api/auth/signup", body);
  }

  signIn(body: { email: string; password: string }): Promise<SignInResult> {
    return this.transport.post("/api/auth/signin", body);
  }

  signOut(): Promise<void> {
    return this.transport.post("/api/auth/signout", {});
  }

  createWorkspace(name: string): Promise<Workspace> {
    return this.transport.post("/api/workspaces", { name });
  }
}

export interface NewMessage {
  content: string;
  targetAgentId?: string | null;
  trackAsTask?: boolean;
}

/** Everything inside one workspace. */
export class WorkspaceApi {
  constructor(
    readonly transport: Transport,
    readonly workspaceId: string,
  ) {}

  private path(rest: string): string {
    return `/api/workspaces/${enc(this.workspaceId)}${rest}`;
  }

  // --- agents
  agents(): Promise<{ agents: Agent[] }> {
    return this.transport.get(this.path("/agents"));
  }

  agent(id: string): Promise<Agent> {
    return this.transport.get(this.path(`/agents/${enc(id)}`));
  }

  createPairingCode(agentName?: string): Promise<PairingCode> {
    return this.transport.post(this.path("/pairing-codes"), agentName ? { agentName } : {});
  }

  renameAgent(id: string, name: string, key?: string): Promise<Agent> {
    return this.transport.patch(this.path(`/agents/${enc(id)}`), { name }, key);
  }

  revokeAgent(id: string): Promise<Agent> {
    return this.transport.post(this.path(`/agents/${enc(id)}/revoke`), {});
  }

  // --- conversations and messages
  conversations(): Promise<{ conversations: Conversation[] }> {
    return this.transport.get(this.path("/conversations"));
  }

  conversation(id: string): Promise<Conversation> {
    return this.transport.get(this.path(`/conversations/${enc(id)}`));
  }

  createConversation(title: string, agentIds: string[], key?: string): Promise<Conversation> {
    return this.transport.post(this.path("/conversations"), { title, agentIds }, key);
  }

  messages(conversationId: string, opts: { limit?: number; before?: number } = {}): Promise<MessagesPage> {
    const query = new URLSearchParams({ limit: String(opts.limit ?? 200) });
    if (opts.before) query.set("before", String(opts.before));
    return this.transport.get(this.path(`/conversations/${enc(conversationId)}/messages?${query}`));
  }

  postMessage(conversationId: string, body: NewMessage, key?: string): Promise<PostedMessage> {
    const wire: Record<string, unknown> = { content: body.content, trackAsTask: !!body.trackAsTask };
    if (body.targetAgentId) wire.targetAgentId = body.targetAgentId;
    return this.transport.post(this.path(`/conversations/${enc(conversationId)}/messages`), wire, key);
  }

  // --- tasks
  tasks(status: TaskFilter = "all"): Promise<{ tasks: Task[] }> {
    return this.transport.get(this.path(`/tasks?status=${status}`));
  }

  task(id: string): Promise<TaskDetail> {
    return this.transport.get(this.path(`/tasks/${enc(id)}`));
  }

  cancelTask(id: string, reason?: string, key?: string): Promise<TaskDetail> {
    return this.transport.post(this.path(`/tasks/${enc(id)}/cancel`), reason ? { reason } : {}, key);
  }

  // --- interactions and the inbox
  inbox(): Promise<Inbox> {
    return this.transport.get(this.path("/inbox"));
  }

  interaction(id: string): Promise<Interaction> {
    return this.transport.get(this.path(`/interactions/${enc(id)}`));
  }

  respond(id: string, response: InteractionResponse, key?: string): Promise<Interaction> {
    return this.transport.post(this.path(`/interactions/${enc(id)}/respond`), { response }, key);
  }

  // --- the event log
  events(after = 0, limit = 200): Promise<EventsPage> {
    return this.transport.get(this.path(`/events?after=${after}&limit=${limit}`));
  }

  tools(): Promise<AvailableTools> {
    return this.transport.get(this.path("/tools"));
  }

  registerTools(
    deviceId: string,
    tools: ToolDefinition[],
    name?: string,
  ): Promise<{ changed: boolean; sequence: number | null }> {
    return this.transport.request("PUT", this.path(`/devices/${enc(deviceId)}/tools`), {
      body: name ? { tools, name } : { tools },
    });
  }

  toolCalls(
    opts: { status?: ToolCallStatus; conversationId?: string; taskId?: string } = {},
  ): Promise<{ toolCalls: ToolCall[] }> {
    const query = new URLSearchParams();
    if (opts.status) query.set("status", opts.status);
    if (opts.conversationId) query.set("conversationId", opts.conversationId);
    if (opts.taskId) query.set("taskId", opts.taskId);
    const qs = query.toString();
    return this.transport.get(this.path(`/tool-calls${qs ? `?${qs}` : ""}`));
  }

  toolCall(id: string): Promise<ToolCall> {
    return this.transport.get(this.path(`/tool-calls/${enc(id)}`));
  }

  answerToolCall(id: string, answer: ToolAnswer, key?: string): Promise<ToolCall> {
    return this.transport.post(this.path(`/tool-calls/${enc(id)}/result`), answer, key);
  }

  canvases(conversationId?: string): Promise<{ canvases: CanvasInstance[] }> {
    const qs = conversationId ? `?conversationId=${enc(conversationId)}` : "";
    return this.transport.get(this.path(`/canvases${qs}`));
  }

  canvas(instanceId: string): Promise<CanvasInstance> {
    return this.transport.get(this.path(`/canvases/${enc(instanceId)}`));
  }
}
