import { render, screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it, vi } from "vitest";
import { Transport } from "../../api/client";
import { SessionProvider } from "../auth/session";
import { DeveloperTokens } from "./DeveloperTokens";
import { InviteSomeone } from "./Invitations";
import { LayeredSettings } from "./LayeredSettings";

function json(status: number, body: unknown): Response {
  return new Response(body === undefined ? null : JSON.stringify(body), {
    status,
    headers: { "Content-Type": "application/json" },
  });
}

const PROJECT = {
  id: "prj_1",
  name: "Books",
  context: null,
  workingDirectory: null,
  createdBy: "user_1",
  createdAt: "2026-12-01T10:00:00.000Z",
  updatedAt: "2026-12-01T10:00:00.000Z",
  role: "owner",
};

const TTL = {
  key: "approvals.ttlMinutes",
  description: "Minutes a confirm card waits.",
  schema: { type: "integer", minimum: 1, maximum: 43200 },
  default: 1440,
  levels: ["workspace", "project", "user", "conversation"],
};

type Handler = (path: string, init?: RequestInit) => Response | undefined;

function hub(handle: Handler) {
  const fetch = vi.fn(async (url: RequestInfo | URL, init?: RequestInit) => {
    const path = String(url);
    if (path === "/api/direct") return json(200, { mode: "hub" });
    if (path === "/api/auth/me") return json(401, { error: { code: "unauthenticated", message: "Sign in." } });
    if (path === "/api/workspaces/ws_1/projects") return json(200, { projects: [PROJECT] });
    return handle(path, init) ?? json(404, { error: { code: "not_found", message: "nothing here" } });
  });
  return { fetch, transport: new Transport(fetch, () => "lineup_csrf=c") };
}

function bodyOf(fetch: ReturnType<typeof vi.fn>, method: string, path: string): unknown {
  const call = fetch.mock.calls.find(([url, init]) => String(url) === path && init?.method === method);
  return call ? JSON.parse(String(call[1]!.body)) : undefined;
}

describe("invitations into a project", () => {
  it("makes an invitation that names the project and the role chosen", async () => {
    const { fetch, transport } = hub((path, init) => {
      if (path === "/api/workspaces/ws_1/invitations" && init?.method === "POST") {
        return json(201, {
          id: "inv_1",
          code: "ABCD-EFGH-JKLM-NPQR",
          role: "member",
          projectId: "prj_1",
          projectRole: "editor",
          createdBy: "user_1",
          createdAt: "2026-12-01T10:00:00.000Z",
          expiresAt: "2026-12-08T10:00:00.000Z",
          usedAt: null,
          status: "open",
        });
      }
      if (path === "/api/workspaces/ws_1/invitations") return json(200, { invitations: [] });
      return undefined;
    });
    const user = userEvent.setup();
    render(
      <SessionProvider transport={transport}>
        <InviteSomeone workspaceId="ws_1" workspaceName="Team" isOwner={false} />
      </SessionProvider>,
    );
    const into = await screen.findByLabelText("Invite into");
    expect(within(into).queryByText("The workspace only")).toBeNull();
    await user.selectOptions(screen.getByLabelText("Role in the project"), "editor");
    await user.click(screen.getByRole("button", { name: "Make an invitation" }));
    expect(await screen.findByText("ABCD-EFGH-JKLM-NPQR")).toBeVisible();
    expect(screen.getByText(/editor of project Books/)).toBeVisible();
    expect(bodyOf(fetch, "POST", "/api/workspaces/ws_1/invitations")).toEqual({
      projectId: "prj_1",
      projectRole: "editor",
    });
  });
});

describe("layered settings", () => {
  it("shows where a value comes from and sets it for the person", async () => {
    let mine: Record<string, unknown> = {};
    const { fetch, transport } = hub((path, init) => {
      if (path === "/api/workspaces/ws_1/settings") {
        const value = mine["approvals.ttlMinutes"] ?? 1440;
        return json(200, {
          scopes: { workspace: "ws_1", project: null, user: "user_1", conversation: null },
          settings: [{ ...TTL, value, level: "approvals.ttlMinutes" in mine ? "user" : "system" }],
          values: { workspace: {}, user: mine },
        });
      }
      if (path === "/api/workspaces/ws_1/settings/user/user_1" && init?.method === "PUT") {
        mine = JSON.parse(String(init.body));
        return json(200, { level: "user", scopeId: "user_1", values: mine });
      }
      return undefined;
    });
    const user = userEvent.setup();
    render(
      <SessionProvider transport={transport}>
        <LayeredSettings workspaceId="ws_1" userId="user_1" isOwner={false} />
      </SessionProvider>,
    );
    expect(await screen.findByText("(from hub default)")).toBeVisible();
    await user.type(screen.getByLabelText("Approval waits (minutes)"), "30");
    await user.click(screen.getByRole("button", { name: "Save" }));
    expect(await screen.findByText("(from you)")).toBeVisible();
    expect(bodyOf(fetch, "PUT", "/api/workspaces/ws_1/settings/user/user_1")).toEqual({ "approvals.ttlMinutes": 30 });
  });
});

describe("developer tokens", () => {
  it("shows a new token once and revokes one", async () => {
    const listed = [
      {
        id: "tok_1",
        name: "backup",
        scopes: ["read"],
        workspaceId: "ws_1",
        createdAt: "2026-12-01T10:00:00.000Z",
        expiresAt: null,
        lastUsedAt: null,
        revokedAt: null,
        status: "active",
      },
    ];
    const { fetch, transport } = hub((path, init) => {
      if (path === "/api/tokens" && init?.method === "POST") {
        return json(201, { ...listed[0], id: "tok_2", name: "deploy", token: "lut_secret" });
      }
      if (path === "/api/tokens") return json(200, { tokens: listed });
      if (path === "/api/tokens/tok_1" && init?.method === "DELETE") {
        listed[0] = { ...(listed[0] as (typeof listed)[number]), status: "revoked" };
        return new Response(null, { status: 204 });
      }
      return undefined;
    });
    const user = userEvent.setup();
    render(
      <SessionProvider transport={transport}>
        <DeveloperTokens workspaceId="ws_1" workspaceName="Team" />
      </SessionProvider>,
    );
    expect(await screen.findByText("backup")).toBeVisible();
    await user.type(screen.getByLabelText("Token name"), "deploy");
    await user.click(screen.getByLabelText(/Allow changes too/));
    await user.click(screen.getByRole("button", { name: "Make a token" }));
    expect(await screen.findByText("lut_secret")).toBeVisible();
    expect(bodyOf(fetch, "POST", "/api/tokens")).toEqual({
      name: "deploy",
      scopes: ["read", "write"],
      expiresInDays: 90,
      workspaceId: "ws_1",
    });
    await user.click(screen.getByRole("button", { name: "Revoke" }));
    expect(await screen.findByText(/Revoked/)).toBeVisible();
  });
});
