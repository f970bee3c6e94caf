// Test helpers for the tool modules (imported by *.test.tsx only).

import { vi } from "vitest";
import type { CanvasInstance, ToolAnswer, ToolCall } from "../api/types";

export function makeCall(name: string, action: string | null, args: Record<string, unknown>, overrides: Partial<ToolCall> = {}): ToolCall {
  return {
    id: `tc_${name}_${action ?? "x"}`,
    callId: "c1",
    agentId: "agent_1",
    name,
    action,
    arguments: args,
    status: "pending",
    conversationId: "conv_1",
    taskId: null,
    instanceId: null,
    result: null,
    error: null,
    answeredBy: null,
    answeredByName: null,
    answeredAt: null,
    cancelReason: null,
    timeoutMs: null,
    expiresAt: null,
    createdAt: "2026-07-24T12:00:00.000Z",
    updatedAt: "2026-07-24T12:00:00.000Z",
    sequence: 7,
    ...overrides,
  };
}

export function answered(call: ToolCall, answer: ToolAnswer, by = "Ana"): ToolCall {
  return {
    ...call,
    status: answer.error ? "failed" : "completed",
    result: answer.result ?? null,
    error: answer.error ?? null,
    answeredBy: "user:u1",
    answeredByName: by,
    answeredAt: "2026-07-24T12:05:00.000Z",
  };
}

export function makeCanvas(overrides: Partial<CanvasInstance> = {}): CanvasInstance {
  return {
    id: "inst_1",
    agentId: "agent_1",
    toolCallId: "tc_open",
    conversationId: "conv_1",
    taskId: null,
    width: 400,
    height: 300,
    status: "open",
    strokes: [],
    operations: 0,
    undone: 0,
    createdAt: "2026-07-24T12:00:00.000Z",
    updatedAt: "2026-07-24T12:00:00.000Z",
    lastSequence: 9,
    ...overrides,
  };
}

export function fakeToolApi(call: ToolCall, canvas: CanvasInstance = makeCanvas()) {
  return {
    answerToolCall: vi.fn(async (_id: string, answer: ToolAnswer, _key?: string) => answered(call, answer)),
    toolCall: vi.fn(async (_id: string) => call),
    canvas: vi.fn(async (_id: string) => canvas),
  };
}
