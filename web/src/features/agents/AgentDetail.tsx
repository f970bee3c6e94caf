// One agent: facts, confirmation (after pairing), settings, rename, revoke, its connection
// history and its own diagnostic logs; for an agent the hub hosts, its hosting definition.

import { useEffect, useId, useState, type FormEvent } from "react";
import { ApiError, newIdempotencyKey } from "../../api/client";
import type { HubEvent } from "../../api/types";
import type { WorkspaceApi } from "../../api/hub";
import { useWorkspace } from "../../app/workspace";
import { Link, navigate } from "../../lib/router";
import { useTitle } from "../../lib/useTitle";
import { useNow } from "../../lib/useNow";
import { fullTime } from "../../lib/time";
import { useHubEvents } from "../../realtime/RealtimeProvider";
import {
  AgentStatusPill,
  Banner,
  Button,
  Card,
  CopyButton,
  EmptyState,
  Icon,
  Loading,
  RelativeTime,
  StatusPill,
} from "../../ui";
import { useSession } from "../auth/session";
import { Timeline } from "../tasks/TaskDetail";
import { DiagnosticLogs } from "./DiagnosticLogs";
import { AgentSettings } from "./AgentSettings";
import { ConfirmAgent } from "./ConfirmAgent";
import { HostingCard, useHostedAgent } from "./HostingCard";
import "./agents.css";

const AGENT_TYPES = new Set([
  "agent.paired",
  "agent.connected",
  "agent.status_changed",
  "agent.renamed",
  "agent.confirmed",
  "agent.settings_changed",
  "agent.revoked",
]);

function aboutAgent(event: HubEvent, agentId: string): boolean {
  return AGENT_TYPES.has(event.type) && event.payload.agentId === agentId;
}

/** The agent's own events from the workspace log (paged; the hub has no per-agent filter yet). */
async function agentHistory(api: WorkspaceApi, agentId: string, maxPages = 20): Promise<HubEvent[]> {
  const found: HubEvent[] = [];
  let after = 0;
  for (let page = 0; page < maxPages; page++) {
    const { events } = await api.events(after, 1000);
    for (const e of events) if (aboutAgent(e, agentId)) found.push(e);
    if (events.length < 1000) break;
    after = events[events.length - 1]?.sequence ?? after;
  }
  return found;
}

export function AgentDetail({ agentId }: { agentId: string }) {
  const { api, agents, actorName } = useWorkspace();
  const { direct } = useSession(); // direct mode: the one agent cannot be revoked
  const agent = agents.data?.find((a) => a.id === agentId);
  const hosted = useHostedAgent(agentId);
  const isHosted = Boolean(hosted.data);
  const [history, setHistory] = useState<HubEvent[] | null>(null);
  const [historyError, setHistoryError] = useState<string | null>(null);
  useTitle(agent?.name ?? "Agent");
  useNow(5_000);

  useEffect(() => {
    let stop = false;
    setHistory(null);
    agentHistory(api, agentId).then(
      (h) => !stop && setHistory(h),
      (err: ApiError) => !stop && setHistoryError(err.message),
    );
    return () => {
      stop = true;
    };
  }, [api, agentId]);

  useHubEvents((event) => {
    if (aboutAgent(event, agentId))
      setHistory((h) => (h && !h.some((x) => x.id === event.id) ? [...h, event] : h));
  });

  if (!agents.data) return <Loading what="agent" />;
  if (!agent)
    return (
      <div className="page">
        <BackToAgents />
        <EmptyState icon="agent" title="No such agent in this workspace">
          It may belong to another workspace. <Link to="/agents">See all agents</Link>.
        </EmptyState>
      </div>
    );

  return (
    <div className="page">
      <BackToAgents />
      <header className="page-head page-head-row">
        <div className="agent-title">
          <h1>{agent.name}</h1>
          <AgentStatusPill agent={agent} />
          {agent.confirmed ? null : <StatusPill tone="waiting" icon="hand" label="Awaiting your confirmation" />}
        </div>
        {agent.confirmed && agent.status !== "revoked" ? (
          <Button icon="chat" onClick={() => navigate(`/conversations?new=1&agent=${encodeURIComponent(agent.id)}`)}>
            Start a conversation
          </Button>
        ) : null}
      </header>
      {!agent.confirmed && agent.status !== "revoked" ? (
        <Card className="confirm-card">
          <ConfirmAgent agent={agent} />
        </Card>
      ) : null}
      {agent.status === "offline" ? (
        <Banner tone="danger" icon="plugOff" title="Offline">
          Last heartbeat {fullTime(agent.lastHeartbeatAt)} (<RelativeTime iso={agent.lastHeartbeatAt} />). Its running tasks wait for it to come back.
        </Banner>
      ) : null}

      <div className="detail-grid">
        <Card>
          <h2 className="card-title">About</h2>
          <dl className="kv">
            <div className="kv-row">
              <dt>Last heartbeat</dt>
              <dd>
                {agent.lastHeartbeatAt ? (
                  <>
                    <RelativeTime iso={agent.lastHeartbeatAt} /> · {fullTime(agent.lastHeartbeatAt)}
                  </>
                ) : (
                  "never"
                )}
              </dd>
            </div>
            <div className="kv-row">
              <dt>Runtime</dt>
              <dd>{agent.runtime ?? "unknown"}</dd>
            </div>
            <div className="kv-row">
              <dt>Version</dt>
              <dd>{agent.version ?? "unknown"}</dd>
            </div>
            <div className="kv-row">
              <dt>Connected</dt>
              <dd>{agent.connectedAt ? fullTime(agent.connectedAt) : "never"}</dd>
            </div>
            <div className="kv-row">
              <dt>Paired</dt>
              <dd>{fullTime(agent.createdAt)}</dd>
            </div>
            <div className="kv-row">
              <dt>Capabilities</dt>
              <dd>{agent.capabilities.length ? agent.capabilities.join(", ") : "none declared"}</dd>
            </div>
            <div className="kv-row">
              <dt>Tools</dt>
              <dd>{agent.tools.length}</dd>
            </div>
          </dl>
        </Card>

        {agent.status !== "revoked" && agent.settingsSchema ? (
          <Card>
            <h2 className="card-title">
              <Icon name="settings" size={18} /> Settings
            </h2>
            <AgentSettings agent={agent} />
          </Card>
        ) : null}

        {hosted.data ? <HostingCard hosted={hosted.data} name={agent.name} /> : null}

        {agent.status !== "revoked" ? (
          <Card>
            <h2 className="card-title">Manage</h2>
            <Rename agentId={agent.id} name={agent.name} />
            {/* a hosted agent's credential is the hub's to keep: it is deleted, not revoked */}
            {direct || isHosted ? null : <RotateCredential agentId={agent.id} name={agent.name} />}
            {direct || isHosted ? null : <Revoke agentId={agent.id} name={agent.name} />}
          </Card>
        ) : null}
      </div>

      <Card className="diagnostics">
        <h2 className="card-title">
          <Icon name="history" size={18} /> Connection history
        </h2>
        <p className="muted small">Pairing, connections, lost heartbeats and revocation, from the workspace's event log.</p>
        {historyError ? <p className="field-error">{historyError}</p> : null}
        {history === null && !historyError ? <Loading what="history" /> : null}
        {history ? <Timeline events={history} actorName={actorName} /> : null}
      </Card>

      <DiagnosticLogs agentId={agent.id} />
    </div>
  );
}

function BackToAgents() {
  return (
    <Link to="/agents" className="back-link">
      <Icon name="back" size={16} /> Agents
    </Link>
  );
}

function Rename({ agentId, name }: { agentId: string; name: string }) {
  const { api, agents } = useWorkspace();
  const [value, setValue] = useState(name);
  const [state, setState] = useState<{ kind: "idle" | "saving" | "saved" } | { kind: "error"; message: string }>({ kind: "idle" });
  const id = useId();
  useEffect(() => setValue(name), [name]);
  async function save(e: FormEvent) {
    e.preventDefault();
    const next = value.trim();
    if (!next) {
      setState({ kind: "error", message: "A name cannot be empty." });
      return;
    }
    setState({ kind: "saving" });
    try {
      await api.renameAgent(agentId, next, newIdempotencyKey());
      setState({ kind: "saved" });
      agents.reload();
    } catch (err) {
      setState({ kind: "error", message: (err as ApiError).message });
    }
  }
  return (
    <form className="inline-form" onSubmit={save} noValidate>
      <div className="field">
        <label htmlFor={id}>Name</label>
        <input id={id} value={value} maxLength={100} onChange={(e) => setValue(e.target.value)} />
      </div>
      <Button type="submit" busy={state.kind === "saving"} disabled={value.trim() === name}>
        {state.kind === "saving" ? "Saving…" : "Rename"}
      </Button>
      <span role="status" className="form-note">
        {state.kind === "saved" ? "Saved." : ""}
      </span>
      {state.kind === "error" ? (
        <p className="field-error" role="alert">
          {state.message}
        </p>
      ) : null}
    </form>
  );
}

function RotateCredential({ agentId, name }: { agentId: string; name: string }) {
  const { api } = useWorkspace();
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  const [credential, setCredential] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  async function rotate() {
    setBusy(true);
    setError(null);
    try {
      setCredential((await api.rotateAgentCredential(agentId)).credential);
      setConfirming(false);
    } catch (err) {
      setError((err as ApiError).message);
    } finally {
      setBusy(false);
    }
  }
  return (
    <div className="rotate">
      {credential ? (
        <div className="field" data-testid="rotated-credential">
          <p className="token-once">
            <code>{credential}</code> <CopyButton text={credential} label="Copy credential" what="the credential" />
          </p>
          <p className="field-hint">
            Shown only now. Put it as <code>credential</code> in the agent's credentials file (
            <code>~/.lineup-agent/credentials.json</code>) and restart it: it connects again as {name}, without
            pairing.
          </p>
        </div>
      ) : null}
      {!confirming ? (
        <Button variant="secondary" onClick={() => setConfirming(true)}>
          Rotate credential
        </Button>
      ) : (
        <div className="confirm" role="group" aria-label="Confirm rotation">
          <p>
            Give <strong>{name}</strong> a new credential? The old one stops working at once and the agent is disconnected
            until it has the new one.
          </p>
          <div className="button-row">
            <Button variant="primary" busy={busy} onClick={rotate}>
              {busy ? "Rotating…" : "Yes, rotate it"}
            </Button>
            <Button variant="ghost" disabled={busy} onClick={() => setConfirming(false)}>
              Keep the current one
            </Button>
          </div>
        </div>
      )}
      {error ? (
        <p className="field-error" role="alert">
          {error}
        </p>
      ) : null}
    </div>
  );
}

function Revoke({ agentId, name }: { agentId: string; name: string }) {
  const { api, agents } = useWorkspace();
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  async function revoke() {
    setBusy(true);
    setError(null);
    try {
      await api.revokeAgent(agentId);
      agents.reload();
      setConfirming(false);
    } catch (err) {
      setError((err as ApiError).message);
    } finally {
      setBusy(false);
    }
  }
  return (
    <div className="revoke">
      {!confirming ? (
        <Button variant="danger" icon="xCircle" onClick={() => setConfirming(true)}>
          Revoke access
        </Button>
      ) : (
        <div className="confirm" role="group" aria-label="Confirm revoke">
          <p>
            Revoke <strong>{name}</strong>? It is disconnected at once and its credential never works again. To use it
            later, pair it again.
          </p>
          <div className="button-row">
            <Button variant="danger" busy={busy} onClick={revoke}>
              {busy ? "Revoking…" : `Yes, revoke ${name}`}
            </Button>
            <Button variant="ghost" disabled={busy} onClick={() => setConfirming(false)}>
              Keep it
            </Button>
          </div>
        </div>
      )}
      {error ? (
        <p className="field-error" role="alert">
          {error}
        </p>
      ) : null}
    </div>
  );
}
