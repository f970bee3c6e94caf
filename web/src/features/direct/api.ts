// Direct mode (seed 000 §3.1): the agent serves LineUp itself, with no hub.
// The hub's src/lineup/hub/api/direct.py: which LineUp this is, and the token → session exchange.

import type { Transport } from "../../api/client";
import type { SignUpResult } from "../../api/types";

/** `GET /api/direct`: a hub, or one agent in direct mode, and the cookie that carries the
 * CSRF token (direct mode names its own, so a hub and agents on one host keep separate sessions). */
export type DirectInfo = ({ mode: "hub" } | { mode: "direct"; agentName: string }) & { csrfCookie?: string };

export class DirectApi {
  constructor(readonly transport: Transport) {}

  info(): Promise<DirectInfo> {
    return this.transport.get("/api/direct");
  }

  /** The pre-shared token for the same session cookie and CSRF token sign-in gives. */
  startSession(token: string): Promise<SignUpResult> {
    return this.transport.post("/api/direct/session", { token });
  }
}
