// One governed execution as a compact row in a conversation: what ran where, its state in
// words, a failure's error class, and the way to its run record.

import type { Execution } from "../../api/types";
import { Link } from "../../lib/router";
import { Icon, RelativeTime, StatusPill } from "../../ui";
import { executionLook, runError } from "./status";
import "./governance.css";

export function RunRow({ execution, agentName }: { execution: Execution; agentName?: string }) {
  const look = executionLook(execution.status);
  const error = execution.status === "failed" ? runError(execution.error) : null;
  return (
    <div className="run-row" data-execution-id={execution.id} data-status={execution.status}>
      <span className="run-row-kind">
        <Icon name="history" size={14} /> Run
      </span>
      <code className="run-row-cap">{execution.capability}</code>
      <span className="run-row-target">on {execution.instance}</span>
      {agentName ? <span className="muted">by {agentName}</span> : null}
      <RelativeTime className="muted" iso={execution.finishedAt ?? execution.startedAt} />
      <StatusPill {...look} />
      {error ? (
        <span className="run-row-error">
          {error.code}
          {error.retryable ? " · retryable" : " · not retryable"}
        </span>
      ) : null}
      {execution.status === "unknown_result" ? (
        <span className="run-row-error">It may or may not have changed; check before asking again.</span>
      ) : null}
      <Link className="run-row-open" to={`/runs/${encodeURIComponent(execution.id)}`}>
        Run record <Icon name="chevron" size={14} />
      </Link>
    </div>
  );
}
