// Layered settings, developer tokens, accounts on outside systems and the projects an
// invitation may name (src/lineup/hub/api/settings.py, tokens.py, bindings.py, governance.py).

import type { Transport } from "../../api/client";
import type { components } from "../../api/generated/openapi";

type Schemas = components["schemas"];
const enc = encodeURIComponent;

export type SettingsPlace = Schemas["SettingsView"];
export type Setting = Schemas["SettingView"];
export type Level = Setting["level"];
export type LevelValues = Schemas["LevelValues"];
export type DeveloperToken = Schemas["TokenView"];
export type CreatedToken = Schemas["CreatedToken"];
export type Scope = DeveloperToken["scopes"][number];
export type ProjectSummary = Schemas["ProjectView"];
export type ProjectRole = NonNullable<ProjectSummary["role"]>;
export type AccountBinding = Schemas["AccountView"];
export type SignedInSession = Schemas["SessionView"];

export const LEVEL_LABEL: Record<Level, string> = {
  system: "Hub default",
  workspace: "Workspace",
  project: "Project",
  user: "You",
  conversation: "Conversation",
};

export class PeopleApi {
  constructor(readonly transport: Transport) {}

  settings(workspaceId: string, where: { projectId?: string; conversationId?: string } = {}): Promise<SettingsPlace> {
    const query = new URLSearchParams();
    if (where.projectId) query.set("projectId", where.projectId);
    if (where.conversationId) query.set("conversationId", where.conversationId);
    const q = query.toString();
    return this.transport.get(`/api/workspaces/${enc(workspaceId)}/settings${q ? `?${q}` : ""}`);
  }

  /** Set (null: clear) values at one level, all or none. */
  putSettings(workspaceId: string, level: Level, scopeId: string, values: Record<string, unknown>): Promise<LevelValues> {
    return this.transport.request("PUT", `/api/workspaces/${enc(workspaceId)}/settings/${enc(level)}/${enc(scopeId)}`, {
      body: values,
    });
  }

  projects(workspaceId: string): Promise<{ projects: ProjectSummary[] }> {
    return this.transport.get(`/api/workspaces/${enc(workspaceId)}/projects`);
  }

  sessions(): Promise<{ sessions: SignedInSession[] }> {
    return this.transport.get("/api/auth/sessions");
  }

  endSession(sessionId: string): Promise<void> {
    return this.transport.request("DELETE", `/api/auth/sessions/${enc(sessionId)}`);
  }

  endOtherSessions(): Promise<{ signedOutSessions: number }> {
    return this.transport.post("/api/auth/signout-others", {});
  }

  tokens(): Promise<{ tokens: DeveloperToken[] }> {
    return this.transport.get("/api/tokens");
  }

  createToken(body: { name: string; scopes: Scope[]; expiresInDays?: number; workspaceId?: string }): Promise<CreatedToken> {
    return this.transport.post("/api/tokens", body);
  }

  revokeToken(tokenId: string): Promise<void> {
    return this.transport.request("DELETE", `/api/tokens/${enc(tokenId)}`);
  }

  accounts(workspaceId: string): Promise<{ accounts: AccountBinding[] }> {
    return this.transport.get(`/api/workspaces/${enc(workspaceId)}/bindings`);
  }

  /** Where to send the browser to sign in to the system (it comes back to `returnTo`). */
  startOAuth(workspaceId: string, providerId: string, instance: string, returnTo = "/settings"): Promise<{ authorizationUrl: string }> {
    return this.transport.post(`${binding(workspaceId, providerId, instance)}/oauth`, { returnTo });
  }

  /** A username and password, exchanged once by the system; the hub keeps neither. */
  bindPassword(workspaceId: string, providerId: string, instance: string, username: string, password: string): Promise<void> {
    return this.transport.request("POST", `${binding(workspaceId, providerId, instance)}/password`, {
      body: { username, password },
    });
  }

  unbind(workspaceId: string, providerId: string, instance: string): Promise<void> {
    return this.transport.request("DELETE", binding(workspaceId, providerId, instance));
  }
}

function binding(workspaceId: string, providerId: string, instance: string): string {
  return `/api/workspaces/${enc(workspaceId)}/bindings/${enc(providerId)}/${enc(instance)}`;
}
