// How a withdrawn request reads: a task's cancel withdraws its open requests (the hub's
// reason), otherwise the agent withdrew it itself.

/** The reason the hub records when a task's cancel withdraws its open requests. */
export const TASK_CANCELLED_REASON = "The task was cancelled.";

export function withdrawnLine(what: "request" | "call", reason: string | null | undefined): string {
  if (reason === TASK_CANCELLED_REASON) return `Withdrawn because the task was cancelled; nothing to answer.`;
  return `The agent withdrew this ${what}${reason ? `: ${reason}` : ""}; nothing to answer.`;
}
