import { act, render, screen } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { HubEvent, Task } from "../../api/types";
import { asHubEvent } from "../../test/fixtures";
import { CancelBanner } from "./CancelBanner";
import { cancelState } from "./cancel";
import { applyTaskEvent } from "./live";

const NOW = Date.parse("2026-12-03T12:00:00.000Z");

function task(overrides: Partial<Task> = {}): Task {
  return {
    id: "task_1",
    conversationId: "conv_1",
    parentTaskId: null,
    title: "Release",
    description: null,
    targetAgentId: "agent_1",
    status: "running",
    progress: 40,
    summary: null,
    error: null,
    cancelRequested: true,
    cancelReason: null,
    cancelDeadline: "2026-12-03T12:01:00.000Z",
    endCause: null,
    createdBy: "user:u1",
    createdAt: "2026-12-03T11:00:00.000Z",
    updatedAt: "2026-12-03T11:59:00.000Z",
    lastSequence: 9,
    agentConnectionLost: true,
    lastHeartbeatAt: null,
    connectionLostAt: null,
    ...overrides,
  };
}

function event(type: string, payload: Record<string, unknown>, actor = "system"): HubEvent {
  return asHubEvent({
    id: `evt_${type}`,
    type,
    version: "0.1",
    occurredAt: "2026-12-03T12:01:00.500Z",
    workspaceId: "ws_1",
    taskId: "task_1",
    sequence: 10,
    actor,
    payload,
  });
}

describe("a task's cancel", () => {
  it("waits for the agent until its deadline, then is due, and after the hub's end says so", () => {
    expect(cancelState(task(), NOW)).toEqual({ kind: "pending", msLeft: 60_000, deadline: "2026-12-03T12:01:00.000Z" });
    expect(cancelState(task(), NOW + 60_000)).toEqual({ kind: "due", deadline: "2026-12-03T12:01:00.000Z" });
    const ended = task({ status: "cancelled", cancelDeadline: null, endCause: "cancel_timeout" });
    expect(cancelState(ended, NOW)).toEqual({ kind: "ended_by_hub" });
  });

  it("is nothing to show without a request, or once the agent ended the task", () => {
    expect(cancelState(task({ cancelRequested: false, cancelDeadline: null }), NOW).kind).toBe("none");
    expect(cancelState(task({ status: "cancelled", cancelDeadline: null }), NOW).kind).toBe("none");
    expect(cancelState(task({ status: "failed" }), NOW).kind).toBe("none");
  });

  it("has no countdown when the hub gave no deadline", () => {
    expect(cancelState(task({ cancelDeadline: null }), NOW)).toMatchObject({ kind: "pending", deadline: null });
  });

  it("follows the stream: the deadline arrives with the request, the cause with the hub's end", () => {
    const asked = applyTaskEvent(
      [task({ cancelRequested: false, cancelDeadline: null })],
      event("task.cancel_requested", { taskId: "task_1", cancelDeadline: NOW + 60_000 }, "user:u1"),
    );
    expect(asked[0]).toMatchObject({ cancelRequested: true, cancelDeadline: "2026-12-03T12:01:00.000Z" });
    const ended = applyTaskEvent(
      asked,
      event("task.status_changed", { taskId: "task_1", status: "cancelled", cause: "cancel_timeout", summary: "Timed out." }),
    );
    expect(ended[0]).toMatchObject({ status: "cancelled", cancelDeadline: null, endCause: "cancel_timeout" });
    expect(cancelState(ended[0] as Task, NOW).kind).toBe("ended_by_hub");
  });
});

describe("the cancel banner", () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(new Date(NOW));
  });
  afterEach(() => vi.useRealTimers());

  it("counts down to the moment LineUp stops waiting for the agent", () => {
    render(<CancelBanner task={task()} />);
    expect(screen.getByTestId("cancel-countdown")).toHaveTextContent("1:00");
    expect(screen.getByText("1 minute")).toBeInTheDocument(); // what a screen reader hears
    act(() => {
      vi.advanceTimersByTime(15_000);
    });
    expect(screen.getByTestId("cancel-countdown")).toHaveTextContent("0:45");
    act(() => {
      vi.advanceTimersByTime(45_000);
    });
    expect(screen.queryByTestId("cancel-countdown")).toBeNull();
    expect(screen.getByRole("status")).toHaveTextContent("LineUp is marking the task cancelled");
  });

  it("says LineUp ended the task because the agent did not confirm in time", () => {
    render(<CancelBanner task={task({ status: "cancelled", cancelDeadline: null, endCause: "cancel_timeout" })} />);
    const banner = screen.getByRole("status");
    expect(banner).toHaveTextContent("Cancelled by LineUp");
    expect(banner).toHaveTextContent("did not confirm the cancel in time");
  });

  it("shows nothing for a task the agent cancelled itself", () => {
    const { container } = render(<CancelBanner task={task({ status: "cancelled", cancelDeadline: null })} />);
    expect(container).toBeEmptyDOMElement();
  });
});
