import { render, screen } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { ManualBus, RealtimeBusProvider } from "../../realtime/RealtimeProvider";
import { ToolCallCard } from "../ToolCallCard";
import { answered, fakeToolApi, makeCall } from "../testing";
import { asHubEvent } from "../../test/fixtures";
import { choiceAnswer } from "./choice";

const call = makeCall("choice", "select", { question: "Deploy where?", options: ["test", "staging", "production"] });

function card(c = call, api = fakeToolApi(c), bus = new ManualBus()) {
  const user = userEvent.setup();
  render(
    <RealtimeBusProvider value={bus}>
      <ToolCallCard call={c} api={api} agentName="builder" />
    </RealtimeBusProvider>,
  );
  return { user, api, bus };
}

describe("the choice tool", () => {
  it("shows the question and one button per option, waiting for you", () => {
    card();
    expect(screen.getByRole("heading", { name: "Deploy where?" })).toBeVisible();
    expect(screen.getAllByRole("button").map((b) => b.textContent)).toEqual(["test", "staging", "production"]);
    expect(screen.getByText("Waiting for you")).toBeVisible();
  });

  it("answers with the chosen option and its index, by keyboard", async () => {
    const { user, api } = card();
    await user.tab();
    await user.tab();
    expect(screen.getByRole("button", { name: "staging" })).toHaveFocus();
    await user.keyboard("{Enter}");
    expect(api.answerToolCall).toHaveBeenCalledWith(call.id, { result: { message: "staging", index: 1 } }, expect.stringMatching(/^web-/));
    expect(await screen.findByText("staging", { selector: ".outcome-answer" })).toBeVisible();
    expect(screen.getByText("Answered")).toBeVisible();
    expect(screen.queryByRole("button", { name: "test" })).not.toBeInTheDocument();
  });

  it("builds the answer the hub accepts", () => {
    expect(choiceAnswer(["a", "b"], "b")).toEqual({ result: { message: "b", index: 1 } });
  });

  it("turns read-only when another device answers first", async () => {
    const { bus } = card();
    const { act } = await import("@testing-library/react");
    act(() =>
      bus.emit(asHubEvent({
        id: "e1",
        type: "tool.completed",
        version: "0.1",
        occurredAt: "2026-07-24T12:06:00.000Z",
        workspaceId: "ws",
        sequence: 20,
        payload: { toolCallId: call.id, result: { message: "production" }, answeredBy: "user:u2", answeredByName: "Bo", answeredAt: 1 },
      })),
    );
    expect(screen.getByText("production", { selector: ".outcome-answer" })).toBeVisible();
    expect(screen.getByText("Bo")).toBeVisible();
  });

  it("shows a conflict in words and the answer that stands", async () => {
    const api = fakeToolApi(call);
    const { ApiError } = await import("../../api/client");
    api.answerToolCall.mockRejectedValueOnce(new ApiError("conflict", "This call was already answered by Bo at 12:05; the first answer stands.", 409));
    api.toolCall.mockResolvedValueOnce(answered(call, { result: { message: "test" } }, "Bo"));
    const { user } = card(call, api);
    await user.click(screen.getByRole("button", { name: "staging" }));
    expect(await screen.findByText(/Your answer was not recorded: This call was already answered by Bo/)).toBeVisible();
    expect(screen.getByText("test", { selector: ".outcome-answer" })).toBeVisible();
  });
});
