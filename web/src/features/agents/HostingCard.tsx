// A hosted agent's definition on its page — engine, working directory, project, model endpoint,
// whether a key is set (never the key) — and, for whoever may, deleting it.

import { useState } from "react";
import { ApiError } from "../../api/client";
import type { HostedAgent } from "../../api/types";
import { useWorkspace } from "../../app/workspace";
import { Link, navigate } from "../../lib/router";
import { fullTime } from "../../lib/time";
import { useResource } from "../../lib/useResource";
import { Button, Card, Icon, Loading, StatusPill } from "../../ui";
import { useSession } from "../auth/session";
import { MODEL_APIS, engineTitle } from "./hostForm";

/** The hosted definition of an agent; `null` when the hub does not host it. Read from the list
 * (not the agent's runtime, which an agent names itself), again when an agent changes. */
export function useHostedAgent(agentId: string) {
  const { api } = useWorkspace();
  const { direct } = useSession();
  return useResource(
    () => api.hostedAgents().then((r) => r.hostedAgents.find((h) => h.agentId === agentId) ?? null),
    [api, agentId],
    { enabled: !direct, refreshOn: (e) => e.type === "agent.revoked" || e.type === "agent.paired" },
  );
}

export function HostingCard({ hosted, name }: { hosted: HostedAgent; name: string }) {
  const { api, actorName } = useWorkspace();
  const projects = useResource(() => api.projects().then((r) => r.projects), [api], {
    enabled: hosted.projectId !== null,
  });
  const project = projects.data?.find((p) => p.id === hosted.projectId);
  const apiLabel = MODEL_APIS.find((a) => a.value === hosted.model.api)?.label ?? hosted.model.api;

  return (
    <Card aria-labelledby="hosting-title">
      <h2 id="hosting-title" className="card-title">
        <Icon name="package" size={18} /> Hosting
      </h2>
      <p className="muted small">This hub runs it: an engine on its machine, started with each conversation's first message.</p>
      <dl className="kv" data-testid="hosting-definition">
        <div className="kv-row">
          <dt>Engine</dt>
          <dd>{engineTitle(hosted.engine)}</dd>
        </div>
        <div className="kv-row">
          <dt>Working directory</dt>
          <dd>
            <code className="inline-code">{hosted.cwd}</code>
          </dd>
        </div>
        <div className="kv-row">
          <dt>Project</dt>
          <dd>
            {hosted.projectId === null ? (
              "None — any conversation"
            ) : project ? (
              <Link to={`/settings/projects/${encodeURIComponent(project.id)}`}>{project.name}</Link>
            ) : projects.loading ? (
              <Loading what="project" />
            ) : (
              "a project you cannot see"
            )}
          </dd>
        </div>
        <div className="kv-row">
          <dt>Model API</dt>
          <dd>{apiLabel}</dd>
        </div>
        <div className="kv-row">
          <dt>Endpoint</dt>
          <dd>
            <code className="inline-code">{hosted.model.baseUrl}</code>
          </dd>
        </div>
        <div className="kv-row">
          <dt>Model</dt>
          <dd>{hosted.model.model}</dd>
        </div>
        <div className="kv-row">
          <dt>API key</dt>
          <dd>
            {hosted.model.hasApiKey ? (
              <StatusPill tone="success" icon="key" label="Set" title="Kept sealed on the hub; never shown" />
            ) : (
              <StatusPill tone="neutral" icon="circle" label="Not set" />
            )}
          </dd>
        </div>
        <div className="kv-row">
          <dt>Created</dt>
          <dd>
            {fullTime(hosted.createdAt)} by {actorName(hosted.createdBy)}
          </dd>
        </div>
      </dl>
      {hosted.mayDelete ? <DeleteHosted agentId={hosted.agentId} name={name} /> : null}
    </Card>
  );
}

function DeleteHosted({ agentId, name }: { agentId: string; name: string }) {
  const { api, agents } = useWorkspace();
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  async function remove() {
    setBusy(true);
    setError(null);
    try {
      await api.deleteHostedAgent(agentId);
      agents.reload();
      navigate("/agents");
    } catch (err) {
      setError((err as ApiError).message);
      setBusy(false);
    }
  }
  return (
    <div className="revoke">
      {!confirming ? (
        <Button variant="danger" icon="xCircle" onClick={() => setConfirming(true)}>
          Delete hosted agent
        </Button>
      ) : (
        <div className="confirm" role="group" aria-label="Confirm delete">
          <p>
            Delete <strong>{name}</strong>? Its engine stops and it can never connect again. Its conversations and tasks
            stay; files it changed in its working directory stay as they are.
          </p>
          <div className="button-row">
            <Button variant="danger" busy={busy} onClick={remove} autoFocus>
              {busy ? "Deleting…" : `Yes, delete ${name}`}
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
