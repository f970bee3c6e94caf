// Whether something the hub sent on to an agent (a person's message, an answer) has reached
// the agent's connection, from what the hub says of the agent: the hub sends a fact on the
// agent's live connection when it is recorded, and replays what the agent missed when it
// connects again. So it was delivered when a connection of the agent was open at that moment
// or opened after it; otherwise it waits in the hub's log for the agent to reconnect.

import type { Agent, Iso } from "../../api/types";

export type Delivery = "delivered" | "queued" | "revoked";

function ms(value: Iso | null | undefined): number | null {
  if (!value) return null;
  const t = Date.parse(value);
  return Number.isNaN(t) ? null : t;
}

export function deliveryOf(
  sentAt: Iso | null | undefined,
  agent: Pick<Agent, "status" | "connectedAt" | "offlineAt"> | undefined,
): Delivery | null {
  const at = ms(sentAt);
  if (at === null || !agent) return null;
  const connected = ms(agent.connectedAt);
  const offline = ms(agent.offlineAt);
  if (connected !== null) {
    if (connected >= at) return "delivered"; // replayed when it connected again
    if (agent.status === "online") return "delivered"; // its connection was open since before
    if (offline !== null && offline >= at) return "delivered"; // that connection ended later
  }
  return agent.status === "revoked" ? "revoked" : "queued";
}

export function deliveryText(delivery: Delivery, agentName: string): string {
  if (delivery === "delivered") return `Delivered to ${agentName}`;
  if (delivery === "revoked") return `Not delivered: ${agentName} was revoked`;
  return `Queued — delivered when ${agentName} reconnects`;
}
