import type { Agent, InteractionStatus, Risk, Task, TaskStatus } from "../api/types";
import { Icon, type IconName } from "./Icon";

export type Tone = "running" | "waiting" | "success" | "danger" | "neutral";

/** Status as icon + text (never colour alone); the tone only adds colour. */
export function StatusPill({ tone, icon, label, title }: { tone: Tone; icon: IconName; label: string; title?: string }) {
  return (
    <span className={`pill pill-${tone}`} title={title}>
      <Icon name={icon} size={14} />
      <span>{label}</span>
    </span>
  );
}

export const TASK_STATUS: Record<TaskStatus, { tone: Tone; icon: IconName; label: string }> = {
  queued: { tone: "neutral", icon: "clock", label: "Queued" },
  running: { tone: "running", icon: "running", label: "Running" },
  waiting_for_human: { tone: "waiting", icon: "hand", label: "Waiting for you" },
  succeeded: { tone: "success", icon: "checkCircle", label: "Succeeded" },
  failed: { tone: "danger", icon: "xCircle", label: "Failed" },
  cancelled: { tone: "neutral", icon: "stopCircle", label: "Cancelled" },
};

/** Whether a recorded status is one this app knows (a newer hub may record others). */
export function isTaskStatus(value: unknown): value is TaskStatus {
  return typeof value === "string" && Object.hasOwn(TASK_STATUS, value);
}

export function taskStatusLabel(status: string): string {
  return isTaskStatus(status) ? TASK_STATUS[status].label : status;
}

export function TaskStatusPill({ task }: { task: Pick<Task, "status" | "cancelRequested" | "agentConnectionLost"> }) {
  const active = task.status === "queued" || task.status === "running" || task.status === "waiting_for_human";
  if (active && task.agentConnectionLost) {
    return <StatusPill tone="danger" icon="plugOff" label="Agent connection lost" />;
  }
  if (active && task.cancelRequested) {
    return <StatusPill tone="waiting" icon="stopCircle" label="Cancel requested" />;
  }
  const s = TASK_STATUS[task.status] ?? { tone: "neutral" as Tone, icon: "circle" as IconName, label: task.status };
  return <StatusPill tone={s.tone} icon={s.icon} label={s.label} />;
}

export function agentState(agent: Pick<Agent, "status">): { tone: Tone; icon: IconName; label: string } {
  switch (agent.status) {
    case "online":
      return { tone: "success", icon: "dot", label: "Online" };
    case "offline":
      return { tone: "danger", icon: "plugOff", label: "Offline" };
    case "revoked":
      return { tone: "neutral", icon: "xCircle", label: "Revoked" };
    default:
      return { tone: "neutral", icon: "clock", label: "Never connected" };
  }
}

export function AgentStatusPill({ agent }: { agent: Pick<Agent, "status"> }) {
  const s = agentState(agent);
  return <StatusPill {...s} />;
}

export function InteractionStatusPill({ status }: { status: InteractionStatus }) {
  switch (status) {
    case "requested":
      return <StatusPill tone="waiting" icon="hand" label="Waiting for you" />;
    case "resolved":
      return <StatusPill tone="success" icon="checkCircle" label="Answered" />;
    case "expired":
      return <StatusPill tone="neutral" icon="clock" label="Expired" />;
    default:
      return <StatusPill tone="neutral" icon="stopCircle" label="Cancelled" />;
  }
}

const RISK: Record<Risk, { tone: Tone; icon: IconName; label: string }> = {
  high: { tone: "danger", icon: "alert", label: "High risk" },
  medium: { tone: "waiting", icon: "alert", label: "Medium risk" },
  low: { tone: "success", icon: "shield", label: "Low risk" },
};

export function RiskPill({ risk }: { risk: Risk }) {
  const r = RISK[risk];
  if (!r) return null;
  return <StatusPill {...r} />;
}
