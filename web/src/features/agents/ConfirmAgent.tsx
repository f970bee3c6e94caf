// Finishing a pairing: the person sees what the agent says it is and confirms it (maybe
// renaming it), or rejects an agent they do not recognise. Until then it gets no work.

import { useEffect, useId, useState, type FormEvent } from "react";
import { ApiError, newIdempotencyKey } from "../../api/client";
import type { Agent } from "../../api/types";
import { useWorkspace } from "../../app/workspace";
import { Button } from "../../ui";

export function ConfirmAgent({ agent, onDone }: { agent: Agent; onDone?: (outcome: "confirmed" | "rejected") => void }) {
  const { api, agents } = useWorkspace();
  const [name, setName] = useState(agent.name);
  const [busy, setBusy] = useState<"confirm" | "reject" | null>(null);
  const [error, setError] = useState<string | null>(null);
  const nameId = useId();
  useEffect(() => setName(agent.name), [agent.name]);

  async function confirm(e: FormEvent) {
    e.preventDefault();
    const chosen = name.trim();
    if (!chosen) {
      setError("A name cannot be empty.");
      return;
    }
    setBusy("confirm");
    setError(null);
    try {
      await api.confirmAgent(agent.id, chosen, newIdempotencyKey());
      agents.reload();
      onDone?.("confirmed");
    } catch (err) {
      setError((err as ApiError).message);
    } finally {
      setBusy(null);
    }
  }

  async function reject() {
    setBusy("reject");
    setError(null);
    try {
      await api.rejectAgent(agent.id);
      agents.reload();
      onDone?.("rejected");
    } catch (err) {
      setError((err as ApiError).message);
    } finally {
      setBusy(null);
    }
  }

  return (
    <section className="confirm-agent" aria-labelledby={`${nameId}-title`}>
      <h3 id={`${nameId}-title`} className="step-title">
        Is this your agent?
      </h3>
      <dl className="kv">
        <div className="kv-row">
          <dt>Name it gave</dt>
          <dd data-testid="confirm-agent-name">{agent.name}</dd>
        </div>
        <div className="kv-row">
          <dt>Version</dt>
          <dd>{agent.version ?? "unknown"}</dd>
        </div>
        <div className="kv-row">
          <dt>Runtime</dt>
          <dd>{agent.runtime ?? "unknown"}</dd>
        </div>
        <div className="kv-row">
          <dt>Capabilities</dt>
          <dd>{agent.capabilities.length ? agent.capabilities.join(", ") : "none declared yet"}</dd>
        </div>
        <div className="kv-row">
          <dt>Connection</dt>
          <dd>{agent.online ? "connected, waiting for you" : "not connected yet"}</dd>
        </div>
      </dl>
      <form className="inline-form" onSubmit={confirm} noValidate>
        <div className="field">
          <label htmlFor={nameId}>Agent name</label>
          <input id={nameId} value={name} maxLength={100} onChange={(e) => setName(e.target.value)} />
        </div>
        <Button type="submit" variant="primary" icon="check" busy={busy === "confirm"} disabled={busy !== null}>
          {busy === "confirm" ? "Confirming…" : "Confirm agent"}
        </Button>
        <Button variant="danger" icon="xCircle" busy={busy === "reject"} disabled={busy !== null} onClick={reject}>
          {busy === "reject" ? "Rejecting…" : "Reject — not my agent"}
        </Button>
      </form>
      <p className="muted small">Until you confirm it, it gets no messages, tasks or tool calls.</p>
      {error ? (
        <p className="field-error" role="alert">
          {error}
        </p>
      ) : null}
    </section>
  );
}
