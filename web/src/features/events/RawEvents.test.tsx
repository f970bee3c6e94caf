import { render, screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it, vi } from "vitest";
import { ApiError } from "../../api/client";
import type { RawEvent, RawEvents as Page } from "../../api/types";
import { RawEvents } from "./RawEvents";

function event(sequence: number, type: string, payload: Record<string, unknown> = {}): RawEvent {
  return {
    id: `evt_${sequence}`,
    sequence,
    type,
    actor: "agent:ag_1",
    occurredAt: "2026-01-02T03:04:05.000Z",
    recordedAt: "2026-01-02T03:04:05.678Z",
    conversationId: "conv_1",
    taskId: "task_1",
    correlationId: null,
    payload,
  };
}

function page(events: RawEvent[], more = false, compactedBefore: number | null = null): Page {
  return { subject: "task:task_1", events, hasMore: more, compactedBefore };
}

describe("RawEvents", () => {
  it("is closed until asked for, then lists each event's sequence, type, id and payload", async () => {
    const api = { rawEvents: vi.fn(async () => page([event(3, "task.created", { title: "Ship" }), event(5, "task.accepted")])) };
    const user = userEvent.setup();
    render(<RawEvents api={api} subject="task:task_1" what="task" />);
    const show = screen.getByRole("button", { name: "Show events of this task" });
    expect(show).toHaveAttribute("aria-expanded", "false");
    expect(screen.queryByRole("list")).toBeNull();
    expect(api.rawEvents).not.toHaveBeenCalled();

    await user.click(show);
    const list = await screen.findByRole("list", { name: "Events of this task" });
    expect(api.rawEvents).toHaveBeenCalledWith("task:task_1", { after: undefined, limit: 50 });
    const items = within(list).getAllByRole("listitem");
    expect(items).toHaveLength(2);
    const [first] = items as [HTMLElement, HTMLElement];
    expect(first).toHaveTextContent("#3");
    expect(first).toHaveTextContent("task.created");
    expect(first).toHaveTextContent("evt_3");
    expect(first).toHaveTextContent("agent:ag_1");
    expect(first.querySelector("pre")?.textContent).toBe(JSON.stringify({ title: "Ship" }, null, 2));
    expect(screen.getByRole("button", { name: "Hide events of this task" })).toHaveAttribute("aria-expanded", "true");

    await user.click(screen.getByRole("button", { name: "Hide events of this task" }));
    expect(screen.queryByRole("list")).toBeNull();
  });

  it("pages on after the last event shown and says where the log was compacted", async () => {
    const api = {
      rawEvents: vi
        .fn()
        .mockResolvedValueOnce(page([event(8, "task.created")], true, 7))
        .mockResolvedValueOnce(page([event(9, "task.accepted")], false, 7)),
    };
    const user = userEvent.setup();
    render(<RawEvents api={api} subject="task:task_1" what="task" />);
    await user.click(screen.getByRole("button", { name: "Show events of this task" }));
    expect(await screen.findByText(/compacted before #7/)).toBeInTheDocument();
    await user.click(screen.getByRole("button", { name: "Show more events" }));
    expect(api.rawEvents).toHaveBeenLastCalledWith("task:task_1", { after: 8, limit: 50 });
    const list = screen.getByRole("list", { name: "Events of this task" });
    expect(await within(list).findByText("task.accepted")).toBeInTheDocument();
    expect(within(list).getAllByRole("listitem")).toHaveLength(2);
    expect(screen.queryByRole("button", { name: "Show more events" })).toBeNull();
  });

  it("says why when the events cannot be read", async () => {
    const api = { rawEvents: vi.fn(async () => Promise.reject(new ApiError("not_found", "No task 'x' in this workspace.", 404))) };
    const user = userEvent.setup();
    render(<RawEvents api={api} subject="task:x" what="task" />);
    await user.click(screen.getByRole("button", { name: "Show events of this task" }));
    expect(await screen.findByRole("alert")).toHaveTextContent("No task 'x' in this workspace.");
  });
});
