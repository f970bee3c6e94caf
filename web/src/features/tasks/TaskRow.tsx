import type { Task } from "../../api/types";
import { Link, useLocation, withQuery } from "../../lib/router";
import { Icon, ProgressBar, TaskStatusPill, RelativeTime } from "../../ui";
import { useWorkspace } from "../../app/workspace";
import { failureText } from "./failure";

/** When the row's time is: the loss of the agent's connection while that is the news, else the
 * task's last change. */
export function rowTime(task: Task): { at: string | null; prefix: string } {
  if (task.agentConnectionLost && (task.connectionLostAt || task.lastHeartbeatAt)) {
    return { at: task.connectionLostAt ?? task.lastHeartbeatAt, prefix: "lost " };
  }
  return { at: task.updatedAt, prefix: "" };
}

/** One task in a list; opening it shows the detail pane (or drawer) beside the list. A child
 * shown under its parent is indented (``depth``) and names the parent for screen readers. */
export function TaskRow({
  task,
  note,
  depth = 0,
  parentTitle,
}: {
  task: Task;
  note?: string;
  depth?: number;
  parentTitle?: string;
}) {
  const loc = useLocation();
  const { agentName } = useWorkspace();
  const selected = loc.search.get("task") === task.id;
  const active = task.status === "running" || task.status === "waiting_for_human" || task.status === "queued";
  const time = rowTime(task);
  return (
    <li
      className={`task-row${selected ? " is-selected" : ""}${depth > 0 ? " is-child" : ""}`}
      style={depth > 0 ? { marginInlineStart: `${Math.min(depth, 4) * 24}px` } : undefined}
      data-depth={depth}
    >
      <Link
        to={withQuery(loc, { task: task.id })}
        className="task-row-link"
        aria-current={selected ? "true" : undefined}
        data-task-id={task.id}
      >
        <span className="task-row-top">
          <TaskStatusPill task={task} />
          {task.parentTaskId ? (
            <span className="task-row-parent">
              <Icon name="tasks" size={13} /> {parentTitle ? <span className="sr-only">Child task of “{parentTitle}”</span> : "Child task"}
              {parentTitle ? <span aria-hidden="true">Child task</span> : null}
            </span>
          ) : null}
          <span className="task-row-time">
            {time.prefix}
            <RelativeTime iso={time.at} />
          </span>
        </span>
        <span className="task-row-title">{task.title}</span>
        {note || task.summary || failureText(task) ? (
          <span className="task-row-summary">{note ?? task.summary ?? failureText(task)}</span>
        ) : null}
        <span className="task-row-foot">
          <span className="task-row-agent">{agentName(task.targetAgentId)}</span>
          {active && task.progress != null ? (
            <ProgressBar compact value={task.progress} label={`Progress of ${task.title}`} />
          ) : null}
          {active && task.progress != null ? <span className="task-row-pct">{task.progress}%</span> : null}
        </span>
      </Link>
    </li>
  );
}
