import { render, screen } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { ToolCallCard } from "../ToolCallCard";
import { fakeToolApi, makeCall } from "../testing";
import { formatProblem } from "../../answering/formats";

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
    expect(formatProblem(null, "anything")).toBeNull();
    expect(formatProblem("text", "  ")).toMatch(/required/);
    expect(formatProblem("url", "https://example.test")).toBeNull();
    expect(formatProblem("url", "example.test")).toMatch(/web address/);
    expect(formatProblem("number", "2.5")).toBeNull();
    expect(formatProblem("number", "two")).toMatch(/number/);
    expect(formatProblem("integer", "42")).toBeNull();
    expect(formatProblem("integer", "4.2")).toMatch(/whole number/);
  });
});
