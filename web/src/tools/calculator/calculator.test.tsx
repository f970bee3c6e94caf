import { render, screen } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { ToolCallCard } from "../ToolCallCard";
import { answered, fakeToolApi, makeCall } from "../testing";
import { compute, computation } from "./calculator";

describe("the calculator tool", () => {
  it("computes the four actions as the hub checks them", () => {
    expect(compute("add", { a: 2, b: 3 })).toEqual({ result: { message: "5", value: 5 } });
    expect(compute("subtract", { a: 2, b: 3.5 })).toEqual({ result: { message: "-1.5", value: -1.5 } });
    expect(compute("multiply", { a: 2.5, b: 4 })).toEqual({ result: { message: "10", value: 10 } });
    expect(compute("divide", { a: 1, b: 4 })).toEqual({ result: { message: "0.25", value: 0.25 } });
  });

  it("answers invalid_argument for dividing by zero, non-numbers and overflow", () => {
    expect(compute("divide", { a: 1, b: 0 })).toEqual({ error: { code: "invalid_argument", message: "Cannot divide by zero." } });
    expect(compute("add", { a: "1", b: 2 })).toMatchObject({ error: { code: "invalid_argument" } });
    expect(compute("multiply", { a: 1e308, b: 10 })).toMatchObject({ error: { message: "The result is not a finite number." } });
    expect(compute("power", { a: 1, b: 2 })).toMatchObject({ error: { code: "invalid_argument" } });
  });

  it("shows the person the computation while it answers", () => {
    const call = makeCall("calculator", "add", { a: 2, b: 3 });
    render(<ToolCallCard call={call} api={fakeToolApi(call)} />);
    expect(screen.getByText("2 + 3 = 5")).toBeVisible();
    expect(screen.getByText("Working")).toBeVisible();
    expect(screen.queryByRole("button")).not.toBeInTheDocument();
  });

  it("shows the computed answer once recorded, and a division by zero as an error", () => {
    const call = makeCall("calculator", "divide", { a: 1, b: 4 });
    const { unmount } = render(<ToolCallCard call={answered(call, { result: { message: "0.25", value: 0.25 } }, "")} api={fakeToolApi(call)} />);
    expect(screen.getByText("1 ÷ 4 = 0.25")).toBeVisible();
    expect(screen.getByText(/answered automatically/)).toBeVisible();
    unmount();
    const zero = makeCall("calculator", "divide", { a: 1, b: 0 });
    render(<ToolCallCard call={answered(zero, { error: { code: "invalid_argument", message: "Cannot divide by zero." } }, "")} api={fakeToolApi(zero)} />);
    expect(screen.getByText("Cannot divide by zero.")).toBeVisible();
    expect(screen.getByText("Error")).toBeVisible();
    expect(computation(zero)).toBe("1 ÷ 0: Cannot divide by zero.");
  });
});
