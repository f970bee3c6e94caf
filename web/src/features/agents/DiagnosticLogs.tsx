// An agent's own diagnostic lines: what its adapter logged about connecting, failing and
// reconnecting, redacted on the agent and again by the hub. Newest first; fields fold open.

import { useCallback, useEffect, useState } from "react";
import type { ApiError } from "../../api/client";
import type { AgentLogLine } from "../../api/types";
import { useWorkspace } from "../../app/workspace";
import { clockTime, fullTime } from "../../lib/time";
import { Button, Card, Icon, Loading } from "../../ui";

const REFRESH_MS = 10_000;

const LEVEL_LABEL: Record<AgentLogLine["level"], string> = {
  debug: "Debug",
  info: "Info",
  warning: "Warning",
  error: "Error",
  critical: "Critical",
};

export function DiagnosticLogs({ agentId }: { agentId: string }) {
  const { api } = useWorkspace();
  const [lines, setLines] = useState<AgentLogLine[] | null>(null);
  const [kept, setKept] = useState<number | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const load = useCallback(async () => {
    setBusy(true);
    try {
      const body = await api.agentLogs(agentId);
      setLines(body.lines);
      setKept(body.kept);
      setError(null);
    } catch (err) {
      setError((err as ApiError).message);
    } finally {
      setBusy(false);
    }
  }, [api, agentId]);

  useEffect(() => {
    setLines(null);
    void load();
    const timer = window.setInterval(() => {
      if (document.visibilityState === "visible") void load();
    }, REFRESH_MS);
    return () => window.clearInterval(timer);
  }, [load]);

  return (
    <Card className="diagnostics">
      <div className="card-title-row">
        <h2 className="card-title">
          <Icon name="history" size={18} /> Diagnostic logs
        </h2>
        <Button variant="ghost" busy={busy} onClick={() => void load()}>
          Refresh
        </Button>
      </div>
      <p className="muted small">
        What the agent logged about itself — connection attempts, errors,
        reconnects — sent when it connects. Secrets are removed before the lines
        leave its machine{kept ? `; the last ${kept} are kept` : ""}.
      </p>
      {error ? (
        <p className="field-error" role="alert">
          {error}
        </p>
      ) : null}
      {lines === null && !error ? <Loading what="diagnostic logs" /> : null}
      {lines && lines.length === 0 ? (
        <p className="muted">
          No lines yet. An agent sends them once it has connected.
        </p>
      ) : null}
      {lines && lines.length > 0 ? (
        <ol className="log-lines" aria-label="Diagnostic log lines">
          {lines.map((line) => (
            <LogLineItem key={`${line.position}-${line.id}`} line={line} />
          ))}
        </ol>
      ) : null}
    </Card>
  );
}

function LogLineItem({ line }: { line: AgentLogLine }) {
  const fields =
    line.fields && Object.keys(line.fields).length ? line.fields : null;
  return (
    <li className={`log-line log-${line.level}`}>
      <div className="log-meta">
        <span className={`log-level log-level-${line.level}`}>
          {LEVEL_LABEL[line.level]}
        </span>
        <time
          dateTime={line.at}
          title={`${fullTime(line.at)} (received ${fullTime(line.receivedAt)})`}
        >
          {clockTime(line.at)}
        </time>
        <span className="log-logger">{line.logger}</span>
      </div>
      <p className="log-message">{line.message}</p>
      {fields ? (
        <details className="log-fields">
          <summary>Fields</summary>
          <pre>{JSON.stringify(fields, null, 2)}</pre>
        </details>
      ) : null}
    </li>
  );
}
