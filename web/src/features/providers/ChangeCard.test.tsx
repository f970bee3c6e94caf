import { render, screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it, vi } from "vitest";
import { ApiError } from "../../api/client";
import type { ProviderChange } from "../../api/types";
import { ManualBus, RealtimeBusProvider } from "../../realtime/RealtimeProvider";
import { failedContract, fakeProvidersApi, makeChange } from "../../test/providers";
import { ChangeCard } from "./ChangeCard";

function card(change: ProviderChange, { canDecide = true } = {}) {
  const { api } = fakeProvidersApi({ changes: [change] });
  const onDecided = vi.fn();
  const user = userEvent.setup();
  render(
    <RealtimeBusProvider value={new ManualBus()}>
      <ChangeCard change={change} api={api} providerName="Project files" canDecide={canDecide} onDecided={onDecided} />
    </RealtimeBusProvider>,
  );
  return { api, user, onDecided };
}

describe("the provider change card", () => {
  it("shows what will change: the action, the versions, the capabilities added, removed and changed", () => {
    card(makeChange());
    expect(screen.getByRole("heading", { name: "Upgrade Project files from 1.0.0 to 1.1.0" })).toBeVisible();
    expect(screen.getByText("Waiting for approval")).toBeVisible();
    const what = screen.getByRole("region", { name: "What will change" });
    expect(what).toHaveTextContent("Upgrade");
    expect(within(what).getByTestId("change-versions")).toHaveTextContent("1.0.0 → 1.1.0");
    expect(screen.getByRole("list", { name: "Added capabilities" })).toHaveTextContent("files.file.delete");
    expect(screen.getByRole("list", { name: "Removed capabilities" })).toHaveTextContent("files.file.rename");
    expect(screen.getByRole("list", { name: "Changed capabilities" })).toHaveTextContent("files.file.write");
    expect(screen.getByTestId("contract-summary")).toHaveTextContent("Passed all 3 checks");
    expect(screen.getByRole("button", { name: "Approve" })).toBeEnabled();
  });

  it("cannot be approved while the contract failed, and shows the failed check with its rule first", async () => {
    const { api, user } = card(makeChange({ contract: failedContract }));
    const approve = screen.getByRole("button", { name: "Approve" });
    expect(approve).toBeDisabled();
    expect(approve).toHaveAccessibleDescription(/The contract kit failed 1 check/);
    const contract = screen.getByRole("region", { name: "Contract" });
    expect(within(contract).getByTestId("contract-summary")).toHaveTextContent("Failed 1 of 4 checks");
    // the failing capability's group comes first, its failed check first in it
    const groups = within(contract).getAllByRole("region");
    expect(groups[0]).toHaveAccessibleName("files.file.write");
    const first = within(groups[0]!).getAllByRole("listitem")[0]!;
    expect(first).toHaveTextContent("Failed: Idempotent replay");
    expect(first).toHaveTextContent("idempotent.replay");
    expect(first).toHaveTextContent("the second call with the same key wrote the file again");
    await user.click(approve);
    expect(api.decideProviderChange).not.toHaveBeenCalled();
  });

  it("cannot be approved while something blocks it, and says what", () => {
    card(makeChange({ action: "uninstall", toVersion: null, contract: null, blockers: ["2 executions in flight"] }));
    expect(screen.getByRole("region", { name: "Blockers" })).toHaveTextContent("2 executions in flight");
    const approve = screen.getByRole("button", { name: "Approve" });
    expect(approve).toBeDisabled();
    expect(approve).toHaveAccessibleDescription(/2 executions in flight/);
  });

  it("approves, then shows who approved and that it is applied", async () => {
    const { api, user, onDecided } = card(makeChange());
    await user.click(screen.getByRole("button", { name: "Approve" }));
    expect(api.decideProviderChange).toHaveBeenCalledWith("chg_1", { approve: true }, expect.stringMatching(/^web-/));
    const outcome = await screen.findByRole("region", { name: "Outcome" });
    expect(outcome).toHaveTextContent("Ana approved");
    expect(outcome).toHaveTextContent("the change is applied");
    expect(outcome).toHaveFocus();
    expect(screen.getByText("Applied")).toBeVisible();
    expect(onDecided).toHaveBeenCalledWith(expect.objectContaining({ status: "applied" }));
    expect(screen.queryByRole("button", { name: "Approve" })).not.toBeInTheDocument();
  });

  it("rejects only with a reason", async () => {
    const { api, user } = card(makeChange());
    await user.click(screen.getByRole("button", { name: "Reject…" }));
    await user.click(screen.getByRole("button", { name: "Reject" }));
    expect(screen.getByRole("alert")).toHaveTextContent("Say why");
    expect(api.decideProviderChange).not.toHaveBeenCalled();
    await user.type(screen.getByLabelText("Why are you rejecting it?"), "Not before the release");
    await user.click(screen.getByRole("button", { name: "Reject" }));
    expect(api.decideProviderChange).toHaveBeenCalledWith(
      "chg_1",
      { approve: false, reason: "Not before the release" },
      expect.any(String),
    );
    const outcome = await screen.findByRole("region", { name: "Outcome" });
    expect(outcome).toHaveTextContent("Ana rejected");
    expect(outcome).toHaveTextContent("“Not before the release”");
  });

  it("says why an approval the hub refused was not recorded, and stays open", async () => {
    const change = makeChange();
    const { api, user } = card(change);
    api.decideProviderChange.mockRejectedValueOnce(
      new ApiError("conflict", "An execution started on files: approve again once it ends.", 409),
    );
    await user.click(screen.getByRole("button", { name: "Approve" }));
    expect(await screen.findByText(/Your answer was not recorded: An execution started on files/)).toBeVisible();
    expect(api.providerChanges).toHaveBeenCalledWith("all");
    expect(screen.getByRole("button", { name: "Approve" })).toBeEnabled();
  });

  it("is read-only for whoever is not a workspace owner", () => {
    card(makeChange(), { canDecide: false });
    expect(screen.queryByRole("button", { name: "Approve" })).not.toBeInTheDocument();
    expect(screen.queryByRole("button", { name: "Reject…" })).not.toBeInTheDocument();
    expect(screen.getByText(/workspace owners decide it/)).toBeVisible();
  });

  it("shows a change that failed to apply with the hub's reason", () => {
    card(
      makeChange({
        status: "failed",
        decidedBy: { userId: "u2", name: "Bo" },
        decidedAt: "2026-07-24T12:20:00.000Z",
        reason: "the new version did not start",
      }),
    );
    const outcome = screen.getByRole("region", { name: "Outcome" });
    expect(outcome).toHaveTextContent("Bo approved");
    expect(outcome).toHaveTextContent("applying it failed: “the new version did not start”");
  });
});
