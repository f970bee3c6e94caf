import { vi } from "vitest";
import { ApiError } from "../api/client";
import type { HubEvent, Interaction, InteractionRequest, InteractionResponse } from "../api/types";

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
    agentName: null,
    taskTitle: null,
    cancelReason: null,
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

/** An event as a test writes it: the envelope and only the payload fields the code under test
 * reads (the hub sends more), so its type is taken on trust here, in one place. */
export interface LooseEvent {
  id: string;
  type: string;
  version: string;
  occurredAt: string;
  workspaceId: string;
  payload: Record<string, unknown>;
  sequence?: number | null;
  actor?: string | null;
  taskId?: string | null;
  conversationId?: string | null;
  correlationId?: string | null;
}

export function asHubEvent(event: LooseEvent): HubEvent {
  return { actor: null, ...event } as HubEvent;
}
