import { render, screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it, vi } from "vitest";
import type { WorkspaceApi } from "../../api/hub";
import type { Agent, HostedAgent } from "../../api/types";
import { WorkspaceContextProvider, type WorkspaceContextValue } from "../../app/workspace";
import type { Resource } from "../../lib/useResource";
import { HostingCard } from "./HostingCard";

const hosted: HostedAgent = {
  agentId: "agent_h1",
  engine: "fake",
  cwd: "/srv/work/site",
  projectId: "prj_books",
  model: { api: "anthropic-messages", baseUrl: "https://llm.example.test", model: "big-model", hasApiKey: true },
  createdBy: "user:u1",
  createdAt: "2026-07-24T12:00:00.000Z",
  mayDelete: true,
};

function resource<T>(data: T | undefined): Resource<T> {
  return { data, error: null, loading: false, reload: vi.fn(), setData: () => {} };
}

function setup(definition: HostedAgent = hosted) {
  const api = {
    projects: vi.fn(async () => ({
      projects: [{ id: "prj_books", name: "Books", role: "owner", workingDirectory: null, context: null }],
    })),
    deleteHostedAgent: vi.fn(async () => undefined),
  };
  const value: WorkspaceContextValue = {
    api: api as unknown as WorkspaceApi,
    workspace: { id: "ws_1", name: "Studio", role: "owner" } as WorkspaceContextValue["workspace"],
    user: { id: "u1", email: "ana@example.test", displayName: "Ana" } as WorkspaceContextValue["user"],
    agents: resource<Agent[]>([]),
    inbox: resource<NonNullable<WorkspaceContextValue["inbox"]["data"]>>(undefined),
    agentName: () => "Builder",
    actorName: () => "You",
  };
  render(
    <WorkspaceContextProvider value={value}>
      <HostingCard hosted={definition} name="Builder" />
    </WorkspaceContextProvider>,
  );
  return { api, user: userEvent.setup() };
}

function row(label: string): HTMLElement {
  const term = screen.getByText(label, { selector: "dt" });
  return term.parentElement!.querySelector("dd")!;
}

describe("a hosted agent's definition", () => {
  it("shows the engine, directory, project and endpoint, and of the key only that it is set", async () => {
    setup();
    expect(row("Engine")).toHaveTextContent("Fake engine");
    expect(row("Working directory")).toHaveTextContent("/srv/work/site");
    expect(await within(row("Project")).findByRole("link", { name: "Books" })).toHaveAttribute(
      "href",
      "/settings/projects/prj_books",
    );
    expect(row("Model API")).toHaveTextContent("Anthropic Messages");
    expect(row("Endpoint")).toHaveTextContent("https://llm.example.test");
    expect(row("Model")).toHaveTextContent("big-model");
    expect(row("API key")).toHaveTextContent("Set");
    expect(row("Created")).toHaveTextContent("by You");
  });

  it("says when no key or project was given", () => {
    setup({ ...hosted, projectId: null, model: { ...hosted.model, hasApiKey: false } });
    expect(row("API key")).toHaveTextContent("Not set");
    expect(row("Project")).toHaveTextContent("None — any conversation");
  });

  it("is deleted only after a confirmation, and only by whoever may", async () => {
    const { api, user } = setup();
    await user.click(screen.getByRole("button", { name: "Delete hosted agent" }));
    const confirm = screen.getByRole("group", { name: "Confirm delete" });
    expect(api.deleteHostedAgent).not.toHaveBeenCalled();
    await user.click(within(confirm).getByRole("button", { name: "Keep it" }));
    expect(api.deleteHostedAgent).not.toHaveBeenCalled();
    await user.click(screen.getByRole("button", { name: "Delete hosted agent" }));
    await user.click(screen.getByRole("button", { name: "Yes, delete Builder" }));
    expect(api.deleteHostedAgent).toHaveBeenCalledWith("agent_h1");
  });

  it("offers no delete to someone who may not", () => {
    setup({ ...hosted, mayDelete: false });
    expect(screen.queryByRole("button", { name: "Delete hosted agent" })).toBeNull();
  });
});
