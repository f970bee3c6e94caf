import { render, screen } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { ToolCallCard } from "../ToolCallCard";
import { answered, fakeToolApi, makeCall } from "../testing";

const call = makeCall("confirm", null, { message: "Restart the server?" });

describe("the confirm tool", () => {
  it("asks yes or no and answers yes with confirmed true", async () => {
    const api = fakeToolApi(call);
    const user = userEvent.setup();
    render(<ToolCallCard call={call} api={api} />);
    expect(screen.getByRole("heading", { name: "Restart the server?" })).toBeVisible();
    await user.click(screen.getByRole("button", { name: "Yes" }));
    expect(api.answerToolCall).toHaveBeenCalledWith(call.id, { result: { message: "yes", confirmed: true } }, expect.any(String));
    expect(await screen.findByText("Yes", { selector: ".outcome-answer" })).toBeVisible();
  });

  it("answers no with the keyboard (Space)", async () => {
    const api = fakeToolApi(call);
    const user = userEvent.setup();
    render(<ToolCallCard call={call} api={api} />);
    await user.tab();
    await user.tab();
    expect(screen.getByRole("button", { name: "No" })).toHaveFocus();
    await user.keyboard(" ");
    expect(api.answerToolCall).toHaveBeenCalledWith(call.id, { result: { message: "no", confirmed: false } }, expect.any(String));
  });

  it("shows who answered once the call is over", () => {
    render(<ToolCallCard call={answered(call, { result: { message: "no", confirmed: false } })} api={fakeToolApi(call)} />);
    expect(screen.getByText("No", { selector: ".outcome-answer" })).toBeVisible();
    expect(screen.getByText("Ana")).toBeVisible();
    expect(screen.queryByRole("button", { name: "Yes" })).not.toBeInTheDocument();
  });
});
