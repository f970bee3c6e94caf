/**
 * Governed capabilities (docs/protocol.md §9): an agent reaches an outside system only through
 * the hub's core, which checks policy and, for a write, waits for a person's approval bound to
 * exactly what was shown.
 *
 * An invocation is a journaled step like a question: the `capability.invoke` goes through the
 * outbox, and each status the hub sends back (`capability.result`) is kept in the state file
 * as it arrives, so a handler resumed after a restart finds the outcome, hears the statuses it
 * passed through again in order (`onStatus`), and runs nothing twice. A refusal of the invoke
 * itself rejects at once; a terminal `failed`, `rejected` or `unknown_result` is an outcome.
 */

import { JournalMismatch, LineupError, errorFromCode } from "./errors.js";
import type { CapabilityResultPayload, CapabilitySpec, InvocationStatus } from "./generated/protocol.js";

export const TERMINAL: ReadonlySet<InvocationStatus> = new Set(["succeeded", "failed", "rejected", "unknown_result"]);
/** The statuses an invocation may pass through before its end, in the order they come. */
export const PASSING: readonly InvocationStatus[] = ["waiting_for_approval", "accepted"];

const FALLBACK_CODES: Partial<Record<InvocationStatus, string>> = {
  failed: "unavailable",
  rejected: "forbidden",
  unknown_result: "unknown_result",
};

/** Where an invocation is: `status` and what came with it. */
export class InvocationOutcome {
  readonly invocationId: string;
  readonly capability: string;
  readonly status: InvocationStatus;
  readonly output: Record<string, unknown> | null;
  readonly error: { code: string; message: string; retryable?: boolean } | null;
  readonly executionId: string | null;
  readonly approvalId: string | null;
  readonly receipt: Record<string, unknown> | null;

  constructor(result: CapabilityResultPayload) {
    this.invocationId = result.invocationId;
    this.capability = result.capability;
    this.status = result.status;
    this.output = (result.output as Record<string, unknown> | null | undefined) ?? null;
    this.error = result.error ? { ...result.error } : null;
    this.executionId = result.executionId ?? null;
    this.approvalId = result.approvalId ?? null;
    this.receipt = (result.receipt as Record<string, unknown> | null | undefined) ?? null;
  }

  get succeeded(): boolean {
    return this.status === "succeeded";
  }

  /** `this`, unless it ended failed, rejected or unknown_result: then the taxonomy's error
   * (`forbidden` for a person's rejection, `conflict` for a voided approval, …) is thrown. */
  raiseForStatus(): this {
    const fallback = FALLBACK_CODES[this.status];
    if (fallback === undefined) return this;
    const details: Record<string, unknown> = { invocationId: this.invocationId, capability: this.capability, status: this.status };
    if (this.executionId) details["executionId"] = this.executionId;
    if (this.approvalId) details["approvalId"] = this.approvalId;
    throw errorFromCode(this.error?.code ?? fallback, this.error?.message ?? `${this.capability} ended ${this.status}.`, details);
  }
}

export type StatusCallback = (outcome: InvocationOutcome) => void | Promise<void>;

export interface InvokeOptions {
  /** Which of the provider's instances; may be left out when it has one. */
  instance?: string;
  /** Yours to give when the invocation must be recognised beyond this handler's journal. */
  invocationId?: string;
  /** Hears `waiting_for_approval` and `accepted`. */
  onStatus?: StatusCallback;
}

export function checkRecordedId(recorded: string, given: string | undefined, where: string): void {
  if (given !== undefined && given !== recorded) {
    throw new JournalMismatch(`${where} invoked as ${recorded} when it first ran, and now as ${given}.`);
  }
}

export type { CapabilitySpec };
export { LineupError };
