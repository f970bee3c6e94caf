import { render, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it, vi } from "vitest";
import { ApiError } from "../../api/client";
import type { WorkspaceApi } from "../../api/hub";
import type { Agent, EngineCatalog, HostedAgent, NewHostedAgent, Project } from "../../api/types";
import { WorkspaceContextProvider, type WorkspaceContextValue } from "../../app/workspace";
import type { Resource } from "../../lib/useResource";
import { deferred } from "../../test/fixtures";
import { HostAgent } from "./HostAgent";

const catalog: EngineCatalog = {
  hosting: true,
  roots: ["/srv/work", "/home/ana/src"],
  engines: [
    { name: "fake", runnable: true, installed: true, version: "0.1.0", installHint: "(part of LineUp)" },
    { name: "codex", runnable: true, installed: false, version: null, installHint: "npm install -g @openai/codex@0.171.0" },
  ],
};

const projects: Project[] = [
  {
    id: "prj_books",
    name: "Books",
    context: null,
    workingDirectory: "/srv/work/books",
    createdBy: "user:u1",
    createdAt: "2026-07-24T10:00:00.000Z",
    updatedAt: "2026-07-24T10:00:00.000Z",
    role: "editor",
  },
  {
    id: "prj_seen",
    name: "Only seen",
    context: null,
    workingDirectory: null,
    createdBy: "user:u2",
    createdAt: "2026-07-24T10:00:00.000Z",
    updatedAt: "2026-07-24T10:00:00.000Z",
    role: "viewer",
  },
];

const created: HostedAgent = {
  agentId: "agent_h1",
  engine: "fake",
  cwd: "/srv/work/books",
  projectId: "prj_books",
  model: { api: "openai-chat", baseUrl: "http://127.0.0.1:8080/v1", model: "qwen3-coder", hasApiKey: true },
  createdBy: "user:u1",
  createdAt: "2026-07-24T12:00:00.000Z",
  mayDelete: true,
};

function resource<T>(data: T | undefined): Resource<T> {
  return { data, error: null, loading: false, reload: vi.fn(), setData: () => {} };
}

function setup(
  opts: {
    engines?: () => Promise<EngineCatalog>;
    create?: (body: NewHostedAgent) => Promise<HostedAgent>;
    agents?: Agent[];
  } = {},
) {
  const api = {
    engines: vi.fn(opts.engines ?? (async () => catalog)),
    projects: vi.fn(async () => ({ projects })),
    createHostedAgent: vi.fn(opts.create ?? (async () => created)),
  };
  const onClose = vi.fn();
  const value: WorkspaceContextValue = {
    api: api as unknown as WorkspaceApi,
    workspace: { id: "ws_1", name: "Studio", role: "owner" } as WorkspaceContextValue["workspace"],
    user: { id: "u1", email: "ana@example.test", displayName: "Ana" } as WorkspaceContextValue["user"],
    agents: resource<Agent[]>(opts.agents ?? []),
    inbox: resource<NonNullable<WorkspaceContextValue["inbox"]["data"]>>(undefined),
    agentName: () => "Builder",
    actorName: () => "Ana",
  };
  const view = render(
    <WorkspaceContextProvider value={value}>
      <HostAgent onClose={onClose} />
    </WorkspaceContextProvider>,
  );
  return { api, onClose, value, view, user: userEvent.setup() };
}

async function fillGood(user: ReturnType<typeof userEvent.setup>) {
  await user.type(screen.getByLabelText("Agent name"), "Builder");
  await user.type(screen.getByLabelText("Working directory"), "/srv/work/site");
  await user.selectOptions(screen.getByLabelText("API"), "openai-chat");
  await user.type(screen.getByLabelText("Base URL"), "http://127.0.0.1:8080/v1");
  await user.type(screen.getByLabelText("Model name"), "qwen3-coder");
}

describe("Host an agent", () => {
  it("shows every engine, the ones not installed disabled with the command that adds them", async () => {
    setup();
    const fake = await screen.findByRole("radio", { name: /Fake engine/ });
    expect(fake).toBeEnabled();
    expect(fake).toBeChecked(); // the one engine that can host is chosen for the person
    expect(fake).toHaveAccessibleDescription("Installed · 0.1.0");
    const codex = screen.getByRole("radio", { name: /Codex/ });
    expect(codex).toBeDisabled();
    expect(codex).toHaveAccessibleDescription("Not installed on this hub");
    expect(screen.getByText("npm install -g @openai/codex@0.171.0")).toBeVisible();
    expect(screen.getByRole("button", { name: /Copy/ })).toBeEnabled();
    // the allowed roots, next to the working directory
    const roots = screen.getByRole("list", { name: "Allowed roots" });
    expect(within(roots).getAllByRole("listitem").map((li) => li.textContent)).toEqual(["/srv/work", "/home/ana/src"]);
    // projects the person may start work in, and none
    const project = screen.getByLabelText("Project");
    expect(within(project).getAllByRole("option").map((o) => o.textContent)).toEqual([
      "None — it works in any conversation",
      "Books",
    ]);
  });

  it("says so when the hub runs no engines", async () => {
    setup({ engines: async () => ({ hosting: false, engines: [], roots: ["/home/ana"] }) });
    expect(await screen.findByText("This hub runs no engines")).toBeVisible();
    expect(screen.queryByRole("form")).toBeNull();
  });

  it("offers to try again when the engines cannot be read", async () => {
    let calls = 0;
    setup({
      engines: async () => {
        calls += 1;
        if (calls === 1) throw new ApiError("unavailable", "The hub is restarting.", 503);
        return catalog;
      },
    });
    expect(await screen.findByText("The hub is restarting.")).toBeVisible();
    await userEvent.setup().click(screen.getByRole("button", { name: "Try again" }));
    expect(await screen.findByRole("radio", { name: /Fake engine/ })).toBeChecked();
  });

  it("checks the form before asking the hub, and moves focus to the first field to fix", async () => {
    const { api, user } = setup();
    await screen.findByRole("radio", { name: /Fake engine/ });
    await user.type(screen.getByLabelText("Working directory"), "site");
    await user.click(screen.getByRole("button", { name: "Host this agent" }));
    const name = screen.getByLabelText("Agent name");
    expect(name).toHaveAttribute("aria-invalid", "true");
    expect(name).toHaveFocus();
    expect(name).toHaveAccessibleDescription(/Give the agent a name/);
    expect(screen.getByLabelText("Working directory")).toHaveAccessibleDescription(/full path, starting with \//);
    expect(screen.getByLabelText("Base URL")).toHaveAttribute("aria-invalid", "true");
    expect(screen.getByLabelText("Model name")).toHaveAttribute("aria-invalid", "true");
    expect(api.createHostedAgent).not.toHaveBeenCalled();
  });

  it("sends the definition, keeps the key write-only, and shows the hub's refusal on its field", async () => {
    const { api, user } = setup({
      create: async () => {
        throw new ApiError("forbidden", "The working directory '/srv/work/site' is outside the directories engines may use.", 403, {
          field: "cwd",
        });
      },
    });
    await screen.findByRole("radio", { name: /Fake engine/ });
    await fillGood(user);
    const key = screen.getByLabelText("API key (optional)");
    expect(key).toHaveAttribute("type", "password");
    expect(key).toHaveAccessibleDescription(/never shown again/);
    await user.type(key, "sk-secret");
    await user.click(screen.getByRole("button", { name: "Host this agent" }));
    await waitFor(() => expect(screen.getByLabelText("Working directory")).toHaveAttribute("aria-invalid", "true"));
    const cwd = screen.getByLabelText("Working directory");
    expect(cwd).toHaveFocus();
    expect(cwd).toHaveAccessibleDescription(/outside the directories engines may use/);
    expect(api.createHostedAgent).toHaveBeenCalledWith({
      name: "Builder",
      engine: "fake",
      cwd: "/srv/work/site",
      model: { api: "openai-chat", baseUrl: "http://127.0.0.1:8080/v1", model: "qwen3-coder", apiKey: "sk-secret" },
    });
    expect(screen.getByRole("button", { name: "Host this agent" })).toBeEnabled();
  });

  it("shows a refusal that names no field above the buttons", async () => {
    const { user } = setup({
      create: async () => {
        throw new ApiError("unavailable", "This hub runs no engines.", 503);
      },
    });
    await screen.findByRole("radio", { name: /Fake engine/ });
    await fillGood(user);
    await user.click(screen.getByRole("button", { name: "Host this agent" }));
    expect(await screen.findByRole("alert")).toHaveTextContent("This hub runs no engines.");
  });

  it("fills the working directory from the chosen project, and sends the project", async () => {
    const { api, user } = setup();
    await screen.findByRole("radio", { name: /Fake engine/ });
    await user.selectOptions(screen.getByLabelText("Project"), "prj_books");
    expect(screen.getByLabelText("Working directory")).toHaveValue("/srv/work/books");
    await user.type(screen.getByLabelText("Agent name"), "Builder");
    await user.type(screen.getByLabelText("Base URL"), "http://127.0.0.1:8080/v1");
    await user.type(screen.getByLabelText("Model name"), "qwen3-coder");
    await user.click(screen.getByRole("button", { name: "Host this agent" }));
    await waitFor(() => expect(api.createHostedAgent).toHaveBeenCalled());
    expect(api.createHostedAgent.mock.calls[0]![0]).toMatchObject({ projectId: "prj_books", cwd: "/srv/work/books" });
  });

  it("is busy while the hub creates it, then says it is hosted and offers a conversation", async () => {
    const pending = deferred<HostedAgent>();
    const { user, value, view } = setup({ create: () => pending.promise });
    await screen.findByRole("radio", { name: /Fake engine/ });
    await fillGood(user);
    await user.click(screen.getByRole("button", { name: "Host this agent" }));
    expect(screen.getByRole("button", { name: "Creating…" })).toBeDisabled();
    pending.resolve(created);
    expect(await screen.findByText("Builder is hosted")).toBeVisible();
    expect(screen.getByText("Waiting for the hub to connect it…")).toBeVisible();
    expect(value.agents.reload).toHaveBeenCalled();

    // once its host connects it, it is online
    const online = { id: "agent_h1", name: "Builder", status: "online", online: true } as Agent;
    view.rerender(
      <WorkspaceContextProvider value={{ ...value, agents: resource([online]) }}>
        <HostAgent onClose={() => {}} />
      </WorkspaceContextProvider>,
    );
    expect(await screen.findByText("Builder is online")).toBeVisible();
    expect(screen.getByText("Online")).toBeVisible();
    expect(screen.getByRole("button", { name: "Start a conversation" })).toBeEnabled();
  });
});
