import { render, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it, vi } from "vitest";
import type { WorkspaceApi } from "../../api/hub";
import type { Policy } from "../../api/types";
import { WorkspaceContextProvider, type WorkspaceContextValue } from "../../app/workspace";
import type { Resource } from "../../lib/useResource";
import { project } from "../../test/governance";
import { ProjectSettings } from "./ProjectsSettings";

function resource<T>(data: T | undefined): Resource<T> {
  return { data, error: null, loading: false, reload: () => {}, setData: () => {} };
}

const policy: Policy = {
  rules: [
    {
      id: "rule_1",
      capability: "scheduling.*",
      effect: "allow",
      projectId: "prj_1",
      instance: null,
      roles: ["owner", "editor"],
      setBy: "user:u1",
      createdAt: "2026-07-24T10:00:00.000Z",
    },
  ],
  permissions: [
    {
      id: "perm_1",
      projectId: "prj_1",
      capability: "scheduling.schedule.publish",
      instance: "plant-1",
      bounds: {},
      expiresAt: "2026-07-24T13:00:00.000Z",
      maxCalls: 5,
      callsUsed: 1,
      grantedBy: "user:u1",
      approvalId: "apr_1",
      revokedAt: null,
      revokedBy: null,
      createdAt: "2026-07-24T12:00:00.000Z",
      status: "active",
    },
  ],
};

function setup() {
  const api = {
    project: vi.fn(async () => project),
    policy: vi.fn(async () => policy),
    members: vi.fn(async () => ({
      members: [
        { id: "u1", displayName: "Ana", email: "ana@example.test", role: "owner", joinedAt: null },
        { id: "u4", displayName: "Dee", email: "dee@example.test", role: "member", joinedAt: null },
      ],
    })),
    addRule: vi.fn(async () => policy.rules[0]),
    removeRule: vi.fn(async () => undefined),
    revokePermission: vi.fn(async () => ({ ...policy.permissions[0], status: "revoked" })),
    setProjectMember: vi.fn(async () => project),
    removeProjectMember: vi.fn(async () => undefined),
  };
  const value: WorkspaceContextValue = {
    api: api as unknown as WorkspaceApi,
    workspace: { id: "ws_1", name: "Studio", role: "owner" } as WorkspaceContextValue["workspace"],
    user: { id: "u1", email: "ana@example.test", displayName: "Ana" } as WorkspaceContextValue["user"],
    agents: resource<WorkspaceContextValue["agents"]["data"] & object>([]),
    inbox: resource<NonNullable<WorkspaceContextValue["inbox"]["data"]>>(undefined),
    agentName: () => "planner",
    actorName: () => "Ana",
  };
  render(
    <WorkspaceContextProvider value={value}>
      <ProjectSettings projectId="prj_1" />
    </WorkspaceContextProvider>,
  );
  return { api, user: userEvent.setup() };
}

describe("a project's settings", () => {
  it("adds a workspace member with a role, and changes a member's role", async () => {
    const { api, user } = setup();
    const members = await screen.findByRole("list", { name: "Members" });
    expect(members).toHaveTextContent("Ana (you)");
    await user.selectOptions(await screen.findByLabelText("Add a workspace member"), "u4");
    await user.selectOptions(screen.getByLabelText("As"), "viewer");
    await user.click(screen.getByRole("button", { name: "Add" }));
    expect(api.setProjectMember).toHaveBeenCalledWith("prj_1", "u4", "viewer");
    await user.selectOptions(screen.getByLabelText("Role of Bo"), "owner");
    expect(api.setProjectMember).toHaveBeenCalledWith("prj_1", "u2", "owner");
  });

  it("lists its rules and adds a deny for a capability, some roles and one target", async () => {
    const { api, user } = setup();
    const rules = await screen.findByRole("list", { name: "Rules" });
    expect(rules).toHaveTextContent("Allow");
    expect(rules).toHaveTextContent("scheduling.*");
    expect(rules).toHaveTextContent("for owner, editor · on every target");
    const form = screen.getByRole("form", { name: "Add a rule" });
    await user.selectOptions(within(form).getByLabelText("Effect"), "deny");
    await user.type(within(form).getByLabelText("Capability"), "scheduling.schedule.publish");
    await user.type(within(form).getByLabelText("Target (optional)"), "plant-2");
    await user.click(within(form).getByLabelText("owner"));
    await user.click(within(form).getByRole("button", { name: "Add rule" }));
    expect(api.addRule).toHaveBeenCalledWith(
      { capability: "scheduling.schedule.publish", effect: "deny", projectId: "prj_1", instance: "plant-2", roles: ["editor"] },
      expect.any(String),
    );
  });

  it("revokes a standing permission", async () => {
    const { api, user } = setup();
    const list = await screen.findByRole("list", { name: "Standing permissions" });
    expect(list).toHaveTextContent("1 of 5 calls");
    await user.click(within(list).getByRole("button", { name: "Revoke" }));
    await waitFor(() => expect(api.revokePermission).toHaveBeenCalledWith("perm_1"));
  });
});
