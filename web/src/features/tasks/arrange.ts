// The Tasks list as a person reads it: what waits for them first, then what is running, then
// what is over; a child task under its parent, in the order the agent split the work.

import type { Task } from "../../api/types";

export interface ArrangedTask {
  task: Task;
  /** 0 for a task shown at the top level; 1 for its children, and so on. */
  depth: number;
}

/** 0: waits for a person; 1: in progress; 2: over. A lost connection needs eyes like a question. */
function urgency(task: Task): number {
  if (task.status === "waiting_for_human") return 0;
  if (task.status === "queued" || task.status === "running") return task.agentConnectionLost ? 0 : 1;
  return 2;
}

function newestFirst(a: Task, b: Task): number {
  return (b.createdAt ?? "").localeCompare(a.createdAt ?? "") || b.id.localeCompare(a.id);
}

function oldestFirst(a: Task, b: Task): number {
  return -newestFirst(a, b);
}

/**
 * Order ``tasks`` into a tree. A parent that is not in the list (another filter, another page)
 * leaves its child at the top level. A tree ranks by its most urgent task, so a parent whose
 * child waits for the person comes first.
 */
export function arrangeTasks(tasks: Task[]): ArrangedTask[] {
  const byId = new Map(tasks.map((t) => [t.id, t]));
  const children = new Map<string, Task[]>();
  const roots: Task[] = [];
  for (const task of tasks) {
    const parent = task.parentTaskId && task.parentTaskId !== task.id ? byId.get(task.parentTaskId) : undefined;
    if (parent) {
      const list = children.get(parent.id) ?? [];
      list.push(task);
      children.set(parent.id, list);
    } else {
      roots.push(task);
    }
  }
  const rank = new Map<string, number>();
  const rankOf = (task: Task, trail: Set<string>): number => {
    const known = rank.get(task.id);
    if (known !== undefined) return known;
    trail.add(task.id);
    let best = urgency(task);
    for (const child of children.get(task.id) ?? []) {
      if (!trail.has(child.id)) best = Math.min(best, rankOf(child, trail));
    }
    rank.set(task.id, best);
    return best;
  };
  for (const task of roots) rankOf(task, new Set());

  const out: ArrangedTask[] = [];
  const placed = new Set<string>();
  const place = (task: Task, depth: number) => {
    if (placed.has(task.id)) return;
    placed.add(task.id);
    out.push({ task, depth });
    for (const child of [...(children.get(task.id) ?? [])].sort(oldestFirst)) place(child, depth + 1);
  };
  for (const task of [...roots].sort((a, b) => rankOf(a, new Set()) - rankOf(b, new Set()) || newestFirst(a, b))) {
    place(task, 0);
  }
  // A cycle of parents (never made by the hub) would leave tasks unplaced: show them anyway.
  for (const task of tasks) place(task, 0);
  return out;
}
