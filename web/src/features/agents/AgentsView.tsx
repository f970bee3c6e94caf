// Agents: who is connected, when they last beat, what they can do; pair a new one, or have
// the hub host one.

import type { Agent } from "../../api/types";
import { useWorkspace } from "../../app/workspace";
import { Link, navigate, useLocation, withQuery } from "../../lib/router";
import { useTitle } from "../../lib/useTitle";
import { useNow } from "../../lib/useNow";
import { AgentStatusPill, Button, EmptyState, ErrorBanner, Icon, Loading, RelativeTime, StatusPill } from "../../ui";
import { useSession } from "../auth/session";
import { ConnectAgent } from "./ConnectAgent";
import { HostAgent } from "./HostAgent";
import "./agents.css";

export function AgentsView() {
  const { agents } = useWorkspace();
  const loc = useLocation();
  // Direct mode serves one agent from inside it: there is nothing to pair.
  const canPair = !useSession().direct;
  const connecting = canPair && loc.search.get("connect") === "1";
  const hosting = canPair && !connecting && loc.search.get("host") === "1";
  useTitle("Agents");
  useNow(5_000);
  const setConnecting = (on: boolean) =>
    navigate(withQuery(loc, { connect: on ? "1" : null, host: null }), { replace: true });
  const setHosting = (on: boolean) => navigate(withQuery(loc, { host: on ? "1" : null, connect: null }), { replace: true });
  const adding = connecting || hosting;
  const list = agents.data ?? [];
  const active = list.filter((a) => a.status !== "revoked");
  const revoked = list.filter((a) => a.status === "revoked");
  const online = active.filter((a) => a.online).length;

  return (
    <div className="page">
      <header className="page-head page-head-row">
        <div>
          <h1>Agents</h1>
          {agents.data ? (
            <p className="page-sub">
              {active.length === 0 ? "No agents paired yet." : `${online} of ${active.length} online`}
            </p>
          ) : null}
        </div>
        {canPair && !adding ? (
          <div className="button-row">
            <Button variant="primary" icon="plus" onClick={() => setConnecting(true)}>
              Connect my agent
            </Button>
            <Button icon="package" onClick={() => setHosting(true)}>
              Host an agent
            </Button>
          </div>
        ) : null}
      </header>
      {connecting ? <ConnectAgent onClose={() => setConnecting(false)} /> : null}
      {hosting ? <HostAgent onClose={() => setHosting(false)} /> : null}
      {agents.error && !agents.data ? <ErrorBanner error={agents.error} onRetry={agents.reload} /> : null}
      {!agents.data && !agents.error ? <Loading what="agents" /> : null}
      {agents.data && active.length === 0 && canPair && !adding ? (
        <EmptyState
          icon="agent"
          title="No agents yet — Connect my agent to pair one"
          action={
            <div className="button-row">
              <Button variant="primary" icon="plus" onClick={() => setConnecting(true)}>
                Connect my agent
              </Button>
              <Button icon="package" onClick={() => setHosting(true)}>
                Host an agent
              </Button>
            </div>
          }
        >
          You get a one-time code and a command to run where your agent lives. Or host one: this hub runs a coding
          engine for you, in a directory on its machine.
        </EmptyState>
      ) : null}
      {active.length > 0 ? (
        <ul className="agent-grid" aria-label="Agents">
          {active.map((a) => (
            <AgentCard key={a.id} agent={a} />
          ))}
        </ul>
      ) : null}
      {revoked.length > 0 ? (
        <section className="revoked" aria-labelledby="revoked-title">
          <h2 id="revoked-title" className="section-title">
            Revoked
          </h2>
          <ul className="agent-grid">
            {revoked.map((a) => (
              <AgentCard key={a.id} agent={a} />
            ))}
          </ul>
        </section>
      ) : null}
    </div>
  );
}

function AgentCard({ agent }: { agent: Agent }) {
  return (
    <li className={`agent-card agent-${agent.status}`} data-agent-id={agent.id}>
      <div className="agent-card-head">
        <span className="agent-avatar" aria-hidden="true">
          <Icon name="agent" size={20} />
        </span>
        <Link to={`/agents/${agent.id}`} className="agent-name">
          {agent.name}
        </Link>
        <AgentStatusPill agent={agent} />
        {agent.confirmed || agent.status === "revoked" ? null : (
          <StatusPill tone="waiting" icon="hand" label="Awaiting confirmation" />
        )}
      </div>
      <dl className="agent-facts">
        <div>
          <dt>Last heartbeat</dt>
          <dd>
            <RelativeTime iso={agent.lastHeartbeatAt} />
          </dd>
        </div>
        <div>
          <dt>Runtime</dt>
          <dd>
            {[agent.runtime, agent.version].filter(Boolean).join(" · ") || "unknown"}
          </dd>
        </div>
      </dl>
      {agent.capabilities.length > 0 ? (
        <ul className="chips" aria-label="Capabilities">
          {agent.capabilities.map((c) => (
            <li key={c} className="chip">
              {c}
            </li>
          ))}
        </ul>
      ) : (
        <p className="muted small">No capabilities declared yet.</p>
      )}
    </li>
  );
}
