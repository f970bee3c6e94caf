// The built-in tools' definitions (seed 000 §4.2), exactly as the hub defines them
// (src/lineup/protocol/builtin_tools.py; a Python test checks builtin-tools.json against it).

import type { JsonSchema, ToolDefinition } from "../api/types";
import builtin from "./builtin-tools.json";

export const BUILTIN_DEFINITIONS = builtin as ToolDefinition[];

export function builtinDefinition(name: string): ToolDefinition {
  const found = BUILTIN_DEFINITIONS.find((d) => d.name === name);
  if (!found) throw new Error(`no built-in tool ${name}`);
  return found;
}

/** The inputSchema a call of `action` must satisfy, or null when the tool has no such action.
 * An action tool takes no action, its own name, or "select" (seed 000 §5.1). */
export function actionSchema(definition: ToolDefinition, action: string | null): JsonSchema | null {
  if (definition.type === "action") {
    return action === null || action === definition.name || action === "select" ? definition.inputSchema : null;
  }
  return definition.actions.find((a) => a.name === action)?.inputSchema ?? null;
}
