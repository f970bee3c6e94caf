// The confirm card of a governed write (seed 003 §2.4): what will change (capability, target,
// impact, a summary of the parameters and the parameters themselves, the resource version
// the draft was made against), how long it waits and for whom; then Approve once, Approve and
// don't ask again (a standing permission), Reject with a reason, or Hand over.
//
// Answering goes through the shared answering core: the first decision wins; a 409 reads the
// approval back and says who decided first; an expiry or a voiding ends the card with its
// reason. Viewers see the card read-only.

import { useEffect, useId, useRef, useState, useSyncExternalStore, type FormEvent, type ReactNode, type RefObject } from "react";
import { ApiError, newIdempotencyKey } from "../../api/client";
import type { Approval, ApprovalDecision, ProjectDetail } from "../../api/types";
import { AnswerProgress, ConflictNote } from "../../answering/AnswerProgress";
import { useAnswerOnce } from "../../answering/useAnswerOnce";
import { clockNow, subscribeClock } from "../../lib/clock";
import { Link } from "../../lib/router";
import { fullTime } from "../../lib/time";
import { useResource } from "../../lib/useResource";
import { Button, Icon, RejectForm, RelativeTime, StatusPill } from "../../ui";
import { StandingForm } from "./StandingForm";
import {
  applyApprovalEvent,
  approvalLook,
  msLeft,
  pretty,
  redact,
  shortDigest,
  shortValue,
  timeLeft,
  timeLeftWords,
} from "./status";
import "../../answering/card.css";
import "./governance.css";

export interface ApprovalApi {
  decide(id: string, decision: ApprovalDecision, key?: string): Promise<Approval>;
  approval(id: string): Promise<Approval>;
  handOver(id: string, userId: string, key?: string): Promise<Approval>;
  project(id: string): Promise<ProjectDetail>;
}

type Mode = "buttons" | "standing" | "reject" | "handover";

/** What a conflict says the approval became when it cannot be read again. */
function afterConflict(current: Approval, error: ApiError): Approval {
  const d = error.details as { status?: string; decidedBy?: string; decidedByName?: string; reason?: string };
  const status = (["approved", "rejected", "expired", "voided"] as const).find((s) => s === d.status) ?? "rejected";
  return {
    ...current,
    status,
    decidedBy: d.decidedBy ?? current.decidedBy,
    decidedByName: d.decidedByName ?? current.decidedByName,
    reason: d.reason ?? current.reason,
  };
}

function useClock(): number {
  return useSyncExternalStore(subscribeClock, clockNow);
}

export function ApprovalCard({
  approval,
  api,
  agentName,
  meId,
  headingLevel = 3,
  context,
  onDecided,
}: {
  approval: Approval;
  api: ApprovalApi;
  agentName?: string;
  /** The signed-in person's user id (not offered as someone to hand over to). */
  meId?: string;
  headingLevel?: 2 | 3 | 4;
  context?: ReactNode;
  onDecided?: (approval: Approval) => void;
}) {
  const now = useClock();
  // Past its expiry the hub will refuse it: show it as over without waiting for a fact.
  const lapsed = approval.status === "pending" && msLeft(approval.expiresAt, now) <= 0;
  const item: Approval = lapsed ? { ...approval, status: "expired" } : approval;
  const once = useAnswerOnce<Approval, ApprovalDecision>({
    item,
    isOpen: (a) => a.status === "pending",
    applyEvent: applyApprovalEvent,
    answer: (decision, key) => api.decide(approval.id, decision, key),
    reload: () => api.approval(approval.id),
    afterConflict,
    onAnswered: onDecided,
  });
  const { phase, busy, pending, conflict, submit, retry, outcomeRef, replace } = once;
  const current = once.open && msLeft(once.current.expiresAt, now) <= 0 ? { ...once.current, status: "expired" as const } : once.current;
  const open = current.status === "pending";
  const project = useResource(() => api.project(approval.projectId), [api, approval.projectId]);
  const titleId = useId();
  const [mode, setMode] = useState<Mode>("buttons");
  const Heading = `h${headingLevel}` as "h3";
  const look = approvalLook(current.status);
  const members = project.data?.members ?? [];
  const nameOf = (userId: string | null | undefined) =>
    !userId ? "" : userId === meId ? "you" : (members.find((m) => m.userId === userId)?.displayName ?? "a teammate");
  const waitsFor = current.assignee
    ? nameOf(current.assignee)
    : `any owner or editor of ${project.data?.name ?? "the project"}`;

  return (
    <article
      className={`icard gcard ${open ? "icard-open" : "icard-closed"}`}
      aria-labelledby={titleId}
      data-approval-id={current.id}
      data-status={current.status}
    >
      <header className="icard-head">
        <span className="icard-kind">
          <Icon name="shield" size={16} />
          {open ? "Confirm a change" : "Change"}
        </span>
        <span className="icard-meta">
          {agentName ? <span>from {agentName}</span> : null}
          <RelativeTime iso={current.createdAt} />
        </span>
        <StatusPill {...look} />
      </header>
      <Heading id={titleId} className="icard-title">
        {current.summary || current.capability}
      </Heading>
      {context ? <div className="icard-context">{context}</div> : null}

      <section className="icard-section" aria-label="Impact">
        <h4 className="icard-label">Impact</h4>
        <p className="icard-text">{current.impact}</p>
      </section>

      <section className="icard-section" aria-label="What will run">
        <h4 className="icard-label">What will run</h4>
        <dl className="kv gcard-facts">
          <div className="kv-row">
            <dt>Action</dt>
            <dd>
              <code>{current.capability}</code>
            </dd>
          </div>
          <div className="kv-row">
            <dt>Target</dt>
            <dd>{current.instance}</dd>
          </div>
          <div className="kv-row">
            <dt>Target version</dt>
            <dd data-testid="resource-version">{current.resourceVersion ?? "not versioned"}</dd>
          </div>
          <div className="kv-row">
            <dt>Parameters</dt>
            <dd>
              <ul className="gcard-params">
                {Object.entries(redact(current.params) as Record<string, unknown>).map(([k, v]) => (
                  <li key={k}>
                    <span className="muted">{k}</span> {shortValue(v)}
                  </li>
                ))}
              </ul>
            </dd>
          </div>
          {project.data ? (
            <div className="kv-row">
              <dt>Project</dt>
              <dd>{project.data.name}</dd>
            </div>
          ) : null}
        </dl>
      </section>

      {open ? (
        <section className="icard-section icard-actions" aria-label="What you can do">
          <p className="gcard-waits">
            <Icon name="hand" size={14} /> Waits for {waitsFor}
          </p>
          <Expiry expiresAt={current.expiresAt} now={now} />
          {current.canDecide ? (
            <Decide
              approval={current}
              mode={mode}
              setMode={setMode}
              busy={busy}
              pending={pending}
              submit={submit}
              handover={
                <Handover
                  approval={current}
                  project={project.data}
                  meId={meId}
                  api={api}
                  onDone={(a) => {
                    replace(a);
                    setMode("buttons");
                  }}
                  onCancel={() => setMode("buttons")}
                />
              }
            />
          ) : (
            <p className="gcard-readonly">
              <Icon name="info" size={14} /> You can see this request; owners and editors of the project decide it.
            </p>
          )}
          <AnswerProgress phase={phase} retry={retry} />
        </section>
      ) : (
        <Outcome approval={current} conflict={conflict} focusRef={outcomeRef} />
      )}

      <details className="icard-details">
        <summary>Parameters in full</summary>
        <pre className="gcard-json">{pretty(current.params)}</pre>
        <p className="small muted" title={current.paramsDigest}>
          The decision is bound to exactly these parameters: digest <code>{shortDigest(current.paramsDigest)}</code>
        </p>
      </details>
      {current.draft ? (
        <details className="icard-details">
          <summary>The system’s draft</summary>
          <pre className="gcard-json">{pretty(current.draft)}</pre>
        </details>
      ) : null}
    </article>
  );
}

function Expiry({ expiresAt, now }: { expiresAt: string; now: number }) {
  const left = msLeft(expiresAt, now);
  return (
    <p className="icard-expiry">
      <Icon name="clock" size={14} />
      <span>
        Expires in <span className="gcard-countdown" aria-hidden="true">{timeLeft(left)}</span>
        <span className="sr-only">{timeLeftWords(left)}</span>, at {fullTime(expiresAt)}
      </span>
    </p>
  );
}

function Decide({
  approval,
  mode,
  setMode,
  busy,
  pending,
  submit,
  handover,
}: {
  approval: Approval;
  mode: Mode;
  setMode: (m: Mode) => void;
  busy: boolean;
  pending: ApprovalDecision | null;
  submit: (d: ApprovalDecision) => void;
  handover: ReactNode;
}) {
  // Back from a form, keyboard focus returns to the button that opened it.
  const opener = useRef<Partial<Record<Mode, HTMLButtonElement | null>>>({});
  const previous = useRef<Mode>(mode);
  useEffect(() => {
    if (mode === "buttons" && previous.current !== "buttons") opener.current[previous.current]?.focus();
    previous.current = mode;
  }, [mode]);
  if (mode === "standing") {
    return (
      <StandingForm
        params={approval.params}
        busy={busy}
        onCancel={() => setMode("buttons")}
        onSubmit={(standing) => submit({ decision: "approve", standing })}
      />
    );
  }
  if (mode === "reject") {
    return <RejectForm hint="Say why, so the agent knows what to change." busy={busy} onCancel={() => setMode("buttons")} onSubmit={(reason) => submit({ decision: "reject", reason })} />;
  }
  if (mode === "handover") return <>{handover}</>;
  return (
    <div className="button-row gcard-buttons">
      <Button
        variant="primary"
        icon="check"
        busy={busy && pending?.decision === "approve" && !pending.standing}
        disabled={busy}
        onClick={() => submit({ decision: "approve" })}
      >
        Approve once
      </Button>
      <Button ref={(el) => void (opener.current.standing = el)} disabled={busy} onClick={() => setMode("standing")}>
        Approve and don’t ask again…
      </Button>
      <Button ref={(el) => void (opener.current.reject = el)} variant="danger" disabled={busy} onClick={() => setMode("reject")}>
        Reject…
      </Button>
      <Button ref={(el) => void (opener.current.handover = el)} variant="ghost" disabled={busy} onClick={() => setMode("handover")}>
        Hand over…
      </Button>
    </div>
  );
}

function Handover({
  approval,
  project,
  meId,
  api,
  onDone,
  onCancel,
}: {
  approval: Approval;
  project: ProjectDetail | undefined;
  meId?: string;
  api: ApprovalApi;
  onDone: (a: Approval) => void;
  onCancel: () => void;
}) {
  const candidates = (project?.members ?? []).filter(
    (m) => (m.role === "owner" || m.role === "editor") && m.userId !== meId && m.userId !== approval.assignee,
  );
  const [userId, setUserId] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [key] = useState(newIdempotencyKey);
  const id = useId();
  const chosen = userId || candidates[0]?.userId || "";
  async function send(e: FormEvent) {
    e.preventDefault();
    if (!chosen) return;
    setBusy(true);
    setError(null);
    try {
      onDone(await api.handOver(approval.id, chosen, key));
    } catch (err) {
      setError(err instanceof ApiError ? err.message : String(err));
      setBusy(false);
    }
  }
  if (!project) return <p className="muted">Loading the project’s members…</p>;
  return (
    <form className="actions-block" onSubmit={send} noValidate aria-label="Hand over">
      {candidates.length === 0 ? (
        <p className="muted">Nobody else in {project.name} can decide it: add an owner or editor to the project first.</p>
      ) : (
        <div className="field">
          <label htmlFor={id}>Ask someone else to decide</label>
          <select id={id} value={chosen} autoFocus onChange={(e) => setUserId(e.target.value)} disabled={busy}>
            {candidates.map((m) => (
              <option key={m.userId} value={m.userId}>
                {m.displayName} ({m.role})
              </option>
            ))}
          </select>
        </div>
      )}
      {error ? (
        <p className="field-error" role="alert">
          {error}
        </p>
      ) : null}
      <div className="button-row">
        <Button type="submit" variant="primary" busy={busy} disabled={!chosen}>
          Hand over
        </Button>
        <Button variant="ghost" disabled={busy} onClick={onCancel}>
          Cancel
        </Button>
      </div>
    </form>
  );
}

function Outcome({
  approval,
  conflict,
  focusRef,
}: {
  approval: Approval;
  conflict: string | null;
  focusRef: RefObject<HTMLElement | null>;
}) {
  const who = approval.decidedByName || (approval.decidedBy === "hub" ? "LineUp" : "Someone");
  const when = approval.decidedAt ? (
    <>
      {" "}
      <time dateTime={approval.decidedAt}>{fullTime(approval.decidedAt)}</time>
    </>
  ) : null;
  let body: ReactNode;
  if (approval.status === "approved") {
    body = (
      <p className="outcome-line">
        <Icon name="checkCircle" size={16} className="outcome-icon" />
        <span>
          <strong>{who}</strong> approved{when}
          {approval.permissionId ? " and allowed calls like it for a while (a standing permission)" : ""}.
        </span>
      </p>
    );
  } else if (approval.status === "rejected") {
    body = (
      <p className="outcome-line">
        <Icon name="xCircle" size={16} className="outcome-icon outcome-icon-danger" />
        <span>
          <strong>{who}</strong> rejected{when}
          {approval.reason ? (
            <>
              : <span className="outcome-answer">“{approval.reason}”</span>
            </>
          ) : null}
        </span>
      </p>
    );
  } else if (approval.status === "expired") {
    body = (
      <p className="outcome-line">
        <Icon name="clock" size={16} className="outcome-icon" />
        <span>Nobody decided by {fullTime(approval.expiresAt)}: it expired and the agent was told. It can ask again.</span>
      </p>
    );
  } else {
    body = (
      <p className="outcome-line">
        <Icon name="stopCircle" size={16} className="outcome-icon" />
        <span>
          Voided: {approval.reason || "what it was bound to changed before it was approved"}. The agent was told; it can ask
          again.
        </span>
      </p>
    );
  }
  return (
    <section className="icard-section icard-outcome" aria-label="Outcome" tabIndex={-1} ref={focusRef}>
      <ConflictNote conflict={conflict} />
      {body}
      {approval.executionId ? (
        <Link className="gcard-run-link" to={`/runs/${encodeURIComponent(approval.executionId)}`}>
          <Icon name="history" size={14} /> Open the run record
        </Link>
      ) : null}
    </section>
  );
}
