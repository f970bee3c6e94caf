// The typed client of the hub's HTTP API (src/lineup/hub/api/*.py).

import { Transport, type Download } from "./client";
import type {
  AvailablePackage,
  Provider,
  ProviderChange,
  ProviderChangeDecision,
  ProviderChangeRequest,
  ProviderDetail,
  ProviderHealth,
  Agent,
  AgentLogs,
  RotatedCredential,
  Approval,
  ApprovalDecision,
  ApprovalView,
  CapabilityEntry,
  Execution,
  NewRule,
  Policy,
  PolicyRule,
  Project,
  ProjectDetail,
  ProjectRole,
  RunRecord,
  StandingPermission,
  WorkspaceMember,
  AvailableTools,
  CanvasInstance,
  Conversation,
  EngineCatalog,
  EventsPage,
  HostedAgent,
  ImportedSession,
  Inbox,
  Interaction,
  InteractionResponse,
  Me,
  MessagesPage,
  NewHostedAgent,
  PairingCode,
  HubInfo,
  PostedMessage,
  RawEvents,
  RawSubject,
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
  /** Meant to change what the agent is doing right now (it goes into its running turn). */
  steer?: boolean;
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

  /** Where agents reach this hub and the certificate it serves (its fingerprint, to pin). */
  hubInfo(): Promise<HubInfo> {
    return this.transport.get(this.path("/hub"));
  }

  createPairingCode(agentName?: string): Promise<PairingCode> {
    return this.transport.post(this.path("/pairing-codes"), agentName ? { agentName } : {});
  }

  renameAgent(id: string, name: string, key?: string): Promise<Agent> {
    return this.transport.patch(this.path(`/agents/${enc(id)}`), { name }, key);
  }

  /** The agent's own recent diagnostic lines, newest first. */
  agentLogs(id: string, limit = 200): Promise<AgentLogs> {
    return this.transport.get(this.path(`/agents/${enc(id)}/logs?limit=${limit}`));
  }

  /** Finish pairing: the person recognises the agent (maybe under a new name). */
  confirmAgent(id: string, name?: string, key?: string): Promise<Agent> {
    return this.transport.post(this.path(`/agents/${enc(id)}/confirm`), name ? { name } : {}, key);
  }

  /** Refuse a newly paired agent: its credential stops working and it leaves the list. */
  rejectAgent(id: string): Promise<void> {
    return this.transport.post(this.path(`/agents/${enc(id)}/reject`), {});
  }

  saveAgentSettings(id: string, values: Record<string, unknown>, key?: string): Promise<Agent> {
    return this.transport.put(this.path(`/agents/${enc(id)}/settings`), { values }, key);
  }

  revokeAgent(id: string): Promise<Agent> {
    return this.transport.post(this.path(`/agents/${enc(id)}/revoke`), {});
  }

  /** A new credential for the agent, shown this once; the old one stops working. */
  rotateAgentCredential(id: string): Promise<RotatedCredential> {
    return this.transport.post(this.path(`/agents/${enc(id)}/credential/rotate`), {});
  }

  // --- hosted agents: what this hub can run, and the agents it runs
  /** The engines this hub knows (installed or not, how to add each) and the allowed roots. */
  engines(): Promise<EngineCatalog> {
    return this.transport.get(this.path("/engines"));
  }

  hostedAgents(): Promise<{ hostedAgents: HostedAgent[]; engines: string[] }> {
    return this.transport.get(this.path("/hosted-agents"));
  }

  createHostedAgent(body: NewHostedAgent): Promise<HostedAgent> {
    return this.transport.post(this.path("/hosted-agents"), body);
  }

  /** Stops its engine and revokes the agent; its conversations and tasks stay. */
  deleteHostedAgent(agentId: string): Promise<void> {
    return this.transport.request("DELETE", this.path(`/hosted-agents/${enc(agentId)}`));
  }

  // --- conversations and messages
  conversations(): Promise<{ conversations: Conversation[] }> {
    return this.transport.get(this.path("/conversations"));
  }

  conversation(id: string): Promise<Conversation> {
    return this.transport.get(this.path(`/conversations/${enc(id)}`));
  }

  createConversation(title: string, agentIds: string[], key?: string, projectId?: string | null): Promise<Conversation> {
    const body: Record<string, unknown> = { title, agentIds };
    if (projectId) body.projectId = projectId;
    return this.transport.post(this.path("/conversations"), body, key);
  }

  /** The conversation as a session file (docs/sessions.md), to save. */
  sessionFile(conversationId: string): Promise<Download> {
    return this.transport.download(this.path(`/conversations/${enc(conversationId)}/session.jsonl`));
  }

  /** A session file (LineUp's or Pi's) made a new conversation, in a project or personal. */
  importSession(file: Blob, projectId: string | null, key?: string): Promise<ImportedSession> {
    const query = projectId ? `?projectId=${enc(projectId)}` : "";
    return this.transport.upload(this.path(`/conversations/import${query}`), file, "application/x-ndjson", key);
  }

  messages(conversationId: string, opts: { limit?: number; before?: number } = {}): Promise<MessagesPage> {
    const query = new URLSearchParams({ limit: String(opts.limit ?? 200) });
    if (opts.before) query.set("before", String(opts.before));
    return this.transport.get(this.path(`/conversations/${enc(conversationId)}/messages?${query}`));
  }

  postMessage(conversationId: string, body: NewMessage, key?: string): Promise<PostedMessage> {
    const wire: Record<string, unknown> = { content: body.content, trackAsTask: !!body.trackAsTask };
    if (body.targetAgentId) wire.targetAgentId = body.targetAgentId;
    if (body.steer) wire.steer = true;
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

  /** The recorded events behind one task, message or card, oldest first (``after``) or the
   * newest before ``before``. */
  rawEvents(
    subject: RawSubject,
    page: { after?: number; before?: number; limit?: number } = {},
  ): Promise<RawEvents> {
    const query = new URLSearchParams({ subject, limit: String(page.limit ?? 100) });
    if (page.after !== undefined) query.set("after", String(page.after));
    if (page.before !== undefined) query.set("before", String(page.before));
    return this.transport.get(this.path(`/raw-events?${query.toString()}`));
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

  // --- governance: projects, the catalogue, policy, approvals and run records
  members(): Promise<{ members: WorkspaceMember[] }> {
    return this.transport.get(this.path("/members"));
  }

  projects(): Promise<{ projects: Project[] }> {
    return this.transport.get(this.path("/projects"));
  }

  project(id: string): Promise<ProjectDetail> {
    return this.transport.get(this.path(`/projects/${enc(id)}`));
  }

  createProject(body: { name: string; context?: string; workingDirectory?: string }, key?: string): Promise<ProjectDetail> {
    return this.transport.post(this.path("/projects"), body, key);
  }

  setProjectMember(projectId: string, userId: string, role: ProjectRole): Promise<ProjectDetail> {
    return this.transport.request("PUT", this.path(`/projects/${enc(projectId)}/members/${enc(userId)}`), { body: { role } });
  }

  removeProjectMember(projectId: string, userId: string): Promise<void> {
    return this.transport.request("DELETE", this.path(`/projects/${enc(projectId)}/members/${enc(userId)}`));
  }

  capabilities(): Promise<{ capabilities: CapabilityEntry[] }> {
    return this.transport.get(this.path("/capabilities"));
  }

  setCapabilityEnabled(capability: string, enabled: boolean, reason?: string): Promise<void> {
    return this.transport.request("PUT", this.path(`/capabilities/${enc(capability)}/state`), {
      body: reason ? { enabled, reason } : { enabled },
    });
  }

  policy(): Promise<Policy> {
    return this.transport.get(this.path("/policy"));
  }

  addRule(rule: NewRule, key?: string): Promise<PolicyRule> {
    return this.transport.post(this.path("/policy/rules"), rule, key);
  }

  removeRule(ruleId: string): Promise<void> {
    return this.transport.request("DELETE", this.path(`/policy/rules/${enc(ruleId)}`));
  }

  revokePermission(permissionId: string, reason?: string): Promise<StandingPermission> {
    return this.transport.post(this.path(`/permissions/${enc(permissionId)}/revoke`), reason ? { reason } : {});
  }

  approvals(view: ApprovalView = "waiting", conversationId?: string): Promise<{ approvals: Approval[] }> {
    const query = new URLSearchParams({ view });
    if (conversationId) query.set("conversationId", conversationId);
    return this.transport.get(this.path(`/approvals?${query}`));
  }

  approval(id: string): Promise<Approval> {
    return this.transport.get(this.path(`/approvals/${enc(id)}`));
  }

  decide(id: string, decision: ApprovalDecision, key?: string): Promise<Approval> {
    return this.transport.post(this.path(`/approvals/${enc(id)}/decision`), decision, key);
  }

  handOver(id: string, userId: string, key?: string): Promise<Approval> {
    return this.transport.post(this.path(`/approvals/${enc(id)}/handover`), { userId }, key);
  }

  executions(conversationId?: string): Promise<{ executions: Execution[] }> {
    const qs = conversationId ? `?conversationId=${enc(conversationId)}` : "";
    return this.transport.get(this.path(`/executions${qs}`));
  }

  runRecord(executionId: string): Promise<RunRecord> {
    return this.transport.get(this.path(`/executions/${enc(executionId)}`));
  }

  // --- providers: installed packages, what can be installed, and changes through approval
  providers(): Promise<{ providers: Provider[] }> {
    return this.transport.get(this.path("/providers"));
  }

  provider(id: string): Promise<ProviderDetail> {
    return this.transport.get(this.path(`/providers/${enc(id)}`));
  }

  availablePackages(): Promise<{ packages: AvailablePackage[] }> {
    return this.transport.get(this.path("/providers/available"));
  }

  /** A package archive from the person's computer, verified by the hub before it is listed. */
  uploadPackage(archive: Blob, key?: string): Promise<AvailablePackage> {
    return this.transport.upload(this.path("/providers/packages"), archive, "application/octet-stream", key);
  }

  requestProviderChange(request: ProviderChangeRequest, key?: string): Promise<ProviderChange> {
    return this.transport.post(this.path("/providers/changes"), request, key);
  }

  providerChanges(status: "pending" | "all" = "pending"): Promise<{ changes: ProviderChange[] }> {
    return this.transport.get(this.path(`/providers/changes?status=${status}`));
  }

  decideProviderChange(id: string, decision: ProviderChangeDecision, key?: string): Promise<ProviderChange> {
    return this.transport.post(this.path(`/providers/changes/${enc(id)}/decision`), decision, key);
  }

  checkProviderHealth(id: string): Promise<ProviderHealth> {
    return this.transport.post(this.path(`/providers/${enc(id)}/health`), {});
  }
}
