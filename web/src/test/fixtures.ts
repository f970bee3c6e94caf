import { vi } from "vitest";
import { ApiError } from "../api/client";
import type { Interaction, InteractionRequest, InteractionResponse } from "../api/types";

export function makeInteraction(
  request: Partial<InteractionRequest> & Pick<InteractionRequest, "type">,
  overrides: Partial<Interaction> = {},
): Interaction {
  const full: InteractionRequest = { id: "int_1", title: "Run the production migration?", ...request };
  return {
    id: full.id,
    type: full.type,
    status: "requested",
    taskId: "task_1",
    conversationId: "conv_1",
    agentId: "agent_1",
    request: full,
    response: null,
    respondedBy: null,
    respondedByName: null,
    respondedAt: null,
    expiresAt: null,
    createdAt: "2026-07-24T12:00:00.000Z",
    sequence: 7,
    ...overrides,
  };
}

export function resolved(i: Interaction, response: InteractionResponse, by = "Ana"): Interaction {
  return {
    ...i,
    status: "resolved",
    response,
    respondedBy: "user:u1",
    respondedByName: by,
    respondedAt: "2026-07-24T12:05:00.000Z",
  };
}

/** A promise you settle from the test, to see the in-between ("Submitting…") state. */
export function deferred<T>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

export function fakeApi(interaction: Interaction) {
  return {
    respond: vi.fn(async (_id: string, response: InteractionResponse, _key?: string) =>
      resolved(interaction, response),
    ),
    interaction: vi.fn(async (_id: string) => interaction),
  };
}

export function conflict(message = "This request was already answered by user:u2; the first answer stands.") {
  return new ApiError("conflict", message, 409, { respondedBy: "user:u2" });
}
