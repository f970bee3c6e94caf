// Where a task's cancel stands for a person: waiting for the agent (with the time LineUp waits
// for it), or ended by LineUp because the agent did not confirm in time.

import type { Task } from "../../api/types";

const ACTIVE = new Set(["queued", "running", "waiting_for_human"]);

/** The cause LineUp records when it ends a task whose cancel its agent never confirmed. */
export const CANCEL_TIMEOUT = "cancel_timeout";

export type CancelState =
  | { kind: "none" }
  /** Asked, the agent has not confirmed; `msLeft` until LineUp ends it (Infinity: no deadline). */
  | { kind: "pending"; msLeft: number; deadline: string | null }
  /** The deadline passed: LineUp is recording the task cancelled (its next pass). */
  | { kind: "due"; deadline: string }
  /** LineUp ended the task because the agent did not confirm the cancel in time. */
  | { kind: "ended_by_hub" };

export function cancelState(task: Pick<Task, "status" | "cancelRequested" | "cancelDeadline" | "endCause">, now: number): CancelState {
  if (task.status === "cancelled" && task.endCause === CANCEL_TIMEOUT) return { kind: "ended_by_hub" };
  if (!task.cancelRequested || !ACTIVE.has(task.status)) return { kind: "none" };
  const deadline = task.cancelDeadline ?? null;
  const at = deadline ? Date.parse(deadline) : Number.NaN;
  if (Number.isNaN(at)) return { kind: "pending", msLeft: Number.POSITIVE_INFINITY, deadline: null };
  const msLeft = at - now;
  return msLeft > 0 ? { kind: "pending", msLeft, deadline } : { kind: "due", deadline: deadline as string };
}
