// An interaction card (seed 001 §7.3): why you → impact → what you can do → details.
//
// Answering is optimistic but honest: "Submitting…", then the resolved read-only state; a
// failure shows its message and Retry (the same Idempotency-Key, so a retry never answers
// twice); a conflict, or an answer from elsewhere arriving over the socket, turns the card
// read-only showing who answered, when, and what.

import { useEffect, useId, useRef, useState, type ReactNode, type RefObject } from "react";
import { ApiError, newIdempotencyKey } from "../../api/client";
import type { Agent, HubEvent, Interaction, InteractionResponse } from "../../api/types";
import { useHubEvents } from "../../realtime/RealtimeProvider";
import { Banner, Button, Icon, InteractionStatusPill, RiskPill, type IconName, RelativeTime } from "../../ui";
import { fullTime } from "../../lib/time";
import { describeResponse } from "./validation";
import { withdrawnLine } from "./withdrawn";
import { DeliveryNote } from "../agents/DeliveryNote";
import { ApprovalActions } from "./ApprovalActions";
import { ChoiceActions } from "./ChoiceActions";
import { InputActions } from "./InputActions";
import { ReviewActions } from "./ReviewActions";

export interface InteractionApi {
  respond(id: string, response: InteractionResponse, key?: string): Promise<Interaction>;
  interaction(id: string): Promise<Interaction>;
}

export interface ActionProps {
  interaction: Interaction;
  /** True while an answer is on its way: every control is disabled. */
  busy: boolean;
  /** The answer being sent (to show which button was pressed). */
  pending: InteractionResponse | null;
  submit: (response: InteractionResponse) => void;
}

type Phase =
  | { kind: "idle" }
  | { kind: "submitting"; response: InteractionResponse; key: string }
  | { kind: "failed"; response: InteractionResponse; key: string; error: ApiError };

const KIND: Record<Interaction["type"], { icon: IconName; label: string; done: string }> = {
  approval: { icon: "shield", label: "Approval needed", done: "Approval" },
  choice: { icon: "tasks", label: "Choose an option", done: "Choice" },
  input: { icon: "pencil", label: "Question for you", done: "Question" },
  review: { icon: "file", label: "Review requested", done: "Review" },
};

const ENDED = new Set(["interaction.resolved", "interaction.expired", "interaction.cancelled"]);

function isoOf(value: unknown): string | null {
  if (typeof value === "number") return new Date(value).toISOString();
  return typeof value === "string" ? value : null;
}

/** The card's state after a recorded event about it (an answer from another device or person). */
export function applyInteractionEvent(current: Interaction, event: HubEvent): Interaction | null {
  if (!ENDED.has(event.type) || event.payload.interactionId !== current.id) return null;
  if (event.type === "interaction.resolved") {
    const p = event.payload as {
      response?: InteractionResponse;
      respondedBy?: string;
      respondedByName?: string;
      respondedAt?: unknown;
    };
    return {
      ...current,
      status: "resolved",
      response: p.response ?? current.response,
      respondedBy: p.respondedBy ?? current.respondedBy,
      respondedByName: p.respondedByName ?? current.respondedByName,
      respondedAt: isoOf(p.respondedAt) ?? event.occurredAt,
    };
  }
  if (event.type === "interaction.cancelled") {
    const reason = event.payload.reason;
    return { ...current, status: "cancelled", cancelReason: typeof reason === "string" ? reason : current.cancelReason };
  }
  return { ...current, status: "expired" };
}

export function InteractionCard({
  interaction,
  api,
  agentName,
  agent,
  context,
  headingLevel = 3,
  onAnswered,
}: {
  interaction: Interaction;
  api: InteractionApi;
  agentName?: string;
  /** The asking agent, to say whether the answer has reached it yet. */
  agent?: Agent;
  /** A line about where it comes from (the task it blocks). */
  context?: ReactNode;
  headingLevel?: 2 | 3 | 4;
  onAnswered?: (interaction: Interaction) => void;
}) {
  const [override, setOverride] = useState<Interaction | null>(null);
  const [phase, setPhase] = useState<Phase>({ kind: "idle" });
  const [conflict, setConflict] = useState<string | null>(null);
  const titleId = useId();
  const mounted = useRef(true);
  const answeredHere = useRef(false);
  const outcomeRef = useRef<HTMLElement>(null);
  useEffect(() => {
    mounted.current = true;
    return () => {
      mounted.current = false;
    };
  }, []);

  // The server's word (props) wins once it says the card is over; until then, our own.
  const current: Interaction =
    interaction.status !== "requested" ? interaction : (override ?? interaction);
  const open = current.status === "requested";

  // The pressed button is gone once the card is read-only: keep keyboard focus in the card.
  useEffect(() => {
    if (!open && answeredHere.current) {
      answeredHere.current = false;
      outcomeRef.current?.focus();
    }
  }, [open]);

  useHubEvents((event) => {
    const next = applyInteractionEvent(current, event);
    if (next) {
      setOverride(next);
      setPhase({ kind: "idle" });
    }
  });

  async function send(response: InteractionResponse, key: string) {
    setPhase({ kind: "submitting", response, key });
    setConflict(null);
    try {
      const answered = await api.respond(interaction.id, response, key);
      if (!mounted.current) return;
      answeredHere.current = true;
      setOverride(answered);
      setPhase({ kind: "idle" });
      onAnswered?.(answered);
    } catch (err) {
      if (!mounted.current) return;
      const error = err instanceof ApiError ? err : new ApiError("unknown_result", String(err), 0);
      if (error.code === "conflict") {
        setConflict(error.message);
        answeredHere.current = true;
        try {
          const latest = await api.interaction(interaction.id);
          if (mounted.current) setOverride(latest);
        } catch {
          if (mounted.current) {
            const reason = (error.details as { reason?: string }).reason;
            setOverride({
              ...current,
              status: reason === "expired" ? "expired" : reason === "cancelled" ? "cancelled" : "resolved",
            });
          }
        }
        if (mounted.current) setPhase({ kind: "idle" });
        return;
      }
      setPhase({ kind: "failed", response, key, error });
    }
  }

  const submit = (response: InteractionResponse) => void send(response, newIdempotencyKey());
  const retry = () => {
    if (phase.kind === "failed") void send(phase.response, phase.key);
  };

  const request = current.request;
  const kind = KIND[current.type] ?? KIND.approval;
  const why = request.why ?? request.description;
  const Heading = `h${headingLevel}` as "h3";
  const busy = phase.kind === "submitting";
  const actionProps: ActionProps = {
    interaction: current,
    busy,
    pending: phase.kind === "submitting" ? phase.response : null,
    submit,
  };

  return (
    <article
      className={`icard icard-${current.type} ${open ? "icard-open" : "icard-closed"}`}
      aria-labelledby={titleId}
      data-interaction-id={current.id}
      data-status={current.status}
    >
      <header className="icard-head">
        <span className="icard-kind">
          <Icon name={kind.icon} size={16} />
          {open ? kind.label : kind.done}
        </span>
        <span className="icard-meta">
          {agentName ? <span>from {agentName}</span> : null}
          {current.createdAt ? (
            <RelativeTime iso={current.createdAt} />
          ) : null}
        </span>
        {!open ? <InteractionStatusPill status={current.status} /> : null}
      </header>
      <Heading id={titleId} className="icard-title">
        {request.title}
      </Heading>
      {context ? <div className="icard-context">{context}</div> : null}

      {why ? (
        <section className="icard-section" aria-label="Why you">
          <h4 className="icard-label">Why you</h4>
          <p className="icard-text">{why}</p>
        </section>
      ) : null}

      {request.impact || request.risk ? (
        <section className="icard-section" aria-label="Impact">
          <h4 className="icard-label">Impact</h4>
          <div className="icard-impact">
            {request.risk ? <RiskPill risk={request.risk} /> : null}
            {request.impact ? <p className="icard-text">{request.impact}</p> : null}
          </div>
        </section>
      ) : null}

      {open ? (
        <section className="icard-section icard-actions" aria-label="What you can do">
          <h4 className="icard-label">What you can do</h4>
          {current.type === "approval" ? <ApprovalActions {...actionProps} /> : null}
          {current.type === "choice" ? <ChoiceActions {...actionProps} /> : null}
          {current.type === "input" ? <InputActions {...actionProps} /> : null}
          {current.type === "review" ? <ReviewActions {...actionProps} /> : null}
          {current.expiresAt ? (
            <p className="icard-expiry">
              <Icon name="clock" size={14} /> Answer by {fullTime(current.expiresAt)}
            </p>
          ) : null}
          <div aria-live="polite" className="icard-status">
            {phase.kind === "submitting" ? (
              <p className="icard-submitting">
                <Icon name="send" size={14} /> Submitting your answer…
              </p>
            ) : null}
          </div>
          {phase.kind === "failed" ? (
            <Banner
              tone="danger"
              live="assertive"
              title="Your answer was not sent"
              action={
                <Button size="sm" onClick={retry}>
                  Retry
                </Button>
              }
            >
              {phase.error.message}
            </Banner>
          ) : null}
        </section>
      ) : (
        <Outcome interaction={current} conflict={conflict} focusRef={outcomeRef} agent={agent} />
      )}

      {request.details && Object.keys(request.details).length > 0 ? (
        <details className="icard-details">
          <summary>Details</summary>
          <dl className="kv">
            {Object.entries(request.details).map(([key, value]) => (
              <div key={key} className="kv-row">
                <dt>{key}</dt>
                <dd>{typeof value === "string" ? value : JSON.stringify(value)}</dd>
              </div>
            ))}
          </dl>
        </details>
      ) : null}
    </article>
  );
}

function Outcome({
  interaction,
  conflict,
  focusRef,
  agent,
}: {
  interaction: Interaction;
  conflict: string | null;
  focusRef: RefObject<HTMLElement | null>;
  agent?: Agent;
}) {
  let body: ReactNode;
  if (interaction.status === "resolved") {
    const who = interaction.respondedByName || "Someone";
    body = (
      <p className="outcome-line">
        <Icon name="checkCircle" size={16} className="outcome-icon" />
        <span>
          <strong>{who}</strong> answered{" "}
          {interaction.respondedAt ? (
            <time dateTime={interaction.respondedAt}>{fullTime(interaction.respondedAt)}</time>
          ) : null}
          : <span className="outcome-answer">{describeResponse(interaction) || "answered"}</span>
        </span>
      </p>
    );
    body = (
      <>
        {body}
        <DeliveryNote sentAt={interaction.respondedAt} agent={agent} />
      </>
    );
  } else if (interaction.status === "expired") {
    body = (
      <p className="outcome-line">
        <Icon name="clock" size={16} className="outcome-icon" />
        <span>This request expired{interaction.expiresAt ? ` at ${fullTime(interaction.expiresAt)}` : ""}; it can no longer be answered.</span>
      </p>
    );
  } else {
    body = (
      <p className="outcome-line">
        <Icon name="stopCircle" size={16} className="outcome-icon" />
        <span>{withdrawnLine("request", interaction.cancelReason)}</span>
      </p>
    );
  }
  return (
    <section className="icard-section icard-outcome" aria-label="Outcome" tabIndex={-1} ref={focusRef}>
      {conflict ? (
        <p className="outcome-conflict">
          <Icon name="info" size={16} /> Your answer was not recorded: {conflict}
        </p>
      ) : null}
      {body}
    </section>
  );
}
