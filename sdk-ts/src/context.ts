/**
 * What a handler works with: `TaskContext` for a task, `MessageContext` for a person's message.
 *
 * Every method that reaches the hub is a journaled step: it is written to the agent's state
 * and outbox before it is sent, resolves once the hub has acknowledged it, and is not
 * repeated when a handler is resumed after a restart (the handler runs again from the top and
 * fast-forwards through the steps it took). Call the methods one after another, not
 * concurrently: a resumed handler is matched to its journal by the order of its calls. Code
 * between calls runs again on resume, so put side effects that must happen once in `step`.
 */

import { readFileSync } from "node:fs";
import { type InvokeOptions, InvocationOutcome, type StatusCallback, checkRecordedId } from "./capabilities.js";
import { basename } from "node:path";
import {
  APPROVE,
  type Approval,
  type Choice,
  type InputAnswer,
  REJECT,
  REQUEST_CHANGES,
  type Review,
  approvalFrom,
  choiceFrom,
  choiceOptions,
  inputFrom,
  reviewFrom,
} from "./answers.js";
import { JournalMismatch, LineupError, TaskCancelled, TaskEnded, errorFromCode } from "./errors.js";
import type {
  Attachment,
  Author,
  CapabilityResultPayload,
  CapabilitySpec,
  Envelope,
  Interaction,
  InteractionResolvedPayload,
  MessageDeliveredPayload,
  Payloads,
  TaskAssignedPayload,
  TaskStatusName,
  ToolResultPayload,
} from "./generated/protocol.js";
import { deriveId, newId } from "./ids.js";
import type { StateStore, Step } from "./state.js";

/** What a context needs of the running agent. */
export interface Runtime {
  readonly agentId: string;
  readonly store: StateStore;
  readonly shuttingDown: boolean;
  makeEnvelope(type: string, payload: object, ids: { id: string; taskId?: string | null; conversationId?: string | null }): Envelope;
  outboxChanged(): void;
  waitSettled(step: Step, signal: AbortSignal): Promise<void>;
  sendLive(envelope: Envelope): boolean;
  waitAnswer(interactionId: string, signal: AbortSignal): Promise<InteractionResolvedPayload>;
  waitToolResult(callId: string, signal: AbortSignal): Promise<ToolResultPayload>;
  queryTools(): Promise<Record<string, unknown>[]>;
  withdrawToolCall(callId: string, reason: string): void;
  forgetToolCall(scope: string, callId: string): void;
  upload(name: string, content: Buffer, mimeType: string | undefined, key: string): Promise<UploadedFile>;
  queryCapabilities(taskId: string | null, conversationId: string | null): Promise<CapabilitySpec[]>;
  waitInvocation(invocationId: string, onStatus: StatusCallback | undefined, signal: AbortSignal): Promise<CapabilityResultPayload>;
}

export interface UploadedFile {
  fileId: string;
  url: string;
  name: string;
  mimeType: string;
  size: number;
}

/** A journal's steps: numbered in call order, each taken once. */
export class Journal {
  private next: number;

  constructor(
    private readonly runtime: Runtime,
    readonly scope: string,
    firstIndex = 1,
  ) {
    this.next = firstIndex;
  }

  derive(prefix: string, index: number | string): string {
    return deriveId(prefix, this.runtime.agentId, this.scope, index);
  }

  /** Take the next step index; the recorded step if this one happened before. */
  begin(kind: string, name: string): [number, Step | undefined] {
    const index = this.next++;
    const recorded = this.runtime.store.step(this.scope, index);
    if (recorded !== undefined && (recorded.kind !== kind || recorded.name !== name)) {
      throw new JournalMismatch(
        `Step ${index} of ${this.scope} was ${recorded.kind} "${recorded.name}" when it first ran, and is now ` +
          `${kind} "${name}"; the handler must repeat its steps in the same order when it is resumed.`,
      );
    }
    return [index, recorded];
  }

  /** Journal the step and queue its envelope, in one change of the state file. */
  commit(index: number, kind: string, name: string, result: unknown, envelope: Envelope | null): Step {
    const step = this.runtime.store.recordStep(
      this.scope,
      index,
      kind,
      name,
      jsonValue(result),
      envelope?.id ?? null,
      envelope ? JSON.stringify(envelope) : null,
    );
    if (envelope) this.runtime.outboxChanged();
    return step;
  }

  /** One step that sends one envelope; resolves with its result once the hub acked it. */
  async emit(kind: string, name: string, build: (index: number) => [Envelope, unknown], signal: AbortSignal): Promise<unknown> {
    let [index, recorded] = this.begin(kind, name);
    if (recorded === undefined) {
      const [envelope, result] = build(index);
      recorded = this.commit(index, kind, name, result, envelope);
    }
    await this.runtime.waitSettled(recorded, signal);
    return recorded.result;
  }
}

function jsonValue(value: unknown): unknown {
  return value === undefined ? null : (JSON.parse(JSON.stringify(value)) as unknown);
}

/** A reply of a tool of people's apps: its `message` and the whole result. */
export interface ToolReply {
  callId: string;
  name: string;
  action: string | null;
  message: string;
  data: Record<string, unknown>;
}

export interface CallOptions {
  /** The hub ends the call when this passes unanswered (an `unavailable` error). */
  timeoutMs?: number;
  /** Outside a task: your own id makes the call resumable across restarts. */
  callId?: string;
}

/** The tools of people's apps (`tool.list`, `tool.call`); inside a task, journaled steps. */
export class Tools {
  constructor(
    private readonly runtime: () => Runtime,
    private readonly where: { journal?: Journal; taskId?: string | null; conversationId?: string | null; signal?: AbortSignal },
  ) {}

  /** The tools the workspace's apps offer, or the built-in catalogue when none registered any. */
  async list(): Promise<Record<string, unknown>[]> {
    return this.runtime().queryTools();
  }

  /** Call `tool`'s `action` on the people's apps and wait for the answer (no timeout unless
   * `timeoutMs`). An error answer or a refusal rejects with the taxonomy's error. */
  async call(tool: string, action: string | null, args: Record<string, unknown> = {}, options: CallOptions = {}): Promise<ToolReply> {
    const runtime = this.runtime();
    const name = action ? `${tool}.${action}` : tool;
    let journal = this.where.journal;
    let scope: string | undefined;
    if (journal === undefined) {
      const own = options.callId ?? newId("call");
      scope = `tool:${own}`;
      journal = new Journal(runtime, scope, 0);
    }
    const signal = this.where.signal ?? new AbortController().signal;
    let [index, step] = journal.begin("tool.call", name);
    if (step === undefined) {
      const callId = scope !== undefined ? scope.slice("tool:".length) : journal.derive("call", index);
      const payload: Payloads["tool.call"] = { call_id: callId, name: tool, arguments: args };
      if (action) payload.action = action;
      if (options.timeoutMs !== undefined) payload.timeout_ms = options.timeoutMs;
      const envelope = runtime.makeEnvelope("tool.call", payload, {
        id: deriveId("evt", runtime.agentId, `tool:${callId}`, index),
        taskId: this.where.taskId ?? null,
        conversationId: this.where.conversationId ?? null,
      });
      step = journal.commit(index, "tool.call", name, { callId }, envelope);
    }
    const callId = String((step.result as { callId: string }).callId);
    let result: ToolResultPayload;
    try {
      await runtime.waitSettled(step, signal);
      result = await runtime.waitToolResult(callId, signal);
    } catch (error) {
      if (signal.aborted && !runtime.shuttingDown) runtime.withdrawToolCall(callId, "The agent stopped waiting for it.");
      throw error;
    }
    if (scope !== undefined && options.callId === undefined) runtime.forgetToolCall(scope, callId);
    if (result.error) {
      const { code, message, ...rest } = result.error;
      const details = typeof rest["details"] === "object" && rest["details"] !== null ? (rest["details"] as Record<string, unknown>) : {};
      throw errorFromCode(code, message, { call_id: callId, tool: result.name, action: result.action ?? null, ...details });
    }
    return {
      callId,
      name: result.name,
      action: result.action ?? null,
      message: result.result?.message ?? "",
      data: { ...(result.result ?? {}) },
    };
  }

  /** Offer `options` and return the one the person chose. */
  async choice(question: string, options: string[], call: CallOptions = {}): Promise<string> {
    return (await this.call("choice", "select", { question, options }, call)).message;
  }

  /** A yes/no question; true for yes. */
  async confirm(message: string, call: CallOptions = {}): Promise<boolean> {
    const reply = await this.call("confirm", null, { message }, call);
    const confirmed = reply.data["confirmed"];
    return typeof confirmed === "boolean" ? confirmed : reply.message === "yes";
  }

  /** A typed answer, optionally in a `format` (text, email, url, number, integer). */
  async input(question: string, format?: string, call: CallOptions = {}): Promise<string> {
    return (await this.call("input", null, format ? { question, format } : { question }, call)).message;
  }
}

export type StatusName = TaskStatusName;
export type RiskLevel = "low" | "medium" | "high";

export interface QuestionOptions {
  description?: string;
  why?: string;
  impact?: string;
  details?: Record<string, unknown>;
  /** When the hub gives up on the question (the wait then rejects with `InteractionExpired`).
   * Without it the question waits for the person as long as it takes. */
  expiresAt?: Date;
}

/** Characters per `message.delta` when `say` streams a finished text. */
export const DEFAULT_CHUNK = 200;
const MAX_DELTA = 16_000;

/** Shared by both contexts: replies (streamed, then recorded) and uploads. */
abstract class BaseContext {
  readonly tools: Tools;
  protected readonly journal: Journal;
  protected readonly controller = new AbortController();

  constructor(
    protected readonly runtime: Runtime,
    scope: string,
    firstIndex: number,
    readonly taskId: string | null,
    readonly conversationId: string | null,
  ) {
    this.journal = new Journal(runtime, scope, firstIndex);
    this.tools = new Tools(() => runtime, { journal: this.journal, taskId, conversationId, signal: this.controller.signal });
  }

  /** Aborted when a person cancels the task, the hub ends it, or the agent stops. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /**
   * Reply in the conversation: the text is streamed to open apps as `message.delta` pieces
   * (live only), then recorded whole as one `message.create`. `text` may be a string (sent in
   * pieces of `chunk` characters; 0: not streamed) or an async iterable of pieces (each
   * streamed as it comes). Returns the message id; a resumed handler does not say it again.
   */
  async say(text: string | AsyncIterable<string>, chunk: number = DEFAULT_CHUNK): Promise<string> {
    let [index, recorded] = this.journal.begin("message.create", "say");
    if (recorded === undefined) {
      const messageId = this.journal.derive("msg", index);
      const stream = (piece: string): void => {
        for (let start = 0; start < piece.length; start += MAX_DELTA) {
          this.runtime.sendLive(
            this.runtime.makeEnvelope(
              "message.delta",
              { messageId, delta: piece.slice(start, start + MAX_DELTA) },
              { id: newId("evt"), taskId: this.taskId, conversationId: this.conversationId },
            ),
          );
        }
      };
      let content = "";
      if (typeof text === "string") {
        content = text;
        if (chunk > 0) for (let start = 0; start < text.length; start += chunk) stream(text.slice(start, start + chunk));
      } else {
        for await (const piece of text) {
          if (!piece) continue;
          content += piece;
          stream(piece);
        }
      }
      const envelope = this.runtime.makeEnvelope(
        "message.create",
        { content, messageId },
        { id: this.journal.derive("evt", index), taskId: this.taskId, conversationId: this.conversationId },
      );
      recorded = this.journal.commit(index, "message.create", "say", messageId, envelope);
    }
    await this.runtime.waitSettled(recorded, this.controller.signal);
    return String(recorded.result);
  }

  /** Store a file in the hub (bytes, or a path to read); its `url` is what people open. */
  async upload(name: string, content: Buffer | string, mimeType?: string): Promise<UploadedFile> {
    const [index, recorded] = this.journal.begin("upload", name);
    if (recorded !== undefined) return recorded.result as UploadedFile;
    const data = typeof content === "string" ? readFileSync(content) : content;
    const uploaded = await this.runtime.upload(name, data, mimeType, this.journal.derive("upl", index));
    this.journal.commit(index, "upload", name, uploaded, null);
    return uploaded;
  }

  /** The capabilities policy grants this agent here: in a project's conversation what the
   * project allows, in a personal one reads only. A query, not a step. */
  async capabilities(): Promise<CapabilitySpec[]> {
    return this.runtime.queryCapabilities(this.taskId, this.conversationId);
  }

  /** Invoke a governed capability here and wait for its terminal status (across reconnects and
   * restarts); a write waits for a person's approval first. */
  async invoke(capability: string, params: Record<string, unknown> = {}, options: InvokeOptions = {}): Promise<InvocationOutcome> {
    if (this.controller.signal.aborted) throw this.controller.signal.reason;
    let [index, step] = this.journal.begin("capability.invoke", capability);
    if (step === undefined) {
      const invocationId = options.invocationId ?? this.journal.derive("inv", index);
      const payload: Record<string, unknown> = { invocationId, capability, params };
      if (options.instance !== undefined) payload["instance"] = options.instance;
      const envelope = this.runtime.makeEnvelope("capability.invoke", payload, {
        id: this.journal.derive("evt", index),
        taskId: this.taskId,
        conversationId: this.conversationId,
      });
      step = this.journal.commit(index, "capability.invoke", capability, { invocationId, keep: options.invocationId !== undefined }, envelope);
    }
    const recorded = String((step.result as { invocationId: string }).invocationId);
    checkRecordedId(recorded, options.invocationId, `Step ${index} of ${this.journal.scope}`);
    await this.runtime.waitSettled(step, this.controller.signal);
    return new InvocationOutcome(await this.runtime.waitInvocation(recorded, options.onStatus, this.controller.signal));
  }
}

/**
 * One task given to this agent. A person's cancel aborts `signal`: the pending context call
 * rejects with `TaskCancelled` and the task is reported `cancelled` when the handler returns
 * or throws. When the hub ended the task itself (a cancel not confirmed in time) the call
 * rejects with `TaskEnded` and nothing more is reported.
 */
export class TaskContext extends BaseContext {
  override readonly taskId: string;
  readonly title: string;
  readonly description: string | null;
  readonly parentTaskId: string | null;
  readonly conversationTitle: string | null;
  readonly messages: Record<string, unknown>[];
  cancelReason: string | null = null;
  endedByHub: string | null = null;

  constructor(runtime: Runtime, envelope: Envelope, assigned: TaskAssignedPayload) {
    super(runtime, assigned.taskId, 0, assigned.taskId, envelope.conversationId ?? null);
    this.taskId = assigned.taskId;
    this.title = assigned.title;
    this.description = assigned.description ?? null;
    this.parentTaskId = assigned.parentTaskId ?? null;
    this.conversationTitle = assigned.conversationTitle ?? null;
    this.messages = [...(assigned.messages ?? [])];
  }

  get cancelled(): boolean {
    return this.controller.signal.aborted && this.endedByHub === null && this.controller.signal.reason instanceof TaskCancelled;
  }

  /** Report progress (0–100) and optionally one short sentence of status. */
  async progress(percent: number, summary?: string): Promise<void> {
    const payload: Payloads["task.status_changed"] = { status: "running", progress: percent };
    if (summary !== undefined) payload.summary = summary;
    await this.send("progress", "task.status_changed", () => [payload, null]);
  }

  /** Show a child task under this one; returns its id (for `childStatus`). */
  async child(title: string, status: StatusName = "running"): Promise<string> {
    return String(
      await this.send("child", "task.child_created", () => {
        const childTaskId = newId("task");
        return [{ parentTaskId: this.taskId, title, status, childTaskId }, childTaskId];
      }),
    );
  }

  /** Report a child task's status or progress (`error` only with `failed`). */
  async childStatus(childId: string, status: StatusName, report: { progress?: number; summary?: string; error?: string } = {}): Promise<void> {
    const payload: Payloads["task.status_changed"] = { status, ...report };
    await this.send("child_status", "task.status_changed", () => [payload, null], childId);
  }

  /** Report a link, file or result; returns the artifact id. `url` is http(s) or a hub file. */
  async artifact(name: string, url: string, extra: { mimeType?: string; summary?: string } = {}): Promise<string> {
    return String(
      await this.send("artifact", "artifact.created", () => {
        const artifactId = newId("art");
        return [{ name, url, artifactId, ...extra }, artifactId];
      }),
    );
  }

  /** Upload a file and report it as an artifact of the task (two journaled steps). */
  async uploadArtifact(name: string, content: Buffer | string, extra: { fileName?: string; mimeType?: string; summary?: string } = {}): Promise<string> {
    const storedAs = extra.fileName ?? (typeof content === "string" ? basename(content) : name);
    const uploaded = await this.upload(storedAs, content, extra.mimeType);
    const artifact: { mimeType: string; summary?: string } = { mimeType: uploaded.mimeType.split(";")[0] ?? uploaded.mimeType };
    if (extra.summary !== undefined) artifact.summary = extra.summary;
    return this.artifact(name, uploaded.url, artifact);
  }

  /** Run `fn` once for this task, even across restarts; its (JSON) result is journaled. If the
   * agent stops while `fn` runs, `fn` runs again on resume: make it safe to repeat. */
  async step<T>(name: string, fn: () => T | Promise<T>): Promise<T> {
    this.raiseIfStopped();
    const [index, recorded] = this.journal.begin("step", name);
    if (recorded !== undefined) return recorded.result as T;
    const value = jsonValue(await fn()) as T;
    this.journal.commit(index, "step", name, value, null);
    return value;
  }

  /** Ask a person to approve or reject; wait (across reconnects and restarts) for them. */
  async askApproval(
    title: string,
    options: QuestionOptions & { risk?: RiskLevel; approveLabel?: string; rejectLabel?: string } = {},
  ): Promise<Approval> {
    const { risk = "medium", approveLabel = "Approve", rejectLabel = "Reject", ...rest } = options;
    const resolved = await this.ask("approval", {
      type: "approval",
      title,
      risk,
      options: [
        { id: APPROVE, label: approveLabel, style: "primary" },
        { id: REJECT, label: rejectLabel, style: "danger" },
      ],
      ...question(rest),
    }, rest.expiresAt);
    return approvalFrom(resolved);
  }

  /** Offer 2–5 options (labels, or [id, label] pairs) and wait for the pick. */
  async askChoice(
    title: string,
    choices: (string | [string, string])[],
    options: QuestionOptions & { recommended?: string; allowOther?: boolean; multiple?: boolean } = {},
  ): Promise<Choice> {
    const { recommended, allowOther = false, multiple = false, ...rest } = options;
    const built = choiceOptions(choices, recommended);
    const resolved = await this.ask("choice", { type: "choice", title, options: built, allowOther, multiple, ...question(rest) }, rest.expiresAt);
    return choiceFrom(resolved, built);
  }

  /** Ask for a piece of text (optionally an email, URL or number, or matching `pattern`). */
  async askInput(
    title: string,
    options: Omit<QuestionOptions, "impact"> & { format?: Interaction["format"]; pattern?: string; placeholder?: string } = {},
  ): Promise<InputAnswer> {
    const { format, pattern, placeholder, ...rest } = options;
    const fields: Partial<Interaction> = { type: "input", title, ...question(rest) };
    if (format) fields.format = format;
    if (pattern !== undefined) fields.pattern = pattern;
    if (placeholder !== undefined) fields.placeholder = placeholder;
    return inputFrom(await this.ask("input", fields, rest.expiresAt));
  }

  /** Show `content` (a plan, a diff) and/or attachments for review; wait for approval or a
   * request for changes with a comment. */
  async askReview(
    title: string,
    options: Omit<QuestionOptions, "impact"> & { content?: string; attachments?: Attachment[] } = {},
  ): Promise<Review> {
    const { content, attachments, ...rest } = options;
    const fields: Partial<Interaction> = {
      type: "review",
      title,
      options: [
        { id: APPROVE, label: "Approve", style: "primary" },
        { id: REQUEST_CHANGES, label: "Request changes" },
      ],
      ...question(rest),
    };
    if (content !== undefined) fields.content = content;
    if (attachments?.length) fields.attachments = attachments;
    return reviewFrom(await this.ask("review", fields, rest.expiresAt));
  }

  /** @internal task.accepted, the first step of every task. */
  async accept(): Promise<void> {
    await this.send("accept", "task.accepted", () => [{ taskId: this.taskId }, null]);
  }

  /** @internal a person asked to stop the task. */
  requestCancel(reason: string | null): void {
    this.cancelReason = this.cancelReason ?? reason;
    if (!this.controller.signal.aborted) this.controller.abort(new TaskCancelled(this.taskId, `Task ${this.taskId} was cancelled${reason ? `: ${reason}` : "."}`));
  }

  /** @internal the hub ended the task itself. */
  endByHub(cause: string): void {
    this.endedByHub = cause;
    if (!this.controller.signal.aborted) this.controller.abort(new TaskEnded(this.taskId, cause));
  }

  /** @internal the agent is stopping: the task resumes when it starts again. */
  shutDown(): void {
    if (!this.controller.signal.aborted) this.controller.abort(new LineupError("unavailable", "The agent is stopping."));
  }

  private raiseIfStopped(): void {
    if (this.controller.signal.aborted) throw this.controller.signal.reason;
  }

  private async send(op: string, type: string, make: (index: number) => [object, unknown], taskId?: string): Promise<unknown> {
    this.raiseIfStopped();
    return this.journal.emit(
      type,
      op,
      (index) => {
        const [payload, result] = make(index);
        const envelope = this.runtime.makeEnvelope(type, payload, {
          id: this.journal.derive("evt", index),
          taskId: taskId ?? this.taskId,
          conversationId: this.conversationId,
        });
        return [envelope, result];
      },
      this.controller.signal,
    );
  }

  private async ask(op: string, fields: Partial<Interaction>, expiresAt: Date | undefined): Promise<InteractionResolvedPayload> {
    const recorded = (await this.send(op, "interaction.requested", (index) => {
      const interaction = { ...fields, id: this.journal.derive("int", index) } as Interaction;
      if (expiresAt) interaction.expiresAt = expiresAt.toISOString();
      return [{ interaction }, { interactionId: interaction.id, expiresAt: interaction.expiresAt ?? null }];
    })) as { interactionId: string; expiresAt: string | null };
    return this.runtime.waitAnswer(recorded.interactionId, this.controller.signal);
  }
}

function question(options: QuestionOptions): Partial<Interaction> {
  const fields: Partial<Interaction> = {};
  if (options.description !== undefined) fields.description = options.description;
  if (options.why !== undefined) fields.why = options.why;
  if (options.impact !== undefined) fields.impact = options.impact;
  if (options.details !== undefined) fields.details = options.details;
  return fields;
}

/** A person's message for this agent, with a way to reply (`say`). */
export class MessageContext extends BaseContext {
  readonly messageId: string;
  readonly content: string;
  readonly author: Author;
  readonly steer: boolean;
  readonly attachments: Attachment[];

  constructor(runtime: Runtime, envelope: Envelope, delivered: MessageDeliveredPayload) {
    super(runtime, `message:${delivered.messageId}`, 1, delivered.taskId ?? envelope.taskId ?? null, envelope.conversationId ?? null);
    this.messageId = delivered.messageId;
    this.content = delivered.content;
    this.author = delivered.author;
    this.steer = delivered.steer ?? false;
    this.attachments = [...(delivered.attachments ?? [])];
  }

  /** @internal the agent is stopping. */
  shutDown(): void {
    if (!this.controller.signal.aborted) this.controller.abort(new LineupError("unavailable", "The agent is stopping."));
  }
}
