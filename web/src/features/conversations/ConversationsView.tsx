// Conversations: the list, and a form to start one with some agents.

import { useId, useState, type FormEvent } from "react";
import { ApiError, newIdempotencyKey } from "../../api/client";
import { useWorkspace } from "../../app/workspace";
import { Link, navigate, useLocation } from "../../lib/router";
import { useResource } from "../../lib/useResource";
import { useTitle } from "../../lib/useTitle";
import { useSession } from "../auth/session";
import { Button, Card, EmptyState, ErrorBanner, Icon, Loading, RelativeTime } from "../../ui";
import { ImportSession } from "./SessionFiles";
import "./conversations.css";

export function ConversationsView() {
  const { api, agentName } = useWorkspace();
  const loc = useLocation();
  const [creating, setCreating] = useState(loc.search.get("new") === "1");
  const [importing, setImporting] = useState(false);
  useTitle("Conversations");
  const list = useResource(() => api.conversations().then((r) => r.conversations), [api], {
    refreshOn: (e) =>
      e.type === "conversation.created" || e.type === "conversation.agent_joined" || e.type === "message.created",
  });

  return (
    <div className="page">
      <header className="page-head page-head-row">
        <h1>Conversations</h1>
        <div className="button-row">
          {!importing ? (
            <Button
              icon="upload"
              onClick={() => {
                setImporting(true);
                setCreating(false);
              }}
            >
              Import session
            </Button>
          ) : null}
          {!creating ? (
            <Button
              variant="primary"
              icon="plus"
              onClick={() => {
                setCreating(true);
                setImporting(false);
              }}
            >
              New conversation
            </Button>
          ) : null}
        </div>
      </header>
      {creating ? <NewConversation agentId={loc.search.get("agent")} onCancel={() => setCreating(false)} /> : null}
      {importing ? <ImportSession onCancel={() => setImporting(false)} /> : null}
      {list.error && !list.data ? <ErrorBanner error={list.error} onRetry={list.reload} /> : null}
      {!list.data && !list.error ? <Loading what="conversations" /> : null}
      {list.data && list.data.length === 0 && !creating && !importing ? (
        <EmptyState
          icon="chat"
          title="No conversations yet"
          action={
            <Button variant="primary" icon="plus" onClick={() => setCreating(true)}>
              New conversation
            </Button>
          }
        >
          Start one with an agent to ask for something; tick “Track as task” to follow it as a task.
        </EmptyState>
      ) : null}
      {list.data && list.data.length > 0 ? (
        <ul className="conv-list">
          {list.data.map((c) => (
            <li key={c.id}>
              <Link to={`/conversations/${c.id}`} className="conv-row">
                <span className="conv-icon">
                  <Icon name="chat" size={18} />
                </span>
                <span className="conv-main">
                  <span className="conv-title">{c.title}</span>
                  <span className="conv-agents">
                    {c.agentIds.length === 0 ? "No agents" : c.agentIds.map((id) => agentName(id)).join(", ")}
                  </span>
                </span>
                <RelativeTime className="conv-time" iso={c.updatedAt} />
              </Link>
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}

function NewConversation({ agentId, onCancel }: { agentId: string | null; onCancel: () => void }) {
  const { api, agents, agentName } = useWorkspace();
  const { direct } = useSession();
  const live = (agents.data ?? []).filter((a) => a.status !== "revoked" && a.confirmed !== false);
  const [title, setTitle] = useState("");
  const [picked, setPicked] = useState<string[] | null>(agentId ? [agentId] : null);
  // a hosted agent given a project works in that project's conversations only
  const hosted = useResource(() => api.hostedAgents().then((r) => r.hostedAgents), [api], { enabled: !direct });
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [key] = useState(newIdempotencyKey);
  const titleId = useId();
  const projectId = useId();
  const projects = useResource(() => api.projects().then((r) => r.projects), [api]);
  // a project's conversations are started by its owners and editors
  const startable = (projects.data ?? []).filter((p) => p.role === "owner" || p.role === "editor");
  const [project, setProject] = useState("");
  const chosen = picked ?? (live.length === 1 ? [live[0]!.id] : []);
  const homed = (hosted.data ?? []).find((h) => h.projectId && chosen.includes(h.agentId));
  const home = homed?.projectId ?? null;
  const projectValue = project || home || "";
  const homeName = (projects.data ?? []).find((p) => p.id === home)?.name;

  async function create(e: FormEvent) {
    e.preventDefault();
    if (!title.trim()) {
      setError("Give the conversation a title, like “Website redesign”.");
      return;
    }
    setBusy(true);
    setError(null);
    try {
      const created = await api.createConversation(title.trim(), chosen, key, projectValue || null);
      navigate(`/conversations/${created.id}`);
    } catch (err) {
      setError((err as ApiError).message);
      setBusy(false);
    }
  }

  return (
    <Card className="new-conv">
      <form onSubmit={create} noValidate>
        <h2 className="card-title">New conversation</h2>
        <div className="field">
          <label htmlFor={titleId}>Title</label>
          <input
            id={titleId}
            value={title}
            onChange={(e) => setTitle(e.target.value)}
            placeholder="Website redesign"
            autoFocus
            maxLength={500}
          />
        </div>
        <div className="field">
          <label htmlFor={projectId}>Project</label>
          <select
            id={projectId}
            value={projectValue}
            aria-describedby={homed ? `${projectId}-home` : undefined}
            onChange={(e) => setProject(e.target.value)}
          >
            <option value="">Personal (agents may only read outside systems)</option>
            {startable.map((p) => (
              <option key={p.id} value={p.id}>
                {p.name}
              </option>
            ))}
          </select>
          {homed ? (
            <p id={`${projectId}-home`} className="field-hint">
              {agentName(homed.agentId)} works in project {homeName ? `“${homeName}”` : "of its own"} only: the
              conversation belongs to it.
            </p>
          ) : null}
        </div>
        <fieldset className="checks">
          <legend>Agents in this conversation</legend>
          {live.length === 0 ? (
            <p className="muted">
              No agents yet. <Link to="/agents?connect=1">Connect my agent</Link> first to give it work.
            </p>
          ) : (
            live.map((a) => (
              <label key={a.id} className="check">
                <input
                  type="checkbox"
                  checked={chosen.includes(a.id)}
                  onChange={(e) =>
                    setPicked(e.target.checked ? [...chosen, a.id] : chosen.filter((x) => x !== a.id))
                  }
                />
                <span>{a.name}</span>
                <span className="muted">{a.online ? "online" : "offline"}</span>
              </label>
            ))
          )}
        </fieldset>
        {error ? (
          <p className="field-error" role="alert">
            {error}
          </p>
        ) : null}
        <div className="button-row">
          <Button type="submit" variant="primary" busy={busy}>
            {busy ? "Creating…" : "Create conversation"}
          </Button>
          <Button variant="ghost" onClick={onCancel} disabled={busy}>
            Cancel
          </Button>
        </div>
      </form>
    </Card>
  );
}
