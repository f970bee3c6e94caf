// The open workspace: its API, its agents and the inbox counts every screen shows.

import { createContext, useCallback, useContext, useMemo, useRef, type ReactNode } from "react";
import type { WorkspaceApi } from "../api/hub";
import type { Agent, HubEvent, Inbox, User, Workspace } from "../api/types";
import { useResource, type Resource } from "../lib/useResource";
import { useHubEvents } from "../realtime/RealtimeProvider";

export interface WorkspaceContextValue {
  api: WorkspaceApi;
  workspace: Workspace;
  user: User;
  agents: Resource<Agent[]>;
  inbox: Resource<Inbox>;
  agentName: (id: string | null | undefined) => string;
  /** "You", an agent's name, a teammate's name when known, or "LineUp" for the hub itself. */
  actorName: (actor: string | null | undefined) => string;
}

const WorkspaceContext = createContext<WorkspaceContextValue | null>(null);

export function useWorkspace(): WorkspaceContextValue {
  const value = useContext(WorkspaceContext);
  if (!value) throw new Error("useWorkspace outside WorkspaceProvider");
  return value;
}

export const WorkspaceContextProvider = WorkspaceContext.Provider;

const AGENT_EVENTS = (e: HubEvent) => e.type.startsWith("agent.");
const INBOX_EVENTS = (e: HubEvent) =>
  e.type.startsWith("interaction.") ||
  e.type.startsWith("task.") ||
  e.type === "agent.status_changed" ||
  e.type === "agent.connected" ||
  e.type === "agent.revoked" ||
  e.type === "tool.called" || // tool calls wait in the inbox too
  e.type === "tool.completed" ||
  e.type === "tool.cancelled";

export function WorkspaceProvider({
  api,
  workspace,
  user,
  children,
}: {
  api: WorkspaceApi;
  workspace: Workspace;
  user: User;
  children: ReactNode;
}) {
  const agents = useResource((signal) => api.agents().then((r) => (signal.aborted ? [] : r.agents)), [api], {
    refreshOn: AGENT_EVENTS,
  });
  const inbox = useResource(() => api.inbox(), [api], { refreshOn: INBOX_EVENTS });

  // People's names as events reveal them (authors, who answered), for the timelines.
  const names = useRef(new Map<string, string>());
  useHubEvents((event) => {
    if (event.type === "message.created") {
      const author = event.payload.author;
      if (author.kind === "user" && author.id && author.name) names.current.set(`user:${author.id}`, author.name);
    }
    if (event.type === "interaction.resolved") {
      const p = event.payload;
      if (p.respondedBy && p.respondedByName) names.current.set(p.respondedBy, p.respondedByName);
    }
  });

  const agentList = agents.data;
  const agentName = useCallback(
    (id: string | null | undefined) => {
      if (!id) return "No agent";
      return agentList?.find((a) => a.id === id)?.name ?? "an agent";
    },
    [agentList],
  );
  const actorName = useCallback(
    (actor: string | null | undefined) => {
      if (!actor || actor === "system") return "LineUp";
      if (actor === `user:${user.id}`) return "You";
      if (actor.startsWith("agent:")) return agentName(actor.slice(6));
      return names.current.get(actor) ?? "A teammate";
    },
    [agentName, user.id],
  );

  const value = useMemo<WorkspaceContextValue>(
    () => ({ api, workspace, user, agents, inbox, agentName, actorName }),
    [api, workspace, user, agents, inbox, agentName, actorName],
  );
  return <WorkspaceContext.Provider value={value}>{children}</WorkspaceContext.Provider>;
}
