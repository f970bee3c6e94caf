import type { Task } from "../../api/types";
import { Link, useLocation, withQuery } from "../../lib/router";
import { Icon, ProgressBar, TaskStatusPill, RelativeTime } from "../../ui";
import { useWorkspace } from "../../app/workspace";

/** One task in a list; opening it shows the detail pane (or drawer) beside the list. */
export function TaskRow({ task, note }: { task: Task; note?: string }) {
  const loc = useLocation();
  const { agentName } = useWorkspace();
  const selected = loc.search.get("task") === task.id;
  const active = task.status === "running" || task.status === "waiting_for_human" || task.status === "queued";
  return (
    <li className={`task-row${selected ? " is-selected" : ""}`}>
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
              <Icon name="tasks" size={13} /> Child task
            </span>
          ) : null}
          <RelativeTime className="task-row-time" iso={task.updatedAt} />
        </span>
        <span className="task-row-title">{task.title}</span>
        {note || task.summary || task.error ? (
          <span className="task-row-summary">{note ?? task.summary ?? task.error}</span>
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
