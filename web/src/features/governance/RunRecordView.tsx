// A run record (seed 003 §2.5): who asked and on whose behalf, when, what ran where with
// which parameters, who approved it and how, what happened — status, error class, whether it
// is retryable, the job, the attempts, the provider's receipt and output — and the audit
// entries behind it.

import type { ReactNode } from "react";
import type { AuditEntry, RunRecord } from "../../api/types";
import { useWorkspace } from "../../app/workspace";
import { Link } from "../../lib/router";
import { fullTime } from "../../lib/time";
import { useResource } from "../../lib/useResource";
import { useTitle } from "../../lib/useTitle";
import { Card, ErrorBanner, Icon, Loading, StatusPill } from "../../ui";
import { approvalLook, executionLook, pretty, runError, shortDigest } from "./status";
import "./governance.css";

export function RunRecordView({ executionId }: { executionId: string }) {
  const { api } = useWorkspace();
  const record = useResource(() => api.runRecord(executionId), [api, executionId], {
    refreshOn: (e) =>
      (e.type.startsWith("execution.") && (e.payload as { executionId?: string }).executionId === executionId) ||
      e.type === "approval.decided",
  });
  useTitle("Run record");
  return (
    <div className="page run-record">
      <Link to="/approvals" className="back-link">
        <Icon name="back" size={16} /> Approvals
      </Link>
      {record.error && !record.data ? <ErrorBanner error={record.error} onRetry={record.reload} /> : null}
      {!record.data && !record.error ? <Loading what="the run record" /> : null}
      {record.data ? <RunRecordBody record={record.data} /> : null}
    </div>
  );
}

function Row({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div className="kv-row">
      <dt>{label}</dt>
      <dd>{children}</dd>
    </div>
  );
}

export function RunRecordBody({ record }: { record: RunRecord }) {
  const { agentName, actorName } = useWorkspace();
  const { execution: e, invocation: inv, approval: a } = record;
  const look = executionLook(e.status);
  const error = runError(e.error);
  return (
    <>
      <header className="page-head">
        <p className="run-kicker">Run record</p>
        <h1>
          <code>{e.capability}</code> on {e.instance}
        </h1>
        <div className="run-status" data-testid="run-status">
          <StatusPill {...look} />
        </div>
      </header>

      {error ? (
        <div className={`run-failure${error.retryable ? "" : " is-final"}`} role="status">
          <Icon name="xCircle" size={16} />
          <span>
            <strong>{error.code}</strong>
            {error.message ? `: ${error.message}` : ""} —{" "}
            {error.retryable ? "retryable: the agent may try again later." : "not retryable: something must change first."}
          </span>
        </div>
      ) : null}
      {e.status === "unknown_result" ? (
        <div className="run-failure" role="status">
          <Icon name="alert" size={16} />
          <span>
            The system did not answer in time and nothing could settle it: the change may or may not have happened. Look
            before asking again.
          </span>
        </div>
      ) : null}

      <Card>
        <h2 className="card-title">Who and when</h2>
        <dl className="kv">
          <Row label="Asked by">{agentName(inv.agentId)}</Row>
          <Row label="On behalf of">{inv.onBehalfOf ? actorName(inv.onBehalfOf) : "—"}</Row>
          <Row label="Asked at">
            <time dateTime={inv.createdAt}>{fullTime(inv.createdAt)}</time>
          </Row>
          <Row label="Started">
            <time dateTime={e.startedAt}>{fullTime(e.startedAt)}</time>
          </Row>
          <Row label="Finished">{e.finishedAt ? <time dateTime={e.finishedAt}>{fullTime(e.finishedAt)}</time> : "not yet"}</Row>
          {e.conversationId ? (
            <Row label="Conversation">
              <Link to={`/conversations/${encodeURIComponent(e.conversationId)}`}>Open the conversation</Link>
            </Row>
          ) : null}
        </dl>
      </Card>

      <Card>
        <h2 className="card-title">What ran</h2>
        <dl className="kv">
          <Row label="Action">
            <code>{e.capability}</code> ({inv.effect})
          </Row>
          <Row label="Target">{e.instance}</Row>
          <Row label="Target version">{e.expectedVersion ?? "—"}</Row>
          <Row label="Parameters digest">
            <code title={e.paramsDigest}>{shortDigest(e.paramsDigest)}</code>
          </Row>
        </dl>
        <details className="icard-details" open>
          <summary>Parameters</summary>
          <pre className="gcard-json">{pretty(inv.params)}</pre>
        </details>
      </Card>

      <Card>
        <h2 className="card-title">Approval</h2>
        {a ? (
          <dl className="kv">
            <Row label="Decision">
              <StatusPill {...approvalLook(a.status)} />
            </Row>
            <Row label="Decided by">{a.decidedByName || (a.decidedBy ? actorName(a.decidedBy) : "—")}</Row>
            <Row label="Decided at">{a.decidedAt ? <time dateTime={a.decidedAt}>{fullTime(a.decidedAt)}</time> : "—"}</Row>
            {a.reason ? <Row label="Reason">{a.reason}</Row> : null}
            <Row label="Standing permission">{a.permissionId ? `granted (${a.permissionId})` : "no, this call only"}</Row>
            <Row label="Confirm card">
              <Link to={`/approvals/${encodeURIComponent(a.id)}`}>Open the approval</Link>
            </Row>
          </dl>
        ) : (
          <p className="muted">
            {inv.effect === "read" ? "A read: it needed no approval." : "Allowed by a standing permission; nobody was asked this time."}
          </p>
        )}
      </Card>

      <Card>
        <h2 className="card-title">What happened</h2>
        <dl className="kv">
          <Row label="Status">{look.label}</Row>
          <Row label="Error class">{error ? error.code : "—"}</Row>
          <Row label="Retryable">{error ? (error.retryable ? "yes" : "no") : "—"}</Row>
          <Row label="Job">{e.jobId ?? "—"}</Row>
          <Row label="Attempts">{e.attempts}</Row>
        </dl>
        <details className="icard-details" open={!!e.receipt}>
          <summary>The system’s receipt</summary>
          {e.receipt ? <pre className="gcard-json">{pretty(e.receipt)}</pre> : <p className="muted">No receipt yet.</p>}
        </details>
        <details className="icard-details" open={!!e.output}>
          <summary>Output</summary>
          {e.output ? <pre className="gcard-json">{pretty(e.output)}</pre> : <p className="muted">No output yet.</p>}
        </details>
      </Card>

      <Card>
        <h2 className="card-title">Audit</h2>
        <AuditList entries={record.audit} />
      </Card>
    </>
  );
}

function AuditList({ entries }: { entries: AuditEntry[] }) {
  const { actorName } = useWorkspace();
  if (entries.length === 0) return <p className="muted">No audit entries recorded for this run.</p>;
  return (
    <ol className="audit-list" aria-label="Audit entries">
      {entries.map((entry) => (
        <li key={entry.seq} className="audit-entry" data-seq={entry.seq}>
          <span className="audit-seq">#{entry.seq}</span>
          <span className="audit-kind">{entry.kind}</span>
          <span className="audit-actor">{actorName(entry.actor)}</span>
          <time className="muted" dateTime={entry.at}>
            {fullTime(entry.at)}
          </time>
          <code className="audit-hash" title={entry.hash}>
            {shortDigest(entry.hash)}
          </code>
        </li>
      ))}
    </ol>
  );
}
