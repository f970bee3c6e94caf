import { act, render, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { WorkspaceApi } from "../../api/hub";
import type { Approval, ApprovalView } from "../../api/types";
import { WorkspaceContextProvider, type WorkspaceContextValue } from "../../app/workspace";
import type { Resource } from "../../lib/useResource";
import { ManualBus, RealtimeBusProvider } from "../../realtime/RealtimeProvider";
import { asHubEvent } from "../../test/fixtures";
import { ApprovalsView } from "./ApprovalsView";
import { makeApproval, project } from "../../test/governance";

function resource<T>(data: T | undefined): Resource<T> {
  return { data, error: null, loading: false, reload: () => {}, setData: () => {} };
}

const waiting = makeApproval({ id: "apr_w", summary: "Publish draft-7 of plant-1" });
const raised = makeApproval({ id: "apr_r", summary: "Publish draft-8 of plant-1", canDecide: false });
const done = makeApproval({
  id: "apr_d",
  summary: "Publish draft-6 of plant-1",
  status: "approved",
  decidedByName: "Bo",
  decidedAt: "2026-07-24T12:05:00.000Z",
});

function setup(lists: Record<Exclude<ApprovalView, "all">, Approval[]>) {
  const approvals = vi.fn(async (view: ApprovalView = "waiting") => ({ approvals: [...(lists[view as keyof typeof lists] ?? [])] }));
  const api = {
    approvals,
    projects: vi.fn(async () => ({ projects: [project] })),
  } as unknown as WorkspaceApi;
  const value: WorkspaceContextValue = {
    api,
    workspace: { id: "ws_1", name: "Studio", role: "owner" } as WorkspaceContextValue["workspace"],
    user: { id: "u1", email: "ana@example.test", displayName: "Ana" } as WorkspaceContextValue["user"],
    agents: resource<WorkspaceContextValue["agents"]["data"] & object>([]),
    inbox: resource<NonNullable<WorkspaceContextValue["inbox"]["data"]>>(undefined),
    agentName: () => "planner",
    actorName: () => "Ana",
  };
  const bus = new ManualBus();
  const user = userEvent.setup();
  render(
    <RealtimeBusProvider value={bus}>
      <WorkspaceContextProvider value={value}>
        <ApprovalsView />
      </WorkspaceContextProvider>
    </RealtimeBusProvider>,
  );
  return { approvals, bus, user, lists };
}

afterEach(() => history.replaceState(null, "", "/"));

describe("the approval center", () => {
  it("opens on what waits for me, each row with its status in words and a link to its card", async () => {
    history.replaceState(null, "", "/approvals");
    const { approvals } = setup({ waiting: [waiting], raised: [raised], done: [done] });
    const list = await screen.findByRole("list", { name: "Waiting for me" });
    expect(approvals).toHaveBeenCalledWith("waiting");
    const row = within(list).getByRole("link", { name: /Publish draft-7 of plant-1/ });
    expect(row).toHaveAttribute("href", "/approvals/apr_w");
    expect(row).toHaveTextContent("Waiting for approval");
    expect(row).toHaveTextContent("Plant 1 scheduling");
    expect(screen.getByRole("tab", { name: "Waiting for me" })).toHaveAttribute("aria-selected", "true");
  });

  it("switches tabs with the arrow keys: raised by me, then done", async () => {
    history.replaceState(null, "", "/approvals");
    const { approvals, user } = setup({ waiting: [waiting], raised: [raised], done: [done] });
    await screen.findByRole("list", { name: "Waiting for me" });
    screen.getByRole("tab", { name: "Waiting for me" }).focus();
    await user.keyboard("{ArrowRight}");
    expect(screen.getByRole("tab", { name: "Raised by me" })).toHaveFocus();
    const raisedList = await screen.findByRole("list", { name: "Raised by me" });
    expect(approvals).toHaveBeenCalledWith("raised");
    expect(raisedList).toHaveTextContent("Publish draft-8 of plant-1");
    await user.keyboard("{ArrowRight}");
    const doneList = await screen.findByRole("list", { name: "Done" });
    expect(approvals).toHaveBeenCalledWith("done");
    expect(doneList).toHaveTextContent("Approved");
    expect(location.search).toBe("?view=done");
  });

  it("says so when nothing waits", async () => {
    history.replaceState(null, "", "/approvals");
    setup({ waiting: [], raised: [], done: [] });
    expect(await screen.findByText("Nothing waits for your decision.")).toBeVisible();
  });

  it("reads the list again when an approval is requested or decided", async () => {
    history.replaceState(null, "", "/approvals");
    const { approvals, bus, lists } = setup({ waiting: [], raised: [], done: [] });
    await screen.findByText("Nothing waits for your decision.");
    lists.waiting.push(waiting);
    act(() =>
      bus.emit(
        asHubEvent({
          id: "evt_1",
          type: "approval.requested",
          version: "0.1",
          occurredAt: "2026-07-24T12:00:00.000Z",
          workspaceId: "ws_1",
          sequence: 40,
          payload: { approvalId: "apr_w" },
        }),
      ),
    );
    expect(await screen.findByRole("link", { name: /Publish draft-7 of plant-1/ })).toBeVisible();
    await waitFor(() => expect(approvals.mock.calls.length).toBeGreaterThanOrEqual(2));
  });
});
