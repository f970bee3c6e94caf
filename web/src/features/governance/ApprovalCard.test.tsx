import { act, render, screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import type { Approval } from "../../api/types";
import { ManualBus, RealtimeBusProvider } from "../../realtime/RealtimeProvider";
import { asHubEvent } from "../../test/fixtures";
import { ApprovalCard } from "./ApprovalCard";
import { conflictOf, decided, fakeApprovalApi, makeApproval } from "../../test/governance";
import { redact, timeLeft } from "./status";

function card(approval: Approval, api = fakeApprovalApi(approval), bus = new ManualBus()) {
  const user = userEvent.setup();
  const view = render(
    <RealtimeBusProvider value={bus}>
      <ApprovalCard approval={approval} api={api} agentName="planner" meId="u1" />
    </RealtimeBusProvider>,
  );
  return { user, api, bus, ...view };
}

describe("the confirm card", () => {
  it("shows what will change: action, target, impact, parameters, version, expiry and who it waits for", async () => {
    const { container } = card(makeApproval());
    expect(screen.getByRole("heading", { name: "Publish draft-7 as schedule version 4 of plant-1" })).toBeVisible();
    expect(screen.getByRole("region", { name: "Impact" })).toHaveTextContent("12 operations move on 3 machines");
    const what = screen.getByRole("region", { name: "What will run" });
    expect(what).toHaveTextContent("scheduling.schedule.publish");
    expect(what).toHaveTextContent("plant-1");
    expect(within(what).getByTestId("resource-version")).toHaveTextContent("3");
    expect(what).toHaveTextContent("draftId draft-7");
    // status in words, not colour alone
    expect(screen.getByText("Waiting for approval")).toBeVisible();
    expect(screen.getByText(/Expires in/)).toHaveTextContent(/Expires in (9|10):\d\d/);
    expect(await screen.findByText(/Waits for any owner or editor of Plant 1 scheduling/)).toBeVisible();
    // the full parameters and the digest they are bound to are folded away
    const params = container.querySelector("details")!;
    expect(params.open).toBe(false);
    expect(within(params).getByText(/sha256:9f86d081884c/)).toBeInTheDocument();
  });

  it("never shows a value whose name says it is a secret", () => {
    const { container } = card(makeApproval({ params: { draftId: "draft-7", apiToken: "s3cret" }, draft: { password: "hunter2" } }));
    expect(container).not.toHaveTextContent("s3cret");
    expect(container).not.toHaveTextContent("hunter2");
    expect(screen.getByRole("region", { name: "What will run" })).toHaveTextContent("apiToken ••• hidden");
  });

  it("approves once with the keyboard and shows who approved, with the way to the run record", async () => {
    const { user, api } = card(makeApproval());
    await user.tab();
    expect(screen.getByRole("button", { name: "Approve once" })).toHaveFocus();
    await user.keyboard("{Enter}");
    expect(api.decide).toHaveBeenCalledWith("apr_1", { decision: "approve" }, expect.stringMatching(/^web-/));
    const outcome = await screen.findByRole("region", { name: "Outcome" });
    expect(outcome).toHaveTextContent("Ana approved");
    expect(outcome).toHaveFocus();
    expect(within(outcome).getByRole("link", { name: "Open the run record" })).toHaveAttribute("href", "/runs/exe_1");
    expect(screen.queryByRole("button", { name: "Approve once" })).not.toBeInTheDocument();
    expect(screen.getByText("Approved")).toBeVisible();
  });

  it("approves with a standing permission for some minutes, calls and a range of a numeric parameter", async () => {
    const { user, api } = card(makeApproval());
    await user.click(screen.getByRole("button", { name: /Approve and don’t ask again/ }));
    await user.clear(screen.getByLabelText("For how many minutes"));
    await user.type(screen.getByLabelText("For how many minutes"), "30");
    await user.type(screen.getByLabelText("For how many calls"), "5");
    await user.type(screen.getByLabelText("Highest basedOnVersion"), "10");
    await user.click(screen.getByRole("button", { name: "Approve and allow" }));
    expect(api.decide).toHaveBeenCalledWith(
      "apr_1",
      { decision: "approve", standing: { minutes: 30, calls: 5, bounds: { basedOnVersion: { max: 10 } } } },
      expect.any(String),
    );
    expect(await screen.findByRole("region", { name: "Outcome" })).toHaveTextContent("standing permission");
  });

  it("asks for minutes or calls before granting a standing permission", async () => {
    const { user, api } = card(makeApproval());
    await user.click(screen.getByRole("button", { name: /Approve and don’t ask again/ }));
    await user.clear(screen.getByLabelText("For how many minutes"));
    await user.click(screen.getByRole("button", { name: "Approve and allow" }));
    expect(screen.getByRole("alert")).toHaveTextContent("Give a number of minutes, of calls, or both.");
    expect(api.decide).not.toHaveBeenCalled();
  });

  it("rejects only with a reason, and shows it", async () => {
    const { user, api } = card(makeApproval());
    await user.click(screen.getByRole("button", { name: "Reject…" }));
    await user.click(screen.getByRole("button", { name: "Reject" }));
    expect(screen.getByRole("alert")).toHaveTextContent("Say why");
    expect(api.decide).not.toHaveBeenCalled();
    await user.type(screen.getByLabelText("Why are you rejecting it?"), "Machine 3 is down on Tuesday");
    await user.click(screen.getByRole("button", { name: "Reject" }));
    expect(api.decide).toHaveBeenCalledWith("apr_1", { decision: "reject", reason: "Machine 3 is down on Tuesday" }, expect.any(String));
    const outcome = await screen.findByRole("region", { name: "Outcome" });
    expect(outcome).toHaveTextContent("Ana rejected");
    expect(outcome).toHaveTextContent("“Machine 3 is down on Tuesday”");
    expect(screen.getByText("Rejected")).toBeVisible();
  });

  it("returns keyboard focus to the button that opened a form when it is cancelled", async () => {
    const { user } = card(makeApproval());
    await user.click(screen.getByRole("button", { name: "Reject…" }));
    expect(screen.getByLabelText("Why are you rejecting it?")).toHaveFocus();
    await user.click(screen.getByRole("button", { name: "Cancel" }));
    expect(screen.getByRole("button", { name: "Reject…" })).toHaveFocus();
  });

  it("on a conflict shows who decided first and turns read-only", async () => {
    const approval = makeApproval();
    const api = fakeApprovalApi(approval);
    api.decide.mockRejectedValueOnce(
      conflictOf(
        { status: "rejected", decidedBy: "user:u2", decidedByName: "Bo" },
        "This approval was already rejected by Bo at 12:04; the first decision stands.",
      ),
    );
    api.approval.mockResolvedValueOnce(decided(approval, { decision: "reject", reason: "Not this week" }, "Bo"));
    const { user } = card(approval, api);
    await user.click(screen.getByRole("button", { name: "Approve once" }));
    const outcome = await screen.findByRole("region", { name: "Outcome" });
    expect(outcome).toHaveTextContent("Your answer was not recorded: This approval was already rejected by Bo");
    expect(outcome).toHaveTextContent("Bo rejected");
    expect(outcome).toHaveTextContent("“Not this week”");
    expect(screen.queryByRole("button", { name: "Approve once" })).not.toBeInTheDocument();
  });

  it("ends with the reason when approving finds it voided", async () => {
    const approval = makeApproval();
    const api = fakeApprovalApi(approval);
    const reason = "plant-1 is at version 4 now, not 3.";
    api.decide.mockRejectedValueOnce(conflictOf({ status: "voided", reason }, `The approval no longer holds: ${reason}`));
    api.approval.mockResolvedValueOnce({ ...approval, status: "voided", reason });
    const { user } = card(approval, api);
    await user.click(screen.getByRole("button", { name: "Approve once" }));
    const outcome = await screen.findByRole("region", { name: "Outcome" });
    expect(outcome).toHaveTextContent(`Voided: ${reason}`);
    expect(screen.getByText("Voided")).toBeVisible();
  });

  it("ends when the hub records it expired", () => {
    const bus = new ManualBus();
    card(makeApproval(), undefined, bus);
    act(() =>
      bus.emit(
        asHubEvent({
          id: "evt_1",
          type: "approval.decided",
          version: "0.1",
          occurredAt: "2026-07-24T12:10:00.000Z",
          workspaceId: "ws_1",
          sequence: 41,
          payload: { approvalId: "apr_1", decision: "expired", invocationId: "ivk_1" },
        }),
      ),
    );
    expect(screen.getByRole("region", { name: "Outcome" })).toHaveTextContent("it expired and the agent was told");
    expect(screen.queryByRole("button", { name: "Approve once" })).not.toBeInTheDocument();
  });

  it("shows a lapsed approval as expired without waiting for the hub", () => {
    card(makeApproval({ expiresAt: new Date(Date.now() - 1000).toISOString() }));
    expect(screen.getByText("Expired")).toBeVisible();
    expect(screen.queryByRole("button", { name: "Approve once" })).not.toBeInTheDocument();
  });

  it("ends when someone else decides it on another device", () => {
    const bus = new ManualBus();
    card(makeApproval(), undefined, bus);
    act(() =>
      bus.emit(
        asHubEvent({
          id: "evt_2",
          type: "approval.decided",
          version: "0.1",
          occurredAt: "2026-07-24T12:06:00.000Z",
          workspaceId: "ws_1",
          sequence: 42,
          payload: { approvalId: "apr_1", decision: "approved", by: "user:u2", byName: "Bo", invocationId: "ivk_1" },
        }),
      ),
    );
    expect(screen.getByRole("region", { name: "Outcome" })).toHaveTextContent("Bo approved");
  });

  it("is read-only for a viewer", async () => {
    card(makeApproval({ canDecide: false }));
    expect(screen.getByText(/owners and editors of the project decide it/)).toBeVisible();
    expect(screen.queryByRole("button", { name: "Approve once" })).not.toBeInTheDocument();
    expect(screen.queryByRole("button", { name: "Reject…" })).not.toBeInTheDocument();
    expect(screen.getByText("Waiting for approval")).toBeVisible();
    expect(await screen.findByText(/Waits for any owner or editor/)).toBeVisible();
  });

  it("hands over to another owner or editor of the project, never to a viewer", async () => {
    const { user, api } = card(makeApproval());
    await user.click(screen.getByRole("button", { name: "Hand over…" }));
    const select = await screen.findByLabelText("Ask someone else to decide");
    const options = within(select).getAllByRole("option").map((o) => o.textContent);
    expect(options).toEqual(["Bo (editor)"]);
    await user.click(screen.getByRole("button", { name: "Hand over" }));
    expect(api.handOver).toHaveBeenCalledWith("apr_1", "u2", expect.any(String));
    expect(await screen.findByText("Waits for Bo")).toBeVisible();
    // still open: handing over is not a decision
    expect(screen.getByRole("button", { name: "Approve once" })).toBeVisible();
  });

  it("shows a retry under the same key when the decision could not be sent", async () => {
    const approval = makeApproval();
    const api = fakeApprovalApi(approval);
    const { ApiError } = await import("../../api/client");
    api.decide.mockRejectedValueOnce(new ApiError("unavailable", "The hub is restarting; try again.", 503));
    const { user } = card(approval, api);
    await user.click(screen.getByRole("button", { name: "Approve once" }));
    expect(await screen.findByText("The hub is restarting; try again.")).toBeVisible();
    const key = api.decide.mock.calls[0]![2];
    await user.click(screen.getByRole("button", { name: "Retry" }));
    expect(api.decide.mock.calls[1]).toEqual(["apr_1", { decision: "approve" }, key]);
    expect(await screen.findByRole("region", { name: "Outcome" })).toHaveTextContent("Ana approved");
  });
});

describe("what a governed screen shows", () => {
  it("hides anything that looks like a credential or an internal key", () => {
    expect(redact({ jobId: "job-1", idempotencyKey: "lineup:exe_1", nested: { apiToken: "x", ok: 1 } })).toEqual({
      jobId: "job-1",
      idempotencyKey: "••• hidden",
      nested: { apiToken: "••• hidden", ok: 1 },
    });
  });

  it("counts down in minutes and seconds under an hour, in hours beyond", () => {
    expect(timeLeft(9 * 60_000 + 58_000)).toBe("9:58");
    expect(timeLeft(24 * 3_600_000)).toBe("24 h");
    expect(timeLeft(90 * 60_000)).toBe("1 h 30 min");
  });
});
