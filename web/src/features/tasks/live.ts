// A task list following the realtime stream: the events that change a task shown in a list
// are applied where they land, so a status or a lost connection shows without a round trip;
// the list is read again after them for what an event alone cannot say (a new task, a filter).

import type { HubEvent, Task, TaskStatus } from "../../api/types";
import { isTaskStatus } from "../../ui";

const ACTIVE = new Set<TaskStatus>(["queued", "running", "waiting_for_human"]);

/** Events after which a task list may be stale. */
export function touchesTaskList(event: HubEvent): boolean {
  return (
    event.type.startsWith("task.") ||
    event.type.startsWith("interaction.") ||
    event.type === "agent.status_changed" ||
    event.type === "agent.connected" ||
    event.type === "agent.revoked" ||
    event.type === "tool.called" ||
    event.type === "tool.completed" ||
    event.type === "tool.cancelled"
  );
}

function isoOf(value: unknown, fallback: string): string {
  if (typeof value === "number") return new Date(value).toISOString();
  return typeof value === "string" ? value : fallback;
}

function patchTask(task: Task, event: HubEvent): Task {
  const taskId = typeof event.payload.taskId === "string" ? event.payload.taskId : event.taskId;
  if (taskId === task.id) {
    if (event.type === "task.accepted") return { ...task, status: "running", updatedAt: event.occurredAt };
    if (event.type === "task.cancel_requested") {
      const p = event.payload;
      return {
        ...task,
        cancelRequested: true,
        cancelReason: typeof p.reason === "string" ? p.reason : task.cancelReason,
        // a second request keeps the first deadline
        cancelDeadline: task.cancelDeadline ?? (p.cancelDeadline != null ? isoOf(p.cancelDeadline, event.occurredAt) : null),
      };
    }
    if (event.type === "task.status_changed") {
      const p = event.payload;
      const status = isTaskStatus(p.status) ? p.status : task.status;
      return {
        ...task,
        status,
        progress: typeof p.progress === "number" ? p.progress : status === "succeeded" ? 100 : task.progress,
        summary: typeof p.summary === "string" ? p.summary : task.summary,
        error: typeof p.error === "string" ? p.error : task.error,
        agentConnectionLost: ACTIVE.has(status) ? task.agentConnectionLost : false,
        cancelDeadline: ACTIVE.has(status) ? task.cancelDeadline : null,
        endCause: ACTIVE.has(status) ? task.endCause : typeof p.cause === "string" ? p.cause : null,
        updatedAt: event.occurredAt,
      };
    }
  }
  const agentId = event.payload.agentId;
  if (typeof agentId === "string" && agentId === task.targetAgentId) {
    const lost =
      (event.type === "agent.status_changed" && event.payload.status === "offline") || event.type === "agent.revoked";
    if (lost && (task.status === "running" || task.status === "waiting_for_human")) {
      const beat = event.payload.lastHeartbeatAt;
      return {
        ...task,
        agentConnectionLost: true,
        connectionLostAt: event.occurredAt,
        lastHeartbeatAt: beat != null ? isoOf(beat, event.occurredAt) : task.lastHeartbeatAt,
      };
    }
    if (event.type === "agent.connected" && task.agentConnectionLost) {
      return { ...task, agentConnectionLost: false, connectionLostAt: null };
    }
  }
  return task;
}

/** ``tasks`` after ``event``; the same array when nothing in it changed. */
export function applyTaskEvent(tasks: Task[], event: HubEvent): Task[] {
  let changed = false;
  const next = tasks.map((task) => {
    const patched = patchTask(task, event);
    if (patched !== task) changed = true;
    return patched;
  });
  return changed ? next : tasks;
}
