// How governed actions read on screen: an approval's and an execution's state as icon + words,
// a failure's error class and whether it is worth retrying, and values with anything that
// looks like a secret hidden (the hub keeps credentials to itself; this is a second fence).

import type { Approval, ApprovalStatus, ExecutionStatus, HubEvent } from "../../api/types";
import type { IconName, Tone } from "../../ui";
import { isoOf } from "../../lib/time";

export interface StatusLook {
  tone: Tone;
  icon: IconName;
  label: string;
}

export const APPROVAL_STATUS: Record<ApprovalStatus, StatusLook> = {
  pending: { tone: "waiting", icon: "hand", label: "Waiting for approval" },
  approved: { tone: "success", icon: "checkCircle", label: "Approved" },
  rejected: { tone: "danger", icon: "xCircle", label: "Rejected" },
  expired: { tone: "neutral", icon: "clock", label: "Expired" },
  voided: { tone: "neutral", icon: "stopCircle", label: "Voided" },
};

export const EXECUTION_STATUS: Record<ExecutionStatus, StatusLook> = {
  started: { tone: "neutral", icon: "clock", label: "Queued" },
  accepted: { tone: "running", icon: "running", label: "Running" },
  succeeded: { tone: "success", icon: "checkCircle", label: "Done" },
  failed: { tone: "danger", icon: "xCircle", label: "Failed" },
  unknown_result: { tone: "waiting", icon: "alert", label: "Unknown result" },
};

export function approvalLook(status: string): StatusLook {
  return APPROVAL_STATUS[status as ApprovalStatus] ?? { tone: "neutral", icon: "circle", label: status };
}

export function executionLook(status: string): StatusLook {
  return EXECUTION_STATUS[status as ExecutionStatus] ?? { tone: "neutral", icon: "circle", label: status };
}

/** `{code, message, retryable}` of a failed execution, read defensively. */
export interface RunError {
  code: string;
  message: string;
  retryable: boolean;
}

export function runError(value: Record<string, unknown> | null | undefined): RunError | null {
  if (!value) return null;
  const code = typeof value.code === "string" ? value.code : "error";
  const message = typeof value.message === "string" ? value.message : "";
  return { code, message, retryable: value.retryable === true };
}

// credentials, and the hub's own keys (an idempotency key is how the hub talks to a system,
// not something a person acts on)
const SECRET_KEY = /(token|secret|password|passwd|credential|authorization|api[-_]?key|cookie|private[-_]?key|idempotency)/i;
export const HIDDEN = "••• hidden";

/** The value with every field whose name looks like a secret replaced, at any depth. */
export function redact(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redact);
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      out[k] = SECRET_KEY.test(k) ? HIDDEN : redact(v);
    }
    return out;
  }
  return value;
}

export function pretty(value: unknown): string {
  return JSON.stringify(redact(value), null, 2);
}

/** A short digest for a row: `sha256:1a2b3c4d…`; the whole one goes in a title. */
export function shortDigest(digest: string | null | undefined): string {
  if (!digest) return "—";
  const [algo, hex] = digest.includes(":") ? digest.split(":", 2) : ["", digest];
  return `${algo ? `${algo}:` : ""}${(hex ?? "").slice(0, 12)}…`;
}

/** A one-line value for a parameter summary. */
export function shortValue(value: unknown): string {
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (value === null || value === undefined) return "—";
  const text = JSON.stringify(value);
  return text.length > 80 ? `${text.slice(0, 77)}…` : text;
}

const DECIDED: Record<string, ApprovalStatus> = {
  approved: "approved",
  rejected: "rejected",
  expired: "expired",
  voided: "voided",
};

/** The approval after a recorded event about it (decided elsewhere, expired, voided, handed
 * over), or null when the event is about something else. */
export function applyApprovalEvent(current: Approval, event: HubEvent): Approval | null {
  if (event.type === "approval.decided" && event.payload.approvalId === current.id) {
    const p = event.payload;
    return {
      ...current,
      status: DECIDED[p.decision] ?? current.status,
      decidedBy: p.by ?? current.decidedBy,
      decidedByName: p.byName ?? current.decidedByName,
      decidedAt: current.decidedAt ?? event.occurredAt,
      reason: p.reason ?? current.reason,
      permissionId: p.permissionId ?? current.permissionId,
    };
  }
  if (event.type === "approval.handed_over" && event.payload.approvalId === current.id) {
    return { ...current, assignee: event.payload.assignee };
  }
  if (event.type === "execution.started" && event.payload.invocationId === current.invocationId) {
    return { ...current, executionId: event.payload.executionId };
  }
  return null;
}

/** Whether an event changes what the approval center or a governed timeline shows. */
export function touchesGovernance(event: HubEvent): boolean {
  return (
    event.type.startsWith("approval.") ||
    event.type.startsWith("execution.") ||
    event.type.startsWith("permission.") ||
    event.type === "capability.invoked"
  );
}

/** Milliseconds left before `expiresAt` (negative once past). */
export function msLeft(expiresAt: string | null | undefined, now: number): number {
  const iso = isoOf(expiresAt);
  if (!iso) return Number.POSITIVE_INFINITY;
  return Date.parse(iso) - now;
}

/** "9:58" under an hour, "23 h 59 min" beyond, for an expiry countdown. */
export function timeLeft(ms: number): string {
  const total = Math.max(0, Math.ceil(ms / 1000));
  if (total < 3600) return `${Math.floor(total / 60)}:${String(total % 60).padStart(2, "0")}`;
  const minutes = Math.floor(total / 60);
  const h = Math.floor(minutes / 60);
  const m = minutes % 60;
  return m ? `${h} h ${m} min` : `${h} h`;
}

/** The same in words, for a screen reader (which should not hear every second). */
export function timeLeftWords(ms: number): string {
  const minutes = Math.max(0, Math.ceil(ms / 60_000));
  if (minutes < 60) return `${minutes} minute${minutes === 1 ? "" : "s"}`;
  const h = Math.floor(minutes / 60);
  const m = minutes % 60;
  return `${h} hour${h === 1 ? "" : "s"}${m ? ` ${m} minute${m === 1 ? "" : "s"}` : ""}`;
}
