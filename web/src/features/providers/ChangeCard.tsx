// The approval card of a provider change: what will change — the action, the version from and
// to, the capabilities agents gain, lose or see changed, the contract kit's results with the
// failures first, and what blocks it — then Approve, or Reject with a reason.
//
// Approve stays disabled while the change has blockers or its contract failed (the hub would
// refuse it: the card says why instead). Deciding goes through the shared answering core: the
// first decision wins, a 409 reads the change back and says why this answer was not recorded.
// Whoever is not a workspace owner sees the card read-only.

import { useEffect, useId, useRef, useState, type RefObject } from "react";
import type { ApiError } from "../../api/client";
import type { ProviderChange, ProviderChangeDecision, ProviderChangeStatus } from "../../api/types";
import { AnswerProgress, ConflictNote } from "../../answering/AnswerProgress";
import { useAnswerOnce } from "../../answering/useAnswerOnce";
import { fullTime } from "../../lib/time";
import { Button, Icon, RejectForm, RelativeTime, StatusPill } from "../../ui";
import { ContractResults } from "./ContractResults";
import { ACTION_WORDS, approvalHolds, changeLook, changeTitle } from "./look";
import "../../answering/card.css";
import "./providers.css";

export interface ChangeApi {
  decideProviderChange(id: string, decision: ProviderChangeDecision, key?: string): Promise<ProviderChange>;
  providerChanges(status?: "pending" | "all"): Promise<{ changes: ProviderChange[] }>;
}

const STATUSES: ProviderChangeStatus[] = ["pending", "applied", "rejected", "failed"];

function afterConflict(current: ProviderChange, error: ApiError): ProviderChange {
  const d = error.details as { status?: string; reason?: string };
  const status = STATUSES.find((s) => s === d.status) ?? current.status;
  return { ...current, status, reason: d.reason ?? current.reason };
}

export function ChangeCard({
  change,
  api,
  providerName,
  canDecide,
  headingLevel = 3,
  onDecided,
}: {
  change: ProviderChange;
  api: ChangeApi;
  providerName?: string;
  /** A workspace owner: the others see the card read-only. */
  canDecide: boolean;
  headingLevel?: 1 | 2 | 3 | 4;
  onDecided?: (change: ProviderChange) => void;
}) {
  const once = useAnswerOnce<ProviderChange, ProviderChangeDecision>({
    item: change,
    isOpen: (c) => c.status === "pending",
    // the screens holding the card read the change again on every provider fact
    applyEvent: () => null,
    answer: (decision, key) => api.decideProviderChange(change.id, decision, key),
    reload: async () => {
      const found = (await api.providerChanges("all")).changes.find((c) => c.id === change.id);
      if (!found) throw new Error("change not found");
      return found;
    },
    afterConflict,
    onAnswered: onDecided,
  });
  const { current, open, phase, busy, pending, conflict, submit, retry, outcomeRef } = once;
  const titleId = useId();
  const Heading = `h${headingLevel}` as "h3";
  const look = changeLook(current.status);
  const holds = approvalHolds(current);
  const { added, removed, changed } = current.surface;
  const surfaceEmpty = added.length + removed.length + changed.length === 0;

  return (
    <article
      className={`icard pcard ${open ? "icard-open" : "icard-closed"}`}
      aria-labelledby={titleId}
      data-change-id={current.id}
      data-status={current.status}
    >
      <header className="icard-head">
        <span className="icard-kind">
          <Icon name="package" size={16} />
          {open ? "Confirm a provider change" : "Provider change"}
        </span>
        <span className="icard-meta">
          <span>from {current.requestedBy.name}</span>
          <RelativeTime iso={current.requestedAt} />
        </span>
        <StatusPill {...look} />
      </header>
      <Heading id={titleId} className="icard-title">
        {changeTitle(current, providerName)}
      </Heading>

      <section className="icard-section" aria-label={open ? "What will change" : "What changed"}>
        <h4 className="icard-label">{open ? "What will change" : "What changed"}</h4>
        <dl className="kv">
          <div className="kv-row">
            <dt>Action</dt>
            <dd>{ACTION_WORDS[current.action] ?? current.action}</dd>
          </div>
          <div className="kv-row">
            <dt>Provider</dt>
            <dd>
              <code>{current.providerId}</code>
            </dd>
          </div>
          {current.fromVersion || current.toVersion ? (
            <div className="kv-row">
              <dt>Version</dt>
              <dd data-testid="change-versions">
                {current.fromVersion ?? "not installed"} → {current.toVersion ?? "removed"}
              </dd>
            </div>
          ) : null}
        </dl>
      </section>

      <section className="icard-section" aria-label="Capabilities agents can call">
        <h4 className="icard-label">Capabilities agents can call</h4>
        {surfaceEmpty ? (
          <p className="muted small">No change to the capabilities agents can call.</p>
        ) : (
          <div className="surface">
            <SurfaceList title="Added" tone="added" ids={added} />
            <SurfaceList title="Removed" tone="removed" ids={removed} />
            <SurfaceList title="Changed" tone="changed" ids={changed} />
          </div>
        )}
      </section>

      {current.contract ? (
        <section className="icard-section" aria-label="Contract">
          <h4 className="icard-label">Contract</h4>
          <ContractResults report={current.contract} foldPassed />
        </section>
      ) : null}

      {current.blockers.length > 0 ? (
        <section className="icard-section" aria-label="Blockers">
          <h4 className="icard-label">Blockers</h4>
          <ul className="pcard-blockers">
            {current.blockers.map((b) => (
              <li key={b}>
                <Icon name="alert" size={14} /> {b}
              </li>
            ))}
          </ul>
        </section>
      ) : null}

      {open ? (
        <section className="icard-section icard-actions" aria-label="What you can do">
          {canDecide ? (
            <Decide holds={holds} busy={busy} pending={pending} submit={submit} />
          ) : (
            <p className="gcard-readonly">
              <Icon name="info" size={14} /> You can see this change; workspace owners decide it.
            </p>
          )}
          <ConflictNote conflict={conflict} />
          <AnswerProgress phase={phase} retry={retry} />
        </section>
      ) : (
        <Outcome change={current} conflict={conflict} focusRef={outcomeRef} />
      )}
    </article>
  );
}

function SurfaceList({ title, tone, ids }: { title: string; tone: string; ids: string[] }) {
  if (ids.length === 0) return null;
  return (
    <div className={`surface-group surface-${tone}`}>
      <h5 className="surface-title">
        {title} ({ids.length})
      </h5>
      <ul aria-label={`${title} capabilities`}>
        {ids.map((id) => (
          <li key={id}>
            <code>{id}</code>
          </li>
        ))}
      </ul>
    </div>
  );
}

type Mode = "buttons" | "reject";

function Decide({
  holds,
  busy,
  pending,
  submit,
}: {
  holds: string[];
  busy: boolean;
  pending: ProviderChangeDecision | null;
  submit: (d: ProviderChangeDecision) => void;
}) {
  const [mode, setMode] = useState<Mode>("buttons");
  const rejectButton = useRef<HTMLButtonElement>(null);
  const previous = useRef<Mode>(mode);
  const holdsId = useId();
  useEffect(() => {
    if (mode === "buttons" && previous.current === "reject") rejectButton.current?.focus();
    previous.current = mode;
  }, [mode]);
  if (mode === "reject") {
    return <RejectForm hint="Say why, so whoever asked knows what to change." busy={busy} onCancel={() => setMode("buttons")} onSubmit={(reason) => submit({ approve: false, reason })} />;
  }
  return (
    <>
      {holds.length > 0 ? (
        <div className="pcard-holds" id={holdsId}>
          <p>
            <Icon name="stopCircle" size={14} /> It cannot be approved yet:
          </p>
          <ul>
            {holds.map((h) => (
              <li key={h}>{h}</li>
            ))}
          </ul>
        </div>
      ) : null}
      <div className="button-row gcard-buttons">
        <Button
          variant="primary"
          icon="check"
          busy={busy && pending?.approve === true}
          disabled={busy || holds.length > 0}
          aria-describedby={holds.length > 0 ? holdsId : undefined}
          onClick={() => submit({ approve: true })}
        >
          Approve
        </Button>
        <Button ref={rejectButton} variant="danger" disabled={busy} onClick={() => setMode("reject")}>
          Reject…
        </Button>
      </div>
    </>
  );
}

function Outcome({
  change,
  conflict,
  focusRef,
}: {
  change: ProviderChange;
  conflict: string | null;
  focusRef: RefObject<HTMLElement | null>;
}) {
  const who = change.decidedBy?.name || "Someone";
  const when = change.decidedAt ? (
    <>
      {" "}
      <time dateTime={change.decidedAt}>{fullTime(change.decidedAt)}</time>
    </>
  ) : null;
  const reason = change.reason ? (
    <>
      : <span className="outcome-answer">“{change.reason}”</span>
    </>
  ) : null;
  let line;
  if (change.status === "applied") {
    line = (
      <>
        <Icon name="checkCircle" size={16} className="outcome-icon" />
        <span>
          <strong>{who}</strong> approved{when}; the change is applied.
        </span>
      </>
    );
  } else if (change.status === "rejected") {
    line = (
      <>
        <Icon name="xCircle" size={16} className="outcome-icon outcome-icon-danger" />
        <span>
          <strong>{who}</strong> rejected{when}
          {reason}
        </span>
      </>
    );
  } else {
    line = (
      <>
        <Icon name="alert" size={16} className="outcome-icon outcome-icon-danger" />
        <span>
          <strong>{who}</strong> approved{when}, but applying it failed{reason ?? "."}
        </span>
      </>
    );
  }
  return (
    <section className="icard-section icard-outcome" aria-label="Outcome" tabIndex={-1} ref={focusRef}>
      <ConflictNote conflict={conflict} />
      <p className="outcome-line">{line}</p>
    </section>
  );
}
