// An interaction card (seed 001 §7.3): why you → impact → what you can do → details.
//
// Answering is optimistic but honest: "Submitting…", then the resolved read-only state; a
// failure shows its message and Retry (the same Idempotency-Key, so a retry never answers
// twice); a conflict, or an answer from elsewhere arriving over the socket, turns the card
// read-only showing who answered, when, and what.

import { useId, type ReactNode, type RefObject } from "react";
import type { ApiError } from "../../api/client";
import type { Agent, HubEvent, Interaction, InteractionResponse } from "../../api/types";
import { AnswerProgress, ConflictNote } from "../../answering/AnswerProgress";
import { useAnswerOnce } from "../../answering/useAnswerOnce";
import { Icon, InteractionStatusPill, RiskPill, type IconName, RelativeTime } from "../../ui";
import { fullTime, isoOf } from "../../lib/time";
import { describeResponse } from "./validation";
import { withdrawnLine } from "./withdrawn";
import { DeliveryNote } from "../agents/DeliveryNote";
import { ApprovalActions } from "./ApprovalActions";
import { ChoiceActions } from "./ChoiceActions";
import { InputActions } from "./InputActions";
import { ReviewActions } from "./ReviewActions";
import { RawEvents, type RawEventsApi } from "../events/RawEvents";
import "./interactions.css";

export interface InteractionApi {
  respond(id: string, response: InteractionResponse, key?: string): Promise<Interaction>;
  interaction(id: string): Promise<Interaction>;
  /** The card's raw events, offered when the client can read them. */
  rawEvents?: RawEventsApi["rawEvents"];
}

export interface ActionProps {
  interaction: Interaction;
  /** True while an answer is on its way: every control is disabled. */
  busy: boolean;
  /** The answer being sent (to show which button was pressed). */
  pending: InteractionResponse | null;
  submit: (response: InteractionResponse) => void;
}

const KIND: Record<Interaction["type"], { icon: IconName; label: string; done: string }> = {
  approval: { icon: "shield", label: "Approval needed", done: "Approval" },
  choice: { icon: "tasks", label: "Choose an option", done: "Choice" },
  input: { icon: "pencil", label: "Question for you", done: "Question" },
  review: { icon: "file", label: "Review requested", done: "Review" },
};

/** The card's state after a recorded event about it (an answer from another device or person). */
export function applyInteractionEvent(current: Interaction, event: HubEvent): Interaction | null {
  if (event.type === "interaction.resolved" && event.payload.interactionId === current.id) {
    const p = event.payload;
    return {
      ...current,
      status: "resolved",
      response: p.response ?? current.response,
      respondedBy: p.respondedBy ?? current.respondedBy,
      respondedByName: p.respondedByName ?? current.respondedByName,
      respondedAt: isoOf(p.respondedAt) ?? event.occurredAt,
    };
  }
  if (event.type === "interaction.cancelled" && event.payload.interactionId === current.id) {
    const reason = event.payload.reason;
    return { ...current, status: "cancelled", cancelReason: typeof reason === "string" ? reason : current.cancelReason };
  }
  if (event.type === "interaction.expired" && event.payload.interactionId === current.id) {
    return { ...current, status: "expired" };
  }
  return null;
}

/** What a conflict says the interaction became when it cannot be read again. */
function afterConflict(current: Interaction, error: ApiError): Interaction {
  const reason = (error.details as { reason?: string }).reason;
  return { ...current, status: reason === "expired" ? "expired" : reason === "cancelled" ? "cancelled" : "resolved" };
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
  const { current, open, phase, busy, pending, conflict, submit, retry, outcomeRef } = useAnswerOnce<Interaction, InteractionResponse>({
    item: interaction,
    isOpen: (i) => i.status === "requested",
    applyEvent: applyInteractionEvent,
    answer: (response, key) => api.respond(interaction.id, response, key),
    reload: () => api.interaction(interaction.id),
    afterConflict,
    onAnswered,
  });
  const titleId = useId();

  const request = current.request;
  const kind = KIND[current.type] ?? KIND.approval;
  const why = request.why ?? request.description;
  const Heading = `h${headingLevel}` as "h3";
  const actionProps: ActionProps = { interaction: current, busy, pending, submit };

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
          <AnswerProgress phase={phase} retry={retry} />
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
      {api.rawEvents ? (
        <RawEvents api={api as RawEventsApi} subject={`interaction:${current.id}`} what="request" />
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
      <ConflictNote conflict={conflict} />
      {body}
    </section>
  );
}
