import { render, screen } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { ToolCallCard } from "../ToolCallCard";
import { fakeToolApi, makeCall } from "../testing";
import { inputProblem } from "./input";

describe("the input tool", () => {
  it("checks the format before sending, saying how to fix it", async () => {
    const call = makeCall("input", null, { question: "Your email?", format: "email", placeholder: "you@example.com" });
    const api = fakeToolApi(call);
    const user = userEvent.setup();
    render(<ToolCallCard call={call} api={api} />);
    const field = screen.getByLabelText("Your answer");
    expect(field).toHaveAttribute("placeholder", "you@example.com");
    expect(screen.getByText("An email address")).toBeVisible();
    await user.type(field, "not-an-email{Enter}");
    expect(await screen.findByRole("alert")).toHaveTextContent("Enter an email address");
    expect(field).toHaveAttribute("aria-invalid", "true");
    expect(api.answerToolCall).not.toHaveBeenCalled();
    await user.clear(field);
    await user.type(field, "  ana@example.test {Enter}");
    expect(api.answerToolCall).toHaveBeenCalledWith(call.id, { result: { message: "ana@example.test" } }, expect.any(String));
  });

  it("follows the hub's rules for every format", () => {
    expect(inputProblem(null, "anything")).toBeNull();
    expect(inputProblem("text", "  ")).toMatch(/required/);
    expect(inputProblem("url", "https://example.test")).toBeNull();
    expect(inputProblem("url", "example.test")).toMatch(/web address/);
    expect(inputProblem("number", "2.5")).toBeNull();
    expect(inputProblem("number", "two")).toMatch(/number/);
    expect(inputProblem("integer", "42")).toBeNull();
    expect(inputProblem("integer", "4.2")).toMatch(/whole number/);
  });
});
