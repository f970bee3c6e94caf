// Tasks: all / running / waiting for me / done and cancelled.

import { useMemo } from "react";
import type { TaskFilter } from "../../api/types";
import { useWorkspace } from "../../app/workspace";
import { navigate, useLocation, withQuery } from "../../lib/router";
import { useResource } from "../../lib/useResource";
import { useTitle } from "../../lib/useTitle";
import { useNow } from "../../lib/useNow";
import { useHubEvents } from "../../realtime/RealtimeProvider";
import { EmptyState, ErrorBanner, Loading, Tabs } from "../../ui";
import { TaskRow } from "./TaskRow";
import { arrangeTasks } from "./arrange";
import { applyTaskEvent, touchesTaskList } from "./live";
import "./tasks.css";

const TABS: Array<{ id: TaskFilter; label: string; empty: string }> = [
  { id: "all", label: "All", empty: "No tasks yet. Open a conversation, write what you need and tick “Track as task”." },
  { id: "running", label: "Running", empty: "Nothing is running right now." },
  { id: "waiting", label: "Waiting for me", empty: "No task is waiting for you. Nice." },
  { id: "done", label: "Done & cancelled", empty: "No finished tasks yet." },
];

export function TasksView() {
  const loc = useLocation();
  const { api } = useWorkspace();
  const current = (TABS.find((t) => t.id === loc.search.get("status"))?.id ?? "all") as TaskFilter;
  useTitle("Tasks");
  useNow(30_000);
  const tasks = useResource(() => api.tasks(current).then((r) => r.tasks), [api, current], {
    refreshOn: touchesTaskList,
  });
  // Follow the stream: a task's own news shows at once, before the list is read again.
  useHubEvents((event) => tasks.setData((list) => (list ? applyTaskEvent(list, event) : list)));
  const arranged = useMemo(() => arrangeTasks(tasks.data ?? []), [tasks.data]);
  const titles = useMemo(() => new Map((tasks.data ?? []).map((t) => [t.id, t.title])), [tasks.data]);

  function select(id: TaskFilter) {
    navigate(withQuery(loc, { status: id === "all" ? null : id }), { replace: true });
  }

  const tab = TABS.find((t) => t.id === current)!;
  return (
    <div className="page">
      <header className="page-head">
        <h1>Tasks</h1>
      </header>
      <Tabs tabs={TABS} current={current} onSelect={select} label="Filter tasks" idPrefix="task">
        {tasks.error && !tasks.data ? <ErrorBanner error={tasks.error} onRetry={tasks.reload} /> : null}
        {!tasks.data && !tasks.error ? <Loading what="tasks" /> : null}
        {tasks.data && tasks.data.length === 0 ? <EmptyState icon="tasks" title={tab.empty} /> : null}
        {tasks.data && tasks.data.length > 0 ? (
          <ul className="task-list" aria-label={`${tab.label} tasks`}>
            {arranged.map(({ task: t, depth }) => (
              <TaskRow key={t.id} task={t} depth={depth} parentTitle={depth > 0 && t.parentTaskId ? titles.get(t.parentTaskId) : undefined} />
            ))}
          </ul>
        ) : null}
      </Tabs>
    </div>
  );
}
