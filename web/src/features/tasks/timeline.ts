// One human-readable line per recorded event, for task timelines and agent diagnostics.

import type { HubEvent, InteractionRequest } from "../../api/types";
import { taskStatusLabel, type IconName, type Tone } from "../../ui";
import { describeResponse } from "../interactions/validation";
import { TASK_CANCELLED_REASON } from "../interactions/withdrawn";

export interface TimelineLine {
  icon: IconName;
  tone: Tone;
  text: string;
}

const KIND_WORD: Record<string, string> = {
  approval: "an approval",
  choice: "a choice",
  input: "an answer",
  review: "a review",
};

function truncate(text: string, n = 90): string {
  const one = text.replace(/\s+/g, " ").trim();
  return one.length > n ? `${one.slice(0, n - 1)}…` : one;
}

function clock(value: unknown): string | null {
  const d = typeof value === "number" ? new Date(value) : typeof value === "string" ? new Date(value) : null;
  if (!d || Number.isNaN(d.getTime())) return null;
  return d.toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit", second: "2-digit" });
}

/** Where a line is shown: a task's timeline names whose event it is when it is not the task's. */
export interface TimelineContext {
  /** The task whose timeline this is. */
  taskId: string;
  /** Titles of its child tasks, whose events the timeline also holds. */
  childTitles: Map<string, string>;
}

/** One line, said of the task it is about: a child's success must not read as the parent's. */
export function describeTaskEvent(
  event: HubEvent,
  actorName: (actor: string | null | undefined) => string,
  interactionRequests: Map<string, InteractionRequest>,
  context: TimelineContext,
): TimelineLine {
  if (event.type === "agent.connected") {
    return { icon: "dot", tone: "success", text: `${actorName(`agent:${String(event.payload.agentId ?? "")}`)} reconnected` };
  }
  if (event.type === "agent.status_changed" && event.payload.status === "offline") {
    const beat = clock(event.payload.lastHeartbeatAt);
    const name = actorName(`agent:${String(event.payload.agentId ?? "")}`);
    return { icon: "plugOff", tone: "danger", text: `${name} lost its connection${beat ? ` — last heartbeat ${beat}` : ""}` };
  }
  const line = describeEvent(event, actorName, interactionRequests);
  const about = event.taskId;
  if (!about || about === context.taskId || event.type === "task.child_created") return line;
  const title = context.childTitles.get(about);
  return { ...line, text: `Child task${title ? ` “${truncate(title, 60)}”` : ""}: ${line.text}` };
}

export function describeEvent(
  event: HubEvent,
  actorName: (actor: string | null | undefined) => string,
  interactionRequests: Map<string, InteractionRequest> = new Map(),
): TimelineLine {
  const who = actorName(event.actor);
  switch (event.type) {
    case "task.created":
      return { icon: "plus", tone: "neutral", text: `${who} created the task “${truncate(String(event.payload.title ?? ""))}”` };
    case "task.accepted":
      return { icon: "running", tone: "running", text: `${who} accepted the task` };
    case "task.status_changed": {
      const status = event.payload.status;
      const parts = [`${who === "LineUp" ? "LineUp marked it" : `${who} reported`} ${taskStatusLabel(status).toLowerCase()}`];
      if (typeof event.payload.progress === "number") parts.push(`${event.payload.progress}%`);
      let text = parts.join(", ");
      if (typeof event.payload.summary === "string" && event.payload.summary) text += ` — ${truncate(event.payload.summary)}`;
      if (status === "failed" && typeof event.payload.error === "string" && event.payload.error) {
        text += event.payload.error === "agent_unreachable" ? " (the agent did not come back in time)" : ` (${truncate(event.payload.error, 120)})`;
      }
      const tone: Tone =
        status === "succeeded" ? "success" : status === "failed" ? "danger" : status === "waiting_for_human" ? "waiting" : "running";
      const icon: IconName =
        status === "succeeded" ? "checkCircle" : status === "failed" ? "xCircle" : status === "cancelled" ? "stopCircle" : "running";
      return { icon, tone, text };
    }
    case "task.child_created":
      return { icon: "tasks", tone: "neutral", text: `${who} added a child task “${truncate(String(event.payload.title ?? ""))}”` };
    case "task.cancel_requested":
      return {
        icon: "stopCircle",
        tone: "waiting",
        text: `${who} asked the agent to stop${typeof event.payload.reason === "string" && event.payload.reason ? ` (${truncate(event.payload.reason)})` : ""}`,
      };
    case "interaction.requested": {
      const i = event.payload.interaction;
      return {
        icon: "hand",
        tone: "waiting",
        text: `${who} asked for ${KIND_WORD[i.type] ?? "a decision"}: “${truncate(i.title ?? "")}”`,
      };
    }
    case "interaction.resolved": {
      const request = interactionRequests.get(String(event.payload.interactionId));
      const response = event.payload.response;
      const name = typeof event.payload.respondedByName === "string" && event.payload.respondedByName ? event.payload.respondedByName : who;
      const answer = request && response ? describeResponse({ request, response }) : "";
      return { icon: "checkCircle", tone: "success", text: `${name} answered${answer ? `: ${truncate(answer)}` : ""}` };
    }
    case "interaction.expired":
      return { icon: "clock", tone: "neutral", text: "A request expired without an answer" };
    case "interaction.cancelled": {
      const request = interactionRequests.get(String(event.payload.interactionId));
      const what = request ? ` “${truncate(request.title ?? "")}”` : "";
      if (event.payload.reason === TASK_CANCELLED_REASON)
        return { icon: "stopCircle", tone: "neutral", text: `Request${what} withdrawn: the task was cancelled` };
      return { icon: "stopCircle", tone: "neutral", text: `The agent withdrew a request${what}` };
    }
    case "tool.cancelled":
      return {
        icon: "stopCircle",
        tone: "neutral",
        text: event.payload.reason === TASK_CANCELLED_REASON ? "A tool call was withdrawn: the task was cancelled" : "The agent withdrew a tool call",
      };
    case "artifact.created":
      return { icon: "file", tone: "neutral", text: `${who} produced “${truncate(String(event.payload.name ?? "an artifact"))}”` };
    case "message.created": {
      const author = event.payload.author;
      const name = who === "A teammate" && author.name ? author.name : who;
      return { icon: "chat", tone: "neutral", text: `${name}: ${truncate(String(event.payload.content ?? ""))}` };
    }
    case "agent.paired":
      return { icon: "key", tone: "neutral", text: `Paired as “${String(event.payload.name ?? "agent")}”` };
    case "agent.connected": {
      const bits = [event.payload.runtime, event.payload.agentVersion].filter((x) => typeof x === "string" && x).join(" ");
      return { icon: "dot", tone: "success", text: `Connected${bits ? ` (${bits})` : ""}` };
    }
    case "agent.status_changed": {
      const status = String(event.payload.status ?? "");
      const beat = clock(event.payload.lastHeartbeatAt);
      if (status === "offline")
        return { icon: "plugOff", tone: "danger", text: `Went offline${beat ? ` — last heartbeat ${beat}` : ""}` };
      return { icon: "dot", tone: status === "online" ? "success" : "neutral", text: `Status: ${status}` };
    }
    case "agent.renamed":
      return { icon: "pencil", tone: "neutral", text: `${who} renamed it “${String(event.payload.name ?? "")}”` };
    case "agent.revoked":
      return { icon: "xCircle", tone: "neutral", text: `${who} revoked its access` };
    case "agent.confirmed":
      return { icon: "checkCircle", tone: "success", text: `${who} confirmed it as “${String(event.payload.name ?? "")}”` };
    case "agent.settings_changed":
      return { icon: "settings", tone: "neutral", text: `${who} changed its settings` };
    default:
      return { icon: "info", tone: "neutral", text: event.type };
  }
}
