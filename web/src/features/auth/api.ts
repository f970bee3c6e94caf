// Sign-up options, passwords, other sessions and invitations (src/lineup/hub/api/auth.py and
// src/lineup/hub/api/invitations.py).

import type { Transport } from "../../api/client";

const enc = encodeURIComponent;

/** `GET /api/auth/options`, asked before anyone is signed in. */
export interface AuthOptions {
  /** open: anyone; invite: only with an invitation code; closed: accounts come from the operator. */
  signup: "open" | "invite" | "closed";
  /** False on a new hub: its first visitor creates the first account. */
  hasAccounts: boolean;
}

export interface Invitation {
  id: string;
  role: string;
  /** The project it also joins, with the role there; null for the workspace alone. */
  projectId: string | null;
  projectRole: "owner" | "editor" | "viewer" | null;
  createdBy: string;
  createdAt: string;
  expiresAt: string;
  usedAt: string | null;
  status: "open" | "used" | "expired";
}

export interface CreatedInvitation extends Invitation {
  /** Shown once; the hub keeps only its hash. */
  code: string;
}

export class AuthApi {
  constructor(readonly transport: Transport) {}

  options(): Promise<AuthOptions> {
    return this.transport.get("/api/auth/options");
  }

  changePassword(currentPassword: string, newPassword: string): Promise<{ signedOutSessions: number }> {
    return this.transport.post("/api/auth/password", { currentPassword, newPassword });
  }

  signOutOthers(): Promise<{ signedOutSessions: number }> {
    return this.transport.post("/api/auth/signout-others", {});
  }

  acceptInvitation(code: string): Promise<{ workspaceId: string }> {
    return this.transport.post("/api/invitations/accept", { code });
  }

  invitations(workspaceId: string): Promise<{ invitations: Invitation[] }> {
    return this.transport.get(`/api/workspaces/${enc(workspaceId)}/invitations`);
  }

  createInvitation(
    workspaceId: string,
    into: { projectId?: string; projectRole?: Invitation["projectRole"] } = {},
  ): Promise<CreatedInvitation> {
    return this.transport.post(`/api/workspaces/${enc(workspaceId)}/invitations`, into);
  }

  revokeInvitation(workspaceId: string, invitationId: string): Promise<void> {
    return this.transport.request("DELETE", `/api/workspaces/${enc(workspaceId)}/invitations/${enc(invitationId)}`);
  }
}

/** The address to send someone: the sign-up screen with the code filled in. */
export function invitationLink(code: string, origin: string = window.location.origin): string {
  return `${origin}/signup?invite=${enc(code)}`;
}
