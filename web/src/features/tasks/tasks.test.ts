import { describe, expect, it } from "vitest";
import type { HubEvent, Task } from "../../api/types";
import { asHubEvent, type LooseEvent } from "../../test/fixtures";
import { attentionNote } from "../inbox/InboxView";
import { arrangeTasks } from "./arrange";
import { applyTaskEvent, touchesTaskList } from "./live";
import { describeTaskEvent } from "./timeline";
import { rowTime } from "./TaskRow";

function task(id: string, overrides: Partial<Task> = {}): Task {
  return {
    id,
    conversationId: "conv_1",
    parentTaskId: null,
    title: `Task ${id}`,
    description: null,
    targetAgentId: "agent_1",
    status: "running",
    progress: 0,
    summary: null,
    error: null,
    cancelRequested: false,
    cancelReason: null,
    createdBy: "user:u1",
    createdAt: "2026-12-01T10:00:00.000Z",
    updatedAt: "2026-12-01T10:00:00.000Z",
    lastSequence: 1,
    agentConnectionLost: false,
    lastHeartbeatAt: null,
    connectionLostAt: null,
    ...overrides,
  };
}

function event(type: string, payload: Record<string, unknown>, extra: Partial<LooseEvent> = {}): HubEvent {
  return asHubEvent({
    id: `evt_${type}`,
    type,
    version: "0.1",
    occurredAt: "2026-12-01T11:00:00.000Z",
    workspaceId: "ws_1",
    sequence: 50,
    payload,
    ...extra,
  });
}

const names = (actor: string | null | undefined) =>
  actor === "agent:agent_1" ? "builder" : actor === "system" || !actor ? "LineUp" : "You";

describe("the Tasks list", () => {
  it("puts a child task right under its parent, in the order the agent made them", () => {
    const tasks = [
      task("c2", { parentTaskId: "p", createdAt: "2026-12-01T10:03:00.000Z" }),
      task("other", { createdAt: "2026-12-01T10:02:00.000Z" }),
      task("c1", { parentTaskId: "p", createdAt: "2026-12-01T10:01:00.000Z" }),
      task("p", { createdAt: "2026-12-01T10:00:00.000Z" }),
    ];
    expect(arrangeTasks(tasks).map((a) => [a.task.id, a.depth])).toEqual([
      ["other", 0],
      ["p", 0],
      ["c1", 1],
      ["c2", 1],
    ]);
  });

  it("shows what waits for me first, also when it is a child that waits", () => {
    const tasks = [
      task("new", { createdAt: "2026-12-01T10:05:00.000Z" }),
      task("done", { status: "succeeded", createdAt: "2026-12-01T10:06:00.000Z" }),
      task("waits", { status: "waiting_for_human", createdAt: "2026-12-01T09:00:00.000Z" }),
      task("parent", { createdAt: "2026-12-01T08:00:00.000Z" }),
      task("child", { parentTaskId: "parent", status: "waiting_for_human", createdAt: "2026-12-01T08:01:00.000Z" }),
    ];
    expect(arrangeTasks(tasks).map((a) => a.task.id)).toEqual(["waits", "parent", "child", "new", "done"]);
  });

  it("keeps a child whose parent is not listed at the top level", () => {
    const arranged = arrangeTasks([task("c", { parentTaskId: "elsewhere" })]);
    expect(arranged).toEqual([{ task: expect.objectContaining({ id: "c" }), depth: 0 }]);
  });

  it("applies a task's news from the stream in place", () => {
    const list = [task("t1"), task("t2")];
    const next = applyTaskEvent(list, event("task.status_changed", { taskId: "t1", status: "succeeded", summary: "Shipped" }));
    expect(next[0]).toMatchObject({ status: "succeeded", progress: 100, summary: "Shipped" });
    expect(next[1]).toBe(list[1]);
    expect(applyTaskEvent(list, event("message.created", { content: "hi" }))).toBe(list);
    expect(touchesTaskList(event("task.created", { taskId: "t3" }))).toBe(true);
  });

  it("marks a running task's lost connection with the time it was lost, and clears it on reconnect", () => {
    const list = [task("t1")];
    const lost = applyTaskEvent(
      list,
      event("agent.status_changed", { agentId: "agent_1", status: "offline", lastHeartbeatAt: Date.parse("2026-12-01T10:59:10.000Z") }),
    );
    expect(lost[0]).toMatchObject({
      agentConnectionLost: true,
      connectionLostAt: "2026-12-01T11:00:00.000Z",
      lastHeartbeatAt: "2026-12-01T10:59:10.000Z",
    });
    const back = applyTaskEvent(lost, event("agent.connected", { agentId: "agent_1" }));
    expect(back[0]?.agentConnectionLost).toBe(false);
  });

  it("dates a lost connection by the loss, not by the task's last update", () => {
    const lost = task("t1", {
      agentConnectionLost: true,
      updatedAt: "2026-12-01T09:00:00.000Z",
      lastHeartbeatAt: "2026-12-01T10:59:10.000Z",
      connectionLostAt: "2026-12-01T11:00:00.000Z",
    });
    expect(rowTime(lost)).toEqual({ at: "2026-12-01T11:00:00.000Z", prefix: "lost " });
    expect(rowTime(task("t2"))).toEqual({ at: "2026-12-01T10:00:00.000Z", prefix: "" });
    const note = attentionNote(lost)!;
    expect(note).toMatch(/^Agent connection lost at /);
    expect(note).toContain(new Date("2026-12-01T11:00:00.000Z").toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit", second: "2-digit" }));
  });
});

describe("a task's timeline", () => {
  const context = { taskId: "parent", childTitles: new Map([["child", "Run the tests"]]) };

  it("says a child's success is the child's", () => {
    const line = describeTaskEvent(
      event("task.status_changed", { taskId: "child", status: "succeeded" }, { taskId: "child", actor: "agent:agent_1" }),
      names,
      new Map(),
      context,
    );
    expect(line.text).toBe("Child task “Run the tests”: builder reported succeeded");
    const own = describeTaskEvent(
      event("task.status_changed", { taskId: "parent", status: "succeeded" }, { taskId: "parent", actor: "agent:agent_1" }),
      names,
      new Map(),
      context,
    );
    expect(own.text).toBe("builder reported succeeded");
  });

  it("shows the agent losing its connection and reconnecting", () => {
    const offline = describeTaskEvent(
      event("agent.status_changed", { agentId: "agent_1", status: "offline", lastHeartbeatAt: Date.parse("2026-12-01T10:59:10.000Z") }, { actor: "system" }),
      names,
      new Map(),
      context,
    );
    expect(offline.text).toMatch(/^builder lost its connection — last heartbeat /);
    const back = describeTaskEvent(event("agent.connected", { agentId: "agent_1" }, { actor: "agent:agent_1" }), names, new Map(), context);
    expect(back.text).toBe("builder reconnected");
  });

  it("says a request was withdrawn because the task was cancelled", () => {
    const line = describeTaskEvent(
      event("interaction.cancelled", { interactionId: "int_1", reason: "The task was cancelled." }, { taskId: "parent", actor: "user:u1" }),
      names,
      new Map([["int_1", { id: "int_1", type: "approval" as const, title: "Ship it?" }]]),
      context,
    );
    expect(line.text).toBe("Request “Ship it?” withdrawn: the task was cancelled");
  });
});
