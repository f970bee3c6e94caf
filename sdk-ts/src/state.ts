/**
 * The agent's durable memory: one append-only journal file (JSON lines) in the state
 * directory. Every change that belongs together is one line, written and fsync'd before the
 * call returns, so a crash keeps it whole or not at all (a torn last line is a change that
 * never finished, and is skipped on reading). On open the file is rewritten compactly from
 * what it holds.
 *
 * It holds what the Python SDK's SQLite file holds:
 * - the **outbox**: every uplink envelope, written before it is sent and removed when the hub
 *   answers it; resent in its original order, with the same ids, after a reconnect or restart;
 * - the **cursor**: the last downlink sequence handled, sent as `lastSequence` in the hello;
 * - the **jobs**: each `task.assigned` (and `message.delivered`) as it arrived, so unfinished
 *   handlers are resumed at start;
 * - the **journal**: the steps each handler took, with their results, so a resumed handler
 *   fast-forwards instead of acting twice; and the **answers** that arrived for it.
 */

import { chmodSync, closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from "node:fs";
import { dirname } from "node:path";

export type StepStatus = "pending" | "acked" | "failed" | "done";
export type JobKind = "task" | "message";

export interface Job {
  scope: string;
  kind: JobKind;
  frame: string;
  done: boolean;
  outcome?: string;
  cancelRequested: boolean;
  cancelReason?: string | null;
}

export interface Step {
  scope: string;
  index: number;
  kind: string;
  name: string;
  result: unknown;
  envelopeId: string | null;
  status: StepStatus;
  sequence?: number | null;
  error?: Record<string, unknown> | null;
}

export interface OutboxEntry {
  seq: number;
  envelopeId: string;
  frame: string;
  scope: string | null;
  step: number | null;
}

type Op =
  | { op: "agent"; agentId: string }
  | { op: "cursor"; sequence: number; exact?: boolean }
  | { op: "enqueue"; entry: OutboxEntry }
  | { op: "dequeue"; envelopeId: string }
  | { op: "job"; job: Job }
  | { op: "step"; step: Step }
  | { op: "forgetSteps"; scope: string }
  | { op: "answer"; key: string; value: string }
  | { op: "forgetAnswer"; key: string };

export const STATE_FILE_NAME = "lineup-agent.jsonl";

export class StateStore {
  readonly path: string;
  private fd: number;
  private agentId: string | undefined;
  private cursorValue = 0;
  private nextSeq = 1;
  private readonly outbox = new Map<string, OutboxEntry>();
  private readonly jobs = new Map<string, Job>();
  private readonly steps = new Map<string, Step>();
  private readonly answers = new Map<string, string>();

  constructor(path: string, agentId: string) {
    this.path = path;
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    if (existsSync(path)) {
      const lines = readFileSync(path, "utf-8").split("\n");
      for (const [number, line] of lines.entries()) {
        if (!line.trim()) continue;
        let ops: Op[];
        try {
          ops = JSON.parse(line) as Op[];
        } catch (error) {
          if (number >= lines.length - 2) break; // the torn last change: it never finished
          throw new Error(`The agent state ${path} is damaged at line ${number + 1}: ${String(error)}`);
        }
        for (const op of ops) this.apply(op);
      }
    }
    if (this.agentId !== undefined && this.agentId !== agentId) {
      throw new Error(`The state in ${path} belongs to agent ${this.agentId}, not ${agentId}; give each agent its own stateDir.`);
    }
    this.agentId = agentId;
    this.fd = this.compact();
  }

  close(): void {
    closeSync(this.fd);
  }

  // --- cursor ---------------------------------------------------------------------------

  get cursor(): number {
    return this.cursorValue;
  }

  /** Move the cursor forward to `sequence` (never back). */
  advance(sequence: number | null | undefined): void {
    if (sequence != null && sequence > this.cursorValue) this.commit([{ op: "cursor", sequence }]);
  }

  /** Set the cursor exactly, forward or back (after `system.resync_required`). */
  resetCursor(sequence: number): void {
    this.commit([{ op: "cursor", sequence, exact: true }]);
  }

  private cursorOp(sequence: number | null | undefined): Op[] {
    return sequence != null && sequence > this.cursorValue ? [{ op: "cursor", sequence }] : [];
  }

  // --- jobs -----------------------------------------------------------------------------

  /** Journal a task or message as it arrives and move the cursor; false if known. */
  rememberJob(sequence: number | null | undefined, scope: string, kind: JobKind, frame: string): boolean {
    const known = this.jobs.has(scope);
    const ops: Op[] = known ? [] : [{ op: "job", job: { scope, kind, frame, done: false, cancelRequested: false } }];
    this.commit([...ops, ...this.cursorOp(sequence)]);
    return !known;
  }

  /** Flag a pending task as cancel-requested and move the cursor; false if not pending. */
  requestCancel(sequence: number | null | undefined, scope: string, reason: string | null | undefined): boolean {
    const job = this.jobs.get(scope);
    const pending = job !== undefined && !job.done;
    const ops: Op[] = pending
      ? [{ op: "job", job: { ...job, cancelRequested: true, cancelReason: job.cancelReason ?? reason ?? null } }]
      : [];
    this.commit([...ops, ...this.cursorOp(sequence)]);
    return pending;
  }

  job(scope: string): Job | undefined {
    return this.jobs.get(scope);
  }

  pendingJobs(): Job[] {
    return [...this.jobs.values()].filter((job) => !job.done);
  }

  /** Mark a job done and, in the same change, queue its final report (if any). A done job is
   * never run again, so its journal and answers go; the job stays (without its frame) so a
   * replayed assignment is recognised. */
  finishJob(scope: string, outcome: string, envelopeId?: string, frame?: string): void {
    const ops = this.finishOps(scope, outcome);
    if (envelopeId !== undefined && frame !== undefined) ops.push(this.enqueueOp(envelopeId, frame, null, null));
    this.commit(ops);
  }

  /** The hub ended a task itself: done without a report, what is queued for it dropped (the
   * hub would refuse each), the cursor moved. Says how many queued envelopes were dropped. */
  endJob(sequence: number | null | undefined, scope: string, outcome: string, finalReportId: string): number {
    const ops: Op[] = [];
    for (const entry of this.outbox.values()) {
      if (entry.scope === scope || entry.envelopeId === finalReportId) ops.push({ op: "dequeue", envelopeId: entry.envelopeId });
    }
    const dropped = ops.length;
    const job = this.jobs.get(scope);
    if (job !== undefined && !job.done) ops.push(...this.finishOps(scope, outcome));
    this.commit([...ops, ...this.cursorOp(sequence)]);
    return dropped;
  }

  private finishOps(scope: string, outcome: string): Op[] {
    const ops: Op[] = [];
    for (const step of this.steps.values()) {
      if (step.scope !== scope) continue;
      const result = step.result as Record<string, unknown> | null;
      if (step.kind === "interaction.requested" && typeof result?.["interactionId"] === "string") {
        const id = result["interactionId"];
        ops.push(...[id, `expired:${id}`, `withdrawn:${id}`].map((key): Op => ({ op: "forgetAnswer", key })));
      } else if (step.kind === "tool.call" && typeof result?.["callId"] === "string") {
        const id = result["callId"];
        ops.push(...[`tool:${id}`, `withdrawn:${id}`].map((key): Op => ({ op: "forgetAnswer", key })));
      } else if (step.kind === "capability.invoke" && typeof result?.["invocationId"] === "string" && !result["keep"]) {
        // unless the handler named the invocation: a later invoke with that id finds it here
        const key = `cap:${result["invocationId"]}`;
        ops.push(...[key, `${key}:waiting_for_approval`, `${key}:accepted`].map((k): Op => ({ op: "forgetAnswer", key: k })));
      }
    }
    ops.push({ op: "forgetSteps", scope });
    const job = this.jobs.get(scope);
    if (job !== undefined) ops.push({ op: "job", job: { ...job, done: true, outcome, frame: "" } });
    return ops;
  }

  // --- journal --------------------------------------------------------------------------

  step(scope: string, index: number): Step | undefined {
    return this.steps.get(stepKey(scope, index));
  }

  /** Journal a step and, in the same change, queue its envelope (if it has one). */
  recordStep(scope: string, index: number, kind: string, name: string, result: unknown, envelopeId: string | null, frame: string | null): Step {
    const step: Step = { scope, index, kind, name, result, envelopeId, status: envelopeId !== null ? "pending" : "done" };
    const ops: Op[] = [{ op: "step", step }];
    if (envelopeId !== null && frame !== null) ops.push(this.enqueueOp(envelopeId, frame, scope, index));
    this.commit(ops);
    return step;
  }

  // --- answers --------------------------------------------------------------------------

  /** Keep an answer (the first one wins) and move the cursor; false if one was kept already. */
  rememberAnswer(sequence: number | null | undefined, key: string, value: string): boolean {
    const known = this.answers.has(key);
    this.commit([...(known ? [] : [{ op: "answer", key, value } as Op]), ...this.cursorOp(sequence)]);
    return !known;
  }

  answer(key: string): string | undefined {
    return this.answers.get(key);
  }

  /** Drop a finished scope's steps and answers (an agent-level tool call, once used). */
  forget(scope: string, answerKeys: string[]): void {
    this.commit([{ op: "forgetSteps", scope }, ...answerKeys.map((key): Op => ({ op: "forgetAnswer", key }))]);
  }

  // --- outbox ---------------------------------------------------------------------------

  /** Queue an envelope that belongs to no journal step (`tool.cancel`). */
  enqueue(envelopeId: string, frame: string): void {
    if (!this.outbox.has(envelopeId)) this.commit([this.enqueueOp(envelopeId, frame, null, null)]);
  }

  private enqueueOp(envelopeId: string, frame: string, scope: string | null, step: number | null): Op {
    return { op: "enqueue", entry: { seq: this.nextSeq, envelopeId, frame, scope, step } };
  }

  /** The oldest envelope the hub has not answered yet. */
  firstUnsent(): OutboxEntry | undefined {
    let first: OutboxEntry | undefined;
    for (const entry of this.outbox.values()) if (first === undefined || entry.seq < first.seq) first = entry;
    return first;
  }

  get outboxSize(): number {
    return this.outbox.size;
  }

  /** The hub answered `entry`: drop it from the outbox and record the outcome in its step. */
  settle(entry: OutboxEntry, outcome: { sequence?: number | null; error?: Record<string, unknown> }): void {
    const ops: Op[] = [{ op: "dequeue", envelopeId: entry.envelopeId }];
    if (entry.scope !== null && entry.step !== null) {
      const step = this.step(entry.scope, entry.step);
      if (step !== undefined) {
        ops.push({
          op: "step",
          step: {
            ...step,
            status: outcome.error !== undefined ? "failed" : "acked",
            sequence: outcome.sequence ?? null,
            error: outcome.error ?? null,
          },
        });
      }
    }
    this.commit(ops);
  }

  // --- the file -------------------------------------------------------------------------

  private commit(ops: Op[]): void {
    if (ops.length === 0) return;
    for (const op of ops) this.apply(op);
    writeSync(this.fd, `${JSON.stringify(ops)}\n`);
    fsyncSync(this.fd);
  }

  private apply(op: Op): void {
    switch (op.op) {
      case "agent":
        this.agentId = op.agentId;
        break;
      case "cursor":
        if (op.exact || op.sequence > this.cursorValue) this.cursorValue = op.sequence;
        break;
      case "enqueue":
        if (!this.outbox.has(op.entry.envelopeId)) {
          this.outbox.set(op.entry.envelopeId, op.entry);
          this.nextSeq = Math.max(this.nextSeq, op.entry.seq + 1);
        }
        break;
      case "dequeue":
        this.outbox.delete(op.envelopeId);
        break;
      case "job":
        this.jobs.set(op.job.scope, op.job);
        break;
      case "step":
        this.steps.set(stepKey(op.step.scope, op.step.index), op.step);
        break;
      case "forgetSteps":
        for (const [key, step] of this.steps) if (step.scope === op.scope) this.steps.delete(key);
        break;
      case "answer":
        if (!this.answers.has(op.key)) this.answers.set(op.key, op.value);
        break;
      case "forgetAnswer":
        this.answers.delete(op.key);
        break;
    }
  }

  /** Rewrite the file from what it holds (one line), atomically; returns the open file. */
  private compact(): number {
    const ops: Op[] = [{ op: "agent", agentId: this.agentId ?? "" }, { op: "cursor", sequence: this.cursorValue, exact: true }];
    for (const entry of [...this.outbox.values()].sort((a, b) => a.seq - b.seq)) ops.push({ op: "enqueue", entry });
    for (const job of this.jobs.values()) ops.push({ op: "job", job });
    for (const step of this.steps.values()) ops.push({ op: "step", step });
    for (const [key, value] of this.answers) ops.push({ op: "answer", key, value });
    const temporary = `${this.path}.tmp`;
    const out = openSync(temporary, "w", 0o600);
    try {
      writeSync(out, `${JSON.stringify(ops)}\n`);
      fsyncSync(out);
    } finally {
      closeSync(out);
    }
    renameSync(temporary, this.path);
    const directory = openSync(dirname(this.path), "r");
    try {
      fsyncSync(directory);
    } finally {
      closeSync(directory);
    }
    chmodSync(this.path, 0o600);
    return openSync(this.path, "a", 0o600);
  }
}

function stepKey(scope: string, index: number): string {
  return `${scope}\x1f${index}`;
}
