// This app as a tool runner: it registers its tools for this device, and answers by itself the
// calls of tools it computes (calculator) or draws (canvas) — oldest first, one at a time, so a
// canvas's operations take effect in the order the agent made them. Calls whose arguments do
// not fit the tool's inputSchema are answered `invalid_argument` instead of being rendered.
// Calls a person answers (choice, confirm, input) are left to the cards.

import { useEffect, useRef } from "react";
import { ApiError } from "../api/client";
import type { HubEvent, ToolAnswer, ToolCall, ToolCallStatus, ToolDefinition } from "../api/types";
import { useResource } from "../lib/useResource";
import { deviceId, registerDevice } from "./device";
import { checkCall, registeredDefinitions, toolModule } from "./registry";
import { failure, type ToolOutcome } from "./types";

export interface ToolRunnerApi {
  workspaceId: string;
  registerTools(deviceId: string, tools: ToolDefinition[], name?: string): Promise<unknown>;
  toolCalls(opts?: { status?: ToolCallStatus }): Promise<{ toolCalls: ToolCall[] }>;
  answerToolCall(id: string, answer: ToolAnswer, key?: string): Promise<ToolCall>;
}

const TOOL_EVENTS = (e: HubEvent) => e.type === "tool.called" || e.type === "tool.completed" || e.type === "tool.cancelled";

/** What this app answers for `call` by itself, or null when a person must answer it (or the
 * call is for a tool this app does not have). */
export function automaticAnswer(call: ToolCall): ToolOutcome | null {
  const module = toolModule(call.name);
  if (!module) return null;
  const check = checkCall(call);
  if (check.problems.length > 0) return failure("invalid_argument", check.message);
  return module.answerAutomatically ? module.answerAutomatically(call) : null;
}

/** Answer every automatic call in `calls` (oldest first, one at a time); returns the ids
 * answered or settled elsewhere. An ordering conflict (an earlier canvas call still waits)
 * leaves the call for the next pass. */
export async function answerAutomatically(
  api: Pick<ToolRunnerApi, "answerToolCall">,
  calls: ToolCall[],
  skip: Set<string>,
): Promise<string[]> {
  const settled: string[] = [];
  const queue = calls.filter((c) => c.status === "pending" && !skip.has(c.id)).sort((a, b) => a.sequence - b.sequence);
  for (const call of queue) {
    const outcome = automaticAnswer(call);
    if (!outcome) continue;
    try {
      // One key per call: a retry, or the same answer from another tab, is recorded once.
      await api.answerToolCall(call.id, { ...outcome, deviceId: deviceId() }, `auto-${call.id}`);
      settled.push(call.id);
    } catch (err) {
      const error = err instanceof ApiError ? err : null;
      const ordering = error?.code === "conflict" && typeof error.details.toolCallId === "string" && error.details.toolCallId !== call.id;
      if (ordering) break; // an earlier call first; the next pass comes with its event
      if (error && !error.retryable) settled.push(call.id); // answered elsewhere, or refused
      else break; // offline: try again on the next pass
    }
  }
  return settled;
}

/** Mount where tool calls are shown (Inbox, a conversation): this app is then "open". */
export function useToolRunner(api: ToolRunnerApi): void {
  useEffect(() => {
    registerDevice(api, registeredDefinitions()).catch(() => undefined);
  }, [api]);
  const pending = useResource(() => api.toolCalls({ status: "pending" }).then((r) => r.toolCalls), [api], {
    refreshOn: TOOL_EVENTS,
    debounceMs: 50,
  });
  const running = useRef(false);
  const again = useRef(false);
  const done = useRef(new Set<string>());
  const { data, reload } = pending;
  useEffect(() => {
    if (!data) return;
    if (running.current) {
      again.current = true;
      return;
    }
    running.current = true;
    void answerAutomatically(api, data, done.current)
      .then((ids) => ids.forEach((id) => done.current.add(id)))
      .finally(() => {
        running.current = false;
        if (again.current) {
          again.current = false;
          reload();
        }
      });
  }, [api, data, reload]);
}
