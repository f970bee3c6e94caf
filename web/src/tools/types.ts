// What every tool module of the app provides (seed 000 §4): its definition, how it renders a
// pending call, and how it answers — by a person's hand, or by itself.

import type { ComponentType } from "react";
import type { CanvasInstance, ToolCall, ToolDefinition, ToolError, ToolResultBody } from "../api/types";
import type { IconName } from "../ui";

/** A tool's answer: a result (`message` and the tool's own fields) or an error. */
export type ToolOutcome = { result: ToolResultBody } | { error: ToolError };

/** What a renderer may read from the hub. */
export interface ToolReadApi {
  canvas(instanceId: string): Promise<CanvasInstance>;
}

export interface ToolRenderProps {
  call: ToolCall;
  /** True while an answer is on its way: every control is disabled. */
  busy: boolean;
  submit: (outcome: ToolOutcome) => void;
  api: ToolReadApi;
}

export interface ToolModule {
  name: string;
  definition: ToolDefinition;
  icon: IconName;
  /** The card's heading while the call waits ("Choose an option"), and once it is over. */
  label: string;
  doneLabel: string;
  /** The question in words, for the card's title. */
  title: (call: ToolCall) => string;
  /** The app answers by itself (the calculator computes, the canvas draws): no person needed. */
  answerAutomatically?: (call: ToolCall) => ToolOutcome;
  /** The pending call's controls (for a person) or its display (for an automatic tool). */
  Renderer: ComponentType<ToolRenderProps>;
  /** The result in words for the read-only card ("staging", "yes", "2 + 3 = 5"). */
  describe: (call: ToolCall) => string;
}

export function result(message: string, fields: Record<string, unknown> = {}): ToolOutcome {
  return { result: { message, ...fields } };
}

export function failure(code: string, message: string): ToolOutcome {
  return { error: { code, message } };
}
