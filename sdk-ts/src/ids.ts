import { createHash, randomBytes } from "node:crypto";

/**
 * `prefix_` + 26 hex digits of sha256(agent, scope, step): stable across restarts, so a frame
 * resent after a crash is the same frame to the hub. The same derivation as the Python SDK's.
 */
export function deriveId(prefix: string, agentId: string, scope: string, index: number | string): string {
  const digest = createHash("sha256").update(`${agentId}\x1f${scope}\x1f${index}`).digest("hex");
  return `${prefix}_${digest.slice(0, 26)}`;
}

/** A fresh id for something that is never resent as itself (heartbeats, deltas, queries). */
export function newId(prefix: string): string {
  return `${prefix}_${Date.now().toString(36)}${randomBytes(10).toString("hex")}`;
}
