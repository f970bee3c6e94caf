/**
 * One error tree, the protocol's taxonomy (docs/protocol.md §4, §7.1):
 *
 *     LineupError (code: invalid_argument | unauthenticated | forbidden | not_found |
 *                  conflict | rate_limited | unavailable | unknown_result)
 *     ├── PairingFailed            the hub would not redeem a pairing code
 *     ├── ConnectionRefusedByHub   the hub refused the credential: final, never retried
 *     ├── InsecureConnection       a plain-text address that is not this machine
 *     ├── InteractionExpired       nobody answered before the interaction's expiresAt
 *     ├── RequestWithdrawn         the hub withdrew a question or tool call (its task is cancelled)
 *     ├── TaskCancelled            a person asked to stop the task
 *     │   └── TaskEnded            the hub ended the task itself (cause: cancel_timeout)
 *     └── JournalMismatch          a resumed handler took other steps than when it first ran
 *
 * Only `rate_limited` and `unavailable` are retryable.
 */

export type ErrorCodeName =
  | "invalid_argument"
  | "unauthenticated"
  | "forbidden"
  | "not_found"
  | "conflict"
  | "rate_limited"
  | "unavailable"
  | "unknown_result";

const RETRYABLE: ReadonlySet<string> = new Set(["rate_limited", "unavailable"]);

export class LineupError extends Error {
  readonly code: string;
  readonly details: Record<string, unknown>;

  constructor(code: string, message: string, details: Record<string, unknown> = {}) {
    super(message);
    this.name = new.target.name;
    this.code = code;
    this.details = details;
  }

  get retryable(): boolean {
    return RETRYABLE.has(this.code);
  }
}

export class PairingFailed extends LineupError {
  get diagnostic(): string | undefined {
    const value = this.details["diagnostic"];
    return typeof value === "string" ? value : undefined;
  }

  get nextStep(): string | undefined {
    const value = this.details["nextStep"];
    return typeof value === "string" ? value : undefined;
  }

  /** Milliseconds to wait before trying again (`rate_limited` only). */
  get retryAfterMs(): number | undefined {
    const value = this.details["retryAfterMs"];
    return typeof value === "number" ? value : undefined;
  }
}

export class ConnectionRefusedByHub extends LineupError {
  readonly closeCode: number | undefined;

  constructor(code: string, message: string, details: Record<string, unknown> = {}, closeCode?: number) {
    super(code, message, details);
    this.closeCode = closeCode;
  }
}

export class InsecureConnection extends LineupError {
  /** `plain_text`, `fingerprint_mismatch` or `untrusted_certificate`: all final. */
  readonly reason: string;

  constructor(message: string, reason = "plain_text") {
    super("invalid_argument", message, { reason });
    this.reason = reason;
  }
}

export class InteractionExpired extends LineupError {
  readonly interactionId: string;
  readonly expiresAt: Date;

  constructor(interactionId: string, expiresAt: Date) {
    super("unavailable", `Nobody answered interaction ${interactionId} before ${expiresAt.toISOString()}.`, {
      interactionId,
    });
    this.interactionId = interactionId;
    this.expiresAt = expiresAt;
  }
}

export class RequestWithdrawn extends LineupError {
  readonly requestId: string;
  readonly reason: string | undefined;

  constructor(requestId: string, reason?: string) {
    super("conflict", `The hub withdrew request ${requestId}${reason ? `: ${reason}` : "."}`, {
      reason: "cancelled",
      requestId,
    });
    this.requestId = requestId;
    this.reason = reason;
  }
}

export class TaskCancelled extends LineupError {
  readonly taskId: string;

  constructor(taskId: string, message?: string) {
    super("conflict", message ?? `Task ${taskId} was cancelled.`, { reason: "cancelled", taskId });
    this.taskId = taskId;
  }
}

export class TaskEnded extends TaskCancelled {
  readonly cause: string;

  constructor(taskId: string, cause: string) {
    super(taskId, `The hub ended task ${taskId} itself (${cause}).`);
    this.cause = cause;
  }
}

export class JournalMismatch extends LineupError {
  constructor(message: string) {
    super("invalid_argument", message);
  }
}

/** The class of the taxonomy a code names (a code it does not know stays a LineupError). */
export function errorFromCode(code: string, message: string, details?: Record<string, unknown> | null): LineupError {
  return new LineupError(code, message, details ?? {});
}

/** A report the hub refused because the task had ended (it will never take one again). */
export function refusedAsEnded(error: unknown): boolean {
  return error instanceof LineupError && error.code === "conflict" && error.details["reason"] === "task_ended";
}
