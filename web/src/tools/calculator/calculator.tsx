// calculator (a toolset): add, subtract, multiply, divide — computed by this app, which
// answers by itself and shows the person the computation. Dividing by zero, a non-number or
// a result that is not a finite number is answered `invalid_argument`.

import type { ToolCall } from "../../api/types";
import { Icon } from "../../ui";
import { builtinDefinition } from "../definitions";
import { failure, result, type ToolModule, type ToolOutcome, type ToolRenderProps } from "../types";

const SYMBOL: Record<string, string> = { add: "+", subtract: "−", multiply: "×", divide: "÷" };

function isNumber(value: unknown): value is number {
  return typeof value === "number" && Number.isFinite(value);
}

/** The calculator's answer to `action` on `a` and `b` (as the hub checks it). */
export function compute(action: string | null, args: Record<string, unknown>): ToolOutcome {
  const { a, b } = args;
  if (!isNumber(a) || !isNumber(b)) return failure("invalid_argument", "a and b must be numbers.");
  let value: number;
  switch (action) {
    case "add":
      value = a + b;
      break;
    case "subtract":
      value = a - b;
      break;
    case "multiply":
      value = a * b;
      break;
    case "divide":
      if (b === 0) return failure("invalid_argument", "Cannot divide by zero.");
      value = a / b;
      break;
    default:
      return failure("invalid_argument", `The calculator has no action ${JSON.stringify(action)}.`);
  }
  if (!Number.isFinite(value)) return failure("invalid_argument", "The result is not a finite number.");
  return result(String(value), { value });
}

/** "2 + 3" */
export function expression(call: Pick<ToolCall, "action" | "arguments">): string {
  return `${String(call.arguments.a)} ${SYMBOL[call.action ?? ""] ?? call.action} ${String(call.arguments.b)}`;
}

/** "2 + 3 = 5", or "1 ÷ 0: Cannot divide by zero." */
export function computation(call: Pick<ToolCall, "action" | "arguments">): string {
  const outcome = compute(call.action, call.arguments);
  return "result" in outcome ? `${expression(call)} = ${outcome.result.message}` : `${expression(call)}: ${outcome.error.message}`;
}

function CalculatorRenderer({ call }: ToolRenderProps) {
  return (
    <p className="tool-computation">
      <Icon name="running" size={16} /> <span className="tool-expression">{computation(call)}</span>
      <span className="muted"> — computing here and sending the answer…</span>
    </p>
  );
}

export const calculator: ToolModule = {
  name: "calculator",
  definition: builtinDefinition("calculator"),
  icon: "plus",
  label: "Calculation",
  doneLabel: "Calculation",
  title: (call) => expression(call),
  answerAutomatically: (call) => compute(call.action, call.arguments),
  Renderer: CalculatorRenderer,
  describe: (call) => (call.result ? `${expression(call)} = ${call.result.message}` : ""),
};
