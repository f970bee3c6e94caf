// The app's tool registry: one module per tool (web/src/tools/<name>/), looked up by name.

import type { ToolCall } from "../api/types";
import { calculator } from "./calculator/calculator";
import { canvas } from "./canvas/canvas";
import { choice } from "./choice/choice";
import { confirm } from "./confirm/confirm";
import { actionSchema } from "./definitions";
import { input } from "./input/input";
import { describeProblems, validate, type Problem } from "./schema";
import type { ToolModule } from "./types";

export const TOOL_MODULES: readonly ToolModule[] = [choice, confirm, input, calculator, canvas];

const BY_NAME = new Map(TOOL_MODULES.map((m) => [m.name, m]));

export function toolModule(name: string): ToolModule | undefined {
  return BY_NAME.get(name);
}

/** What this app registers with the hub for its device (seed 000 §4.6). */
export function registeredDefinitions() {
  return TOOL_MODULES.map((m) => m.definition);
}

/** Check a call's arguments against the tool's inputSchema before rendering it. */
export function checkCall(call: Pick<ToolCall, "name" | "action" | "arguments">): { problems: Problem[]; message: string } {
  const module = toolModule(call.name);
  if (!module) return { problems: [{ path: "", problem: `this app has no tool ${call.name}` }], message: `This app has no tool called ${call.name}.` };
  const schema = actionSchema(module.definition, call.action);
  if (!schema) {
    return {
      problems: [{ path: "", problem: `no action ${String(call.action)}` }],
      message: `The ${call.name} tool has no action ${JSON.stringify(call.action)}.`,
    };
  }
  const problems = validate(schema, call.arguments);
  return { problems, message: describeProblems(problems) };
}
