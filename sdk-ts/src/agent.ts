/**
 * The `Agent`: register handlers, then `run()` until `stop()`.
 *
 * One outbound WebSocket to the hub (docs/protocol.md §1): hello with the cursor, wait for the
 * ack and the welcome, then three things side by side until the connection ends — the reader
 * (answers to what the agent sent, and the downlink), the outbox sender (one frame at a time,
 * oldest first, each waiting for its answer) and the heartbeat. A refused credential ends
 * `run()` with `ConnectionRefusedByHub`; anything else is a reason to reconnect with backoff.
 */

import { join } from "node:path";
import WebSocket from "ws";
import { type AgentConfig, agentHome } from "./config.js";
import { InvocationOutcome, PASSING, type StatusCallback, TERMINAL } from "./capabilities.js";
import { type Answer, Connection } from "./connection.js";
import { DiagnosticLog } from "./diagnostics.js";
import { MessageContext, type Runtime, TaskContext, Tools, type UploadedFile } from "./context.js";
import { ConnectionRefusedByHub, InsecureConnection, InteractionExpired, LineupError, RequestWithdrawn, errorFromCode, refusedAsEnded } from "./errors.js";
import type {
  AckFrame,
  CapabilityResultPayload,
  CapabilitySpec,
  AgentWelcomePayload,
  Envelope,
  ErrorFrame,
  InteractionResolvedPayload,
  MessageDeliveredPayload,
  Payloads,
  TaskAssignedPayload,
  TaskStatusChangedHubPayload,
  ToolResultPayload,
} from "./generated/protocol.js";
import { deriveId, newId } from "./ids.js";
import { checkPlainText } from "./security.js";
import { STATE_FILE_NAME, StateStore, type Step } from "./state.js";
import { type Trust, isVerificationFailure, trustFor, untrusted } from "./tls.js";
import { uploadFile } from "./uploads.js";
import { SDK_VERSION } from "./version.js";
import { Waiters, pause } from "./waiters.js";

export type TaskHandler = (ctx: TaskContext) => Promise<string | void | null | undefined>;
export type MessageHandler = (msg: MessageContext) => Promise<void>;

export interface AgentOptions {
  /** Where the outbox, cursor and journal live (default `$LINEUP_AGENT_HOME/state/<agent id>`). */
  stateDir?: string;
  runtime?: string;
  agentVersion?: string;
  capabilities?: string[];
  /** Overrides the hub's heartbeat interval (milliseconds). */
  heartbeatIntervalMs?: number;
  /** Reconnect delays: `initialMs` doubling up to `maxMs`, with jitter. */
  backoff?: { initialMs?: number; maxMs?: number };
  /** How long the hub may take to answer a frame before the connection is presumed dead. */
  answerTimeoutMs?: number;
  allowInsecure?: boolean;
  /** Settings people may change from the app: a JSON Schema object whose properties are
   * `string`, `number`, `integer` or `boolean` (docs/protocol.md §5.1). */
  settingsSchema?: Record<string, unknown>;
  /** Where the SDK's own log lines go (default: nowhere); they also go, redacted, to the hub
   * (`agent.logs`) for the Agents screen. */
  log?: (level: "info" | "warning" | "error", message: string) => void;
  /** How often to send the diagnostic lines (default 5000 ms; `null`: keep and send none). */
  diagnosticsIntervalMs?: number | null;
}

const DEFAULT_CAPABILITIES = ["tasks", "interactions", "artifacts", "streaming"];
/** Close codes after which reconnecting cannot help (docs/protocol.md §5.2). */
const FINAL_CLOSES = new Set([4401, 4403, 4410]);

class Stopping extends LineupError {
  constructor() {
    super("unavailable", "The agent is stopping.");
  }
}

/** An agent connected to a LineUp hub: it takes tasks, reports, and asks people. */
export class Agent {
  readonly config: AgentConfig;
  private readonly options: AgentOptions;
  private readonly statePath: string;
  private taskHandler: TaskHandler | undefined;
  private messageHandler: MessageHandler | undefined;
  private storeValue: StateStore | undefined;
  private stopController = new AbortController();
  private running = false;
  private connection: Connection | undefined;
  private connectedWaiters: (() => void)[] = [];
  private outboxSignal: (() => void) | undefined;
  private readonly settled = new Waiters<void>();
  private readonly resolved = new Waiters<InteractionResolvedPayload>();
  private readonly toolResults = new Waiters<ToolResultPayload>();
  private readonly toolLists = new Waiters<Record<string, unknown>[]>();
  private readonly capabilityLists = new Waiters<CapabilitySpec[]>();
  /** Each wait for an invocation hears every status as it arrives, in order. */
  private readonly invocations = new Map<string, Set<(result: CapabilityResultPayload) => void>>();
  private readonly contexts = new Map<string, TaskContext | MessageContext>();
  private readonly runners = new Map<string, Promise<void>>();
  private welcome: AgentWelcomePayload | undefined;
  private shuttingDownValue = false;
  private settingsValue: Record<string, unknown> = {};
  private readonly diagnostics = new DiagnosticLog(() => [this.config.credential]);
  private readonly settingsHooks: ((values: Record<string, unknown>) => void)[] = [];

  constructor(config: AgentConfig, options: AgentOptions = {}) {
    checkPlainText(config.websocketUrl, options.allowInsecure);
    this.config = config;
    this.options = options;
    this.statePath = join(options.stateDir ?? join(agentHome(), "state", config.agentId), STATE_FILE_NAME);
  }

  /** `async (ctx) => summary` runs each task: returning ends it `succeeded` (the text is its
   * summary), throwing `failed` (the error's name and message), a person's cancel `cancelled`. */
  task(handler: TaskHandler): this {
    if (this.taskHandler) throw new Error("This agent already has a task handler.");
    this.taskHandler = handler;
    return this;
  }

  /** `async (msg) => …` for each message a person sends this agent. */
  onMessage(handler: MessageHandler): this {
    if (this.messageHandler) throw new Error("This agent already has a message handler.");
    this.messageHandler = handler;
    return this;
  }

  /** True while a connection is open and the hub has welcomed the agent. */
  get connected(): boolean {
    return this.connection?.open === true && this.welcome !== undefined;
  }

  /** True while no person has confirmed the agent yet: the hub sends no work until then. */
  get awaitingConfirmation(): boolean {
    return this.welcome?.awaitingConfirmation === true;
  }

  /** The settings to run with: what a person saved in the app, else each setting's default. */
  get settings(): Record<string, unknown> {
    if (Object.keys(this.settingsValue).length === 0) return defaults(this.options.settingsSchema);
    return { ...this.settingsValue };
  }

  /** `hook(values)` hears the complete settings when they change (a person saved them, or the
   * welcome brings values this agent did not have). */
  onSettingsChange(hook: (values: Record<string, unknown>) => void): this {
    this.settingsHooks.push(hook);
    return this;
  }

  private settingsChanged(values: Record<string, unknown>): void {
    if (JSON.stringify(values) === JSON.stringify(this.settingsValue)) return;
    this.settingsValue = { ...values };
    for (const hook of this.settingsHooks) {
      try {
        hook(this.settings);
      } catch (error) {
        this.log("error", `a settings hook failed: ${String(error)}`);
      }
    }
  }

  /** The tools of people's apps, outside a task (pass `callId` to make a call resumable). */
  get tools(): Tools {
    return new Tools(() => this.runtime, {});
  }

  /** Connect and serve tasks and messages until `stop()`; reconnects on its own. Handlers
   * still running when it returns are resumed by the next `run`. */
  async run(): Promise<void> {
    if (this.running) throw new Error("This agent is already running.");
    this.running = true;
    this.shuttingDownValue = false;
    this.stopController = new AbortController();
    this.storeValue = new StateStore(this.statePath, this.config.agentId);
    try {
      const pending = this.store.pendingJobs();
      if (pending.length) this.log("info", `resuming ${pending.length} unfinished handler(s) from the journal`);
      for (const job of pending) this.startJob(job.scope);
      await this.link();
    } finally {
      this.shuttingDownValue = true;
      for (const context of this.contexts.values()) context.shutDown();
      await Promise.allSettled([...this.runners.values()]);
      for (const waiter of this.connectedWaiters.splice(0)) waiter(); // no connection: they hear Stopping
      this.toolResults.failAll(new Stopping());
      this.toolLists.failAll(new Stopping());
      this.capabilityLists.failAll(new Stopping());
      this.storeValue?.close();
      this.storeValue = undefined;
      this.running = false;
    }
  }

  /** Ask `run()` to close the connection and return (safe to call any time). */
  stop(): void {
    this.stopController.abort();
    this.connection?.socket.close(1000);
  }

  /** Wait until the hub has answered everything queued so far. */
  async drain(): Promise<void> {
    while (this.storeValue && this.store.firstUnsent() !== undefined) await pause(20, this.stopController.signal);
  }

  // --- the runtime the contexts see ---------------------------------------------------------

  private get store(): StateStore {
    if (!this.storeValue) throw new Error("The agent is not running: start agent.run() first.");
    return this.storeValue;
  }

  private get runtime(): Runtime {
    const agent = this;
    return {
      agentId: this.config.agentId,
      get store() {
        return agent.store;
      },
      get shuttingDown() {
        return agent.shuttingDownValue;
      },
      makeEnvelope: (type, payload, ids) => this.envelope(type, payload, ids),
      outboxChanged: () => this.outboxSignal?.(),
      waitSettled: (step, signal) => this.waitSettled(step, signal),
      sendLive: (envelope) => this.connected && (this.connection?.sendRaw(JSON.stringify(envelope)) ?? false),
      waitAnswer: (id, signal) => this.waitAnswer(id, signal),
      waitToolResult: (callId, signal) => this.waitToolResult(callId, signal),
      queryTools: () => this.queryTools(),
      withdrawToolCall: (callId, reason) => {
        if (this.store.answer(`tool:${callId}`) !== undefined) return;
        const envelope = this.envelope("tool.cancel", { call_id: callId, reason }, { id: deriveId("evt", this.config.agentId, "tool.cancel", callId) });
        this.store.enqueue(envelope.id, JSON.stringify(envelope));
        this.outboxSignal?.();
      },
      forgetToolCall: (scope, callId) => this.store.forget(scope, [`tool:${callId}`]),
      upload: (name, content, mimeType, key) => this.upload(name, content, mimeType, key),
      queryCapabilities: (taskId, conversationId) => this.queryCapabilities(taskId, conversationId),
      waitInvocation: (id, onStatus, signal) => this.waitInvocation(id, onStatus, signal),
    };
  }

  private envelope(type: string, payload: object, ids: { id: string; taskId?: string | null; conversationId?: string | null }): Envelope {
    const envelope: Envelope = {
      id: ids.id,
      type,
      version: "0.1",
      occurredAt: new Date().toISOString(),
      workspaceId: this.config.workspaceId,
      payload: payload as Record<string, unknown>,
    };
    if (ids.taskId) envelope.taskId = ids.taskId;
    if (ids.conversationId) envelope.conversationId = ids.conversationId;
    return envelope;
  }

  private async waitSettled(step: Step, signal: AbortSignal): Promise<void> {
    const current = this.store.step(step.scope, step.index) ?? step;
    if (current.status === "acked" || current.status === "done") return;
    if (current.status === "failed") throw recordedError(current.error);
    if (current.envelopeId === null) return;
    await this.settled.wait(current.envelopeId, signal);
  }

  /** The answer, or `InteractionExpired` when the hub says the question expired: the hub's
   * clock decides, not this machine's — a handler that gave up on its own timer would report
   * while the hub still holds the task `waiting_for_human` (a report it refuses), and a
   * person's answer the hub took at the last moment would be lost. */
  private async waitAnswer(interactionId: string, signal: AbortSignal): Promise<InteractionResolvedPayload> {
    const stored = this.store.answer(interactionId);
    if (stored !== undefined) return JSON.parse(stored) as InteractionResolvedPayload;
    this.raiseIfWithdrawn(interactionId);
    const expiry = this.store.answer(`expired:${interactionId}`);
    if (expiry !== undefined) throw new InteractionExpired(interactionId, new Date(Number(expiry)));
    return this.resolved.wait(interactionId, signal);
  }

  private async waitToolResult(callId: string, signal: AbortSignal): Promise<ToolResultPayload> {
    const stored = this.store.answer(`tool:${callId}`);
    if (stored !== undefined) return JSON.parse(stored) as ToolResultPayload;
    this.raiseIfWithdrawn(callId);
    return this.toolResults.wait(callId, signal);
  }

  private raiseIfWithdrawn(requestId: string): void {
    const reason = this.store.answer(`withdrawn:${requestId}`);
    if (reason !== undefined) throw new RequestWithdrawn(requestId, reason || undefined);
  }

  private queryTools(): Promise<Record<string, unknown>[]> {
    return this.query(() => this.envelope("tool.list", { tools: [] }, { id: newId("evt") }), this.toolLists);
  }

  private queryCapabilities(taskId: string | null, conversationId: string | null): Promise<CapabilitySpec[]> {
    return this.query(() => this.envelope("capability.list", {}, { id: newId("evt"), taskId, conversationId }), this.capabilityLists);
  }

  /** A query the hub answers with a frame naming it (`correlationId`) before its ack; asked
   * again on the next connection if this one ends first. */
  private async query<T>(make: () => Envelope, answers: Waiters<T>): Promise<T> {
    for (;;) {
      if (this.shuttingDownValue || this.stopController.signal.aborted) throw new Stopping();
      const connection = await this.whenConnected();
      const query = make();
      const listed = answers.wait(query.id);
      listed.catch(() => undefined);
      let answer: Answer;
      try {
        answer = await connection.request(query, this.answerTimeout);
      } catch {
        answers.fail(query.id, new Stopping());
        continue;
      }
      if (answer.type === "error") {
        answers.fail(query.id, new Stopping());
        throw errorFromCode((answer as ErrorFrame).code, (answer as ErrorFrame).message, (answer as ErrorFrame).details);
      }
      return listed; // the answer came before its query's ack
    }
  }

  /** The invocation's terminal result, kept in the state file when it arrived, or awaited;
   * every status it passed through goes to `onStatus` once per wait, in order, also those that
   * came before the wait began — so a resumed handler hears what the first run heard. */
  private async waitInvocation(id: string, onStatus: StatusCallback | undefined, signal: AbortSignal): Promise<CapabilityResultPayload> {
    const heard: CapabilityResultPayload[] = [];
    let wake: (() => void) | undefined;
    const listener = (result: CapabilityResultPayload): void => {
      heard.push(result);
      wake?.();
    };
    const listeners = this.invocations.get(id) ?? new Set();
    listeners.add(listener);
    this.invocations.set(id, listeners);
    try {
      const reported = new Set<string>();
      for (const status of PASSING) {
        const stored = this.store.answer(`cap:${id}:${status}`);
        if (stored !== undefined) {
          reported.add(status);
          await onStatus?.(new InvocationOutcome(JSON.parse(stored) as CapabilityResultPayload));
        }
      }
      for (;;) {
        const final = this.store.answer(`cap:${id}`);
        if (final !== undefined) return JSON.parse(final) as CapabilityResultPayload;
        const next = heard.shift();
        if (next === undefined) {
          await new Promise<void>((resolve, reject) => {
            wake = resolve;
            if (signal.aborted) reject(signal.reason);
            signal.addEventListener("abort", () => reject(signal.reason), { once: true });
          });
          wake = undefined;
          continue;
        }
        if (!TERMINAL.has(next.status) && !reported.has(next.status)) {
          reported.add(next.status);
          await onStatus?.(new InvocationOutcome(next));
        }
      }
    } finally {
      listeners.delete(listener);
      if (listeners.size === 0) this.invocations.delete(id);
    }
  }

  private async upload(name: string, content: Buffer, mimeType: string | undefined, key: string): Promise<UploadedFile> {
    return uploadFile(this.config, { name, content, mimeType, key }, { stop: this.stopController.signal, delay: (n: number) => this.delay(n) });
  }

  // --- the connection ---------------------------------------------------------------------

  private get answerTimeout(): number {
    return this.options.answerTimeoutMs ?? 30_000;
  }

  private delay(attempt: number): number {
    const initial = this.options.backoff?.initialMs ?? 500;
    const max = this.options.backoff?.maxMs ?? 30_000;
    const base = Math.min(max, initial * 2 ** Math.min(attempt, 20));
    return base / 2 + (Math.random() * base) / 2;
  }

  private whenConnected(): Promise<Connection> {
    if (this.connected && this.connection) return Promise.resolve(this.connection);
    return new Promise((resolve, reject) => {
      this.connectedWaiters.push(() => (this.connection ? resolve(this.connection) : reject(new Stopping())));
    });
  }

  private log(level: "info" | "warning" | "error", message: string): void {
    this.options.log?.(level, message);
    if (this.options.diagnosticsIntervalMs !== null) this.diagnostics.add(level, message);
  }

  /** Send the kept diagnostic lines now, then every interval, until the connection ends or
   * the hub says it does not know `agent.logs` (an ack with `ignored`). */
  private async shipDiagnostics(connection: Connection, until: AbortSignal): Promise<void> {
    const interval = this.options.diagnosticsIntervalMs;
    if (interval === null) return;
    while (connection.open && !until.aborted) {
      for (let batch = this.diagnostics.batch(); batch.length > 0 && connection.open; batch = this.diagnostics.batch()) {
        const frame = this.envelope("agent.logs", { lines: batch }, { id: newId("evt") });
        let answer: Answer;
        try {
          answer = await connection.request(frame, this.answerTimeout);
        } catch {
          return;
        }
        if (answer.type === "error") {
          this.diagnostics.taken(batch); // refused as a whole: nothing in it is worth resending
          continue;
        }
        if ((answer as AckFrame).ignored) return;
        this.diagnostics.taken(batch);
      }
      await pause(interval ?? 5000, until);
    }
  }

  private async link(): Promise<void> {
    const stop = this.stopController.signal;
    let attempt = 0;
    while (!stop.aborted) {
      let trust: Trust | undefined;
      try {
        trust = await trustFor(this.config.websocketUrl, this.config.tlsFingerprint);
      } catch (error) {
        if (error instanceof InsecureConnection) throw error; // a wrong pin is final
        const delay = this.delay(attempt++);
        this.log("warning", `cannot reach the hub at ${this.config.websocketUrl} (${String(error)}); retry in ${Math.round(delay)} ms`);
        await pause(delay, stop);
        continue;
      }
      const socket = new WebSocket(this.config.websocketUrl, {
        headers: { Authorization: `Bearer ${this.config.credential}` },
        ...(trust ?? {}),
      });
      let failure: unknown;
      const opened = await new Promise<boolean>((resolve) => {
        socket.once("open", () => resolve(true));
        socket.once("error", (error) => {
          failure = error;
          resolve(false);
        });
        socket.once("unexpected-response", (_req, res) => {
          resolve(false);
          res.resume();
        });
      });
      if (!opened) {
        socket.terminate();
        if (isVerificationFailure(failure)) throw await untrusted(this.config.websocketUrl, failure);
        const delay = this.delay(attempt++);
        this.log("warning", `cannot reach the hub at ${this.config.websocketUrl}; retry in ${Math.round(delay)} ms`);
        await pause(delay, stop);
        continue;
      }
      const welcomed = await this.serve(socket);
      if (welcomed) attempt = 0;
      if (stop.aborted) break;
      const delay = this.delay(attempt++);
      this.log("info", `disconnected from the hub; reconnecting in ${Math.round(delay)} ms`);
      await pause(delay, stop);
    }
  }

  /** Serve one connection until it ends; true if the hub welcomed the agent. */
  private async serve(socket: WebSocket): Promise<boolean> {
    let refusal: ErrorFrame | undefined;
    let welcomeArrived: ((w: AgentWelcomePayload) => void) | undefined;
    const welcome = new Promise<AgentWelcomePayload>((resolve) => (welcomeArrived = resolve));
    const connection = new Connection(socket, (frame) => {
      if (frame["type"] === "error") {
        refusal = frame as unknown as ErrorFrame;
        return;
      }
      if (frame["type"] === "agent.welcome") {
        welcomeArrived?.((frame as unknown as Envelope).payload as unknown as AgentWelcomePayload);
        return;
      }
      this.downlink(frame as unknown as Envelope);
    });
    this.connection = connection;
    const served = new AbortController(); // ends the timers of this connection's races
    const stopped = new Promise<void>((resolve) =>
      this.stopController.signal.addEventListener("abort", () => resolve(), { once: true, signal: served.signal }),
    );
    try {
      const capabilities = this.options.capabilities ?? [...DEFAULT_CAPABILITIES, ...(this.messageHandler ? ["messages"] : [])];
      const hello = this.envelope(
        "agent.hello",
        {
          agentVersion: this.options.agentVersion ?? SDK_VERSION,
          runtime: this.options.runtime ?? "node",
          capabilities,
          lastSequence: this.store.cursor,
          ...(this.options.settingsSchema ? { settingsSchema: this.options.settingsSchema } : {}),
        } satisfies Payloads["agent.hello"],
        { id: newId("evt") },
      );
      let answer: Answer;
      try {
        answer = await connection.request(hello, this.answerTimeout);
      } catch {
        const closed = await Promise.race([connection.closed, pause(1000, served.signal).then(() => undefined)]);
        this.checkRefusal(closed, refusal);
        return false;
      }
      if (answer.type === "error") {
        const refused = answer as ErrorFrame;
        if (refused.retryable) {
          this.log("warning", `the hub is not ready for agents (${refused.message}); will retry`);
          return false;
        }
        // a hello refused for good (a bad credential, workspace or hello) will not get better
        const closed = await Promise.race([connection.closed, pause(1000, served.signal).then(() => undefined)]);
        throw new ConnectionRefusedByHub(refused.code, refused.message, refused.details ?? {}, closed?.code);
      }
      const info = await Promise.race([welcome, connection.closed.then(() => undefined), pause(this.answerTimeout, served.signal).then(() => undefined)]);
      if (info === undefined) return false;
      this.welcome = info;
      if (info.settings) this.settingsChanged(info.settings);
      this.log("info", `connected to ${this.config.websocketUrl} as ${this.config.agentId} (hub at ${info.latestSequence}, ours ${this.store.cursor})`);
      for (const waiter of this.connectedWaiters.splice(0)) waiter();
      const interval = this.options.heartbeatIntervalMs ?? info.heartbeatIntervalMs;
      const beat = setInterval(() => {
        connection.request(this.envelope("agent.heartbeat", {}, { id: newId("hb") }), this.answerTimeout).catch(() => undefined);
      }, interval);
      this.shipDiagnostics(connection, served.signal).catch(() => undefined);
      try {
        const sender = this.sendOutbox(connection);
        const closed = await Promise.race([connection.closed, stopped.then(() => undefined), sender.then(() => undefined)]);
        this.checkRefusal(closed, refusal);
      } finally {
        clearInterval(beat);
      }
      return true;
    } finally {
      served.abort();
      this.welcome = undefined;
      this.connection = undefined;
      this.outboxSignal?.();
      if (connection.open) socket.close(1000);
    }
  }

  private checkRefusal(closed: { code: number; reason: string } | undefined, error: ErrorFrame | undefined): void {
    if (closed && FINAL_CLOSES.has(closed.code)) {
      const code = error?.code ?? (closed.code === 4403 ? "forbidden" : "unauthenticated");
      throw new ConnectionRefusedByHub(code, error?.message ?? `The hub closed the connection (${closed.code} ${closed.reason}).`, error?.details ?? {}, closed.code);
    }
  }

  /** The outbox, one frame at a time: an ack settles it, a retryable error resends it later,
   * any other error settles it as failed (its handler hears it) and it is never resent. */
  private async sendOutbox(connection: Connection): Promise<void> {
    let attempt = 0;
    while (connection.open && !this.stopController.signal.aborted) {
      const entry = this.store.firstUnsent();
      if (entry === undefined) {
        await new Promise<void>((resolve) => {
          this.outboxSignal = resolve;
          connection.closed.then(() => resolve());
        });
        this.outboxSignal = undefined;
        continue;
      }
      let answer: Answer;
      try {
        answer = await connection.request(JSON.parse(entry.frame) as Envelope, this.answerTimeout);
      } catch {
        return; // the connection ended: resent on the next one
      }
      if (answer.type !== "error") {
        attempt = 0;
        this.store.settle(entry, { sequence: (answer as AckFrame).sequence ?? null });
        this.settled.resolve(entry.envelopeId, undefined);
      } else if (answer.retryable) {
        const after = answer.details?.["retryAfterMs"];
        await pause(typeof after === "number" ? after : this.delay(attempt++), this.stopController.signal);
      } else {
        attempt = 0;
        this.log("error", `the hub refused ${entry.envelopeId} (${answer.code}: ${answer.message}); it will not be resent`);
        const error: Record<string, unknown> = { code: answer.code, message: answer.message };
        if (answer.details) error["details"] = answer.details;
        this.store.settle(entry, { error });
        this.settled.fail(entry.envelopeId, recordedError(error));
      }
    }
  }

  // --- the downlink -----------------------------------------------------------------------

  /** Each downlink event is journaled, then handed on; the cursor moves past it only once it
   * is handled, so a missed one is replayed and a handled one skipped. */
  private downlink(envelope: Envelope): void {
    const store = this.store;
    const sequence = envelope.sequence ?? null;
    const payload = (envelope.payload ?? {}) as Record<string, unknown>;
    if (envelope.type === "tool.list" && envelope.correlationId) {
      this.toolLists.resolve(envelope.correlationId, (payload["tools"] as Record<string, unknown>[] | undefined) ?? []);
      return;
    }
    if (envelope.type === "capability.list" && envelope.correlationId) {
      this.capabilityLists.resolve(envelope.correlationId, (payload["capabilities"] as CapabilitySpec[] | undefined) ?? []);
      return;
    }
    if (envelope.type === "capability.result") {
      // before the cursor check: a status replayed after a resent invoke still reaches a wait
      // that has not heard it (each status is kept once, so a replay changes nothing)
      const result = payload as unknown as CapabilityResultPayload;
      const key = TERMINAL.has(result.status) ? `cap:${result.invocationId}` : `cap:${result.invocationId}:${result.status}`;
      store.rememberAnswer(sequence, key, JSON.stringify(result));
      for (const listener of this.invocations.get(result.invocationId) ?? []) listener(result);
      return;
    }
    if (envelope.type === "system.resync_required") {
      const resume = payload["resumeAfter"];
      const latest = payload["latestSequence"];
      if (typeof resume === "number") store.resetCursor(resume);
      else if (typeof latest === "number") store.resetCursor(latest);
      return;
    }
    if (sequence !== null && sequence <= store.cursor) return;
    switch (envelope.type) {
      case "task.assigned": {
        const assigned = payload as TaskAssignedPayload;
        if (store.rememberJob(sequence, assigned.taskId, "task", JSON.stringify(envelope))) this.startJob(assigned.taskId);
        return;
      }
      case "task.cancel_requested": {
        const taskId = (payload["taskId"] as string | undefined) ?? envelope.taskId;
        if (!taskId) return store.advance(sequence);
        const reason = (payload["reason"] as string | null | undefined) ?? null;
        if (store.requestCancel(sequence, taskId, reason)) {
          const context = this.contexts.get(taskId);
          if (context instanceof TaskContext) context.requestCancel(reason);
        }
        return;
      }
      case "task.status_changed": {
        const ended = payload as TaskStatusChangedHubPayload;
        const dropped = store.endJob(sequence, ended.taskId, `ended:${ended.cause}`, this.finalReportId(ended.taskId));
        this.log("warning", `the hub ended task ${ended.taskId} itself (${ended.cause})${dropped ? `; ${dropped} queued report(s) dropped` : ""}`);
        const context = this.contexts.get(ended.taskId);
        if (context instanceof TaskContext) context.endByHub(ended.cause);
        return;
      }
      case "interaction.resolved": {
        const resolved = payload as InteractionResolvedPayload;
        store.rememberAnswer(sequence, resolved.interactionId, JSON.stringify(resolved));
        this.resolved.resolve(resolved.interactionId, JSON.parse(store.answer(resolved.interactionId) ?? "null") as InteractionResolvedPayload);
        return;
      }
      case "interaction.expired": {
        const id = String(payload["interactionId"]);
        const at = typeof payload["expiresAt"] === "number" ? new Date(payload["expiresAt"]) : new Date();
        store.rememberAnswer(sequence, `expired:${id}`, String(at.getTime())); // for a resumed wait too
        this.resolved.fail(id, new InteractionExpired(id, at));
        return;
      }
      case "interaction.cancelled":
      case "tool.cancelled": {
        const id = String(envelope.type === "tool.cancelled" ? payload["call_id"] : payload["interactionId"]);
        const reason = (payload["reason"] as string | undefined) ?? "";
        store.rememberAnswer(sequence, `withdrawn:${id}`, reason);
        const error = new RequestWithdrawn(id, reason || undefined);
        this.resolved.fail(id, error);
        this.toolResults.fail(id, error);
        return;
      }
      case "tool.result": {
        const result = payload as unknown as ToolResultPayload;
        const key = `tool:${result.call_id}`;
        store.rememberAnswer(sequence, key, JSON.stringify(result));
        this.toolResults.resolve(result.call_id, JSON.parse(store.answer(key) ?? "null") as ToolResultPayload);
        return;
      }
      case "message.delivered": {
        const delivered = payload as unknown as MessageDeliveredPayload;
        if (!this.messageHandler) return store.advance(sequence);
        const scope = `message:${delivered.messageId}`;
        if (store.rememberJob(sequence, scope, "message", JSON.stringify(envelope))) this.startJob(scope);
        return;
      }
      case "agent.settings":
        this.settingsChanged((payload["values"] as Record<string, unknown> | undefined) ?? {});
        return store.advance(sequence);
      case "agent.confirmed":
        if (this.welcome) this.welcome = { ...this.welcome, awaitingConfirmation: false };
        return store.advance(sequence);
      default:
        return store.advance(sequence);
    }
  }

  // --- the handlers at work -----------------------------------------------------------------

  private finalReportId(taskId: string): string {
    return deriveId("evt", this.config.agentId, taskId, "finish");
  }

  private startJob(scope: string): void {
    if (this.runners.has(scope)) return;
    const job = this.store.job(scope);
    if (!job || job.done) return;
    const work = job.kind === "task" ? this.runTask(scope) : this.runMessage(scope);
    const runner = work
      .catch((error: unknown) => this.log("error", `handler bookkeeping for ${scope} failed: ${String(error)}`))
      .finally(() => {
        this.runners.delete(scope);
        this.contexts.delete(scope);
      });
    this.runners.set(scope, runner);
  }

  private async runTask(scope: string): Promise<void> {
    const job = this.store.job(scope);
    if (!job || job.done) return;
    const envelope = JSON.parse(job.frame) as Envelope;
    const context = new TaskContext(this.runtime, envelope, envelope.payload as unknown as TaskAssignedPayload);
    this.contexts.set(scope, context);
    if (job.cancelRequested) {
      context.requestCancel(job.cancelReason ?? null);
      return this.finish(context, "cancelled");
    }
    if (!this.taskHandler) return this.finish(context, "failed", undefined, "This agent has no task handler (register one with agent.task(…)).");
    try {
      await context.accept();
    } catch (error) {
      if (this.shuttingDownValue) return;
      this.log("error", `the hub refused to let this agent take task ${scope}: ${String(error)}`);
      this.store.finishJob(scope, "refused");
      return;
    }
    let summary: string | void | null | undefined;
    try {
      summary = await this.taskHandler(context);
    } catch (error) {
      if (this.shuttingDownValue) return; // resumed when the agent starts again
      if (context.endedByHub !== null) return;
      if (refusedAsEnded(error)) {
        context.endByHub(String((error as LineupError).details["cause"] ?? "ended"));
        this.store.finishJob(scope, "ended");
        return;
      }
      if (context.cancelReason !== null || context.cancelled) return this.finish(context, "cancelled");
      const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
      return this.finish(context, "failed", undefined, text);
    }
    if (this.shuttingDownValue && context.signal.aborted) return;
    if (context.endedByHub !== null) return;
    if (context.cancelled) return this.finish(context, "cancelled");
    this.finish(context, "succeeded", summary == null ? undefined : String(summary));
  }

  private finish(context: TaskContext, status: "succeeded" | "failed" | "cancelled", summary?: string, error?: string): void {
    if (context.endedByHub !== null) return;
    const payload: Payloads["task.status_changed"] = { status };
    if (status === "succeeded") payload.progress = 100;
    if (summary?.trim()) payload.summary = clip(summary, 500);
    if (error) payload.error = clip(error, 4000);
    const envelope = this.envelope("task.status_changed", payload, {
      id: this.finalReportId(context.taskId),
      taskId: context.taskId,
      conversationId: context.conversationId,
    });
    this.store.finishJob(context.taskId, status, envelope.id, JSON.stringify(envelope));
    this.outboxSignal?.();
    this.log("info", `task ${context.taskId} ${status}`);
  }

  private async runMessage(scope: string): Promise<void> {
    const job = this.store.job(scope);
    if (!job || job.done) return;
    const envelope = JSON.parse(job.frame) as Envelope;
    const context = new MessageContext(this.runtime, envelope, envelope.payload as unknown as MessageDeliveredPayload);
    this.contexts.set(scope, context);
    try {
      await this.messageHandler?.(context);
    } catch (error) {
      if (this.shuttingDownValue) return;
      this.log("error", `the handler of message ${context.messageId} failed: ${String(error)}`);
    }
    this.store.finishJob(scope, "done");
  }
}

function defaults(schema: Record<string, unknown> | undefined): Record<string, unknown> {
  const found: Record<string, unknown> = {};
  const properties = (schema?.["properties"] ?? {}) as Record<string, { default?: unknown }>;
  for (const [name, property] of Object.entries(properties)) if (property.default !== undefined) found[name] = property.default;
  return found;
}

function clip(text: string, limit: number): string {
  const trimmed = text.trim();
  return trimmed.length <= limit ? trimmed : `${trimmed.slice(0, limit - 1)}…`;
}

function recordedError(error: Record<string, unknown> | null | undefined): LineupError {
  return errorFromCode(
    String(error?.["code"] ?? "unknown_result"),
    String(error?.["message"] ?? "The hub refused this event."),
    (error?.["details"] as Record<string, unknown> | undefined) ?? {},
  );
}
