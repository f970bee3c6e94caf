// A card for an agent's tool call (seed 000 §4.4): the tool's own controls while it waits,
// then who answered, when and what — like an interaction card. The person answers choice,
// confirm and input; this app answers the calculator and the canvas by itself (see runner.ts),
// and the card shows what it computed or drew.
//
// Answering is honest: "Submitting…", then the read-only result; a failure keeps the answer
// with Retry (the same Idempotency-Key, so it is never recorded twice); a conflict — another
// device answered first, the agent withdrew the call, it timed out — turns the card read-only.

import { useId, type ReactNode, type RefObject } from "react";
import type { HubEvent, ToolAnswer, ToolCall, ToolError, ToolResultBody } from "../api/types";
import { AnswerProgress, ConflictNote } from "../answering/AnswerProgress";
import { useAnswerOnce } from "../answering/useAnswerOnce";
import { fullTime, isoOf } from "../lib/time";
import { Banner, Icon, StatusPill, type IconName, type Tone, RelativeTime } from "../ui";
import { withdrawnLine } from "../features/interactions/withdrawn";
import { checkCall, toolModule } from "./registry";
import type { ToolOutcome, ToolReadApi } from "./types";
import "./tools.css";

export interface ToolCardApi extends ToolReadApi {
  answerToolCall(id: string, answer: ToolAnswer, key?: string): Promise<ToolCall>;
  toolCall(id: string): Promise<ToolCall>;
}

/** The call after a recorded event about it (an answer from another device, a timeout, a
 * withdrawal), or null when the event is about something else. */
export function applyToolEvent(current: ToolCall, event: HubEvent): ToolCall | null {
  if (event.type === "tool.cancelled" && event.payload.toolCallId === current.id) {
    const reason = event.payload.reason;
    return { ...current, status: "cancelled", cancelReason: typeof reason === "string" ? reason : null };
  }
  if (event.type !== "tool.completed" || event.payload.toolCallId !== current.id) return null;
  const p = event.payload;
  const error = toolErrorOf(p.error);
  return {
    ...current,
    status: p.expired ? "expired" : error ? "failed" : "completed",
    result: toolResultOf(p.result),
    error,
    answeredBy: typeof p.answeredBy === "string" ? p.answeredBy : null,
    answeredByName: typeof p.answeredByName === "string" ? p.answeredByName : null,
    answeredAt: isoOf(p.answeredAt) ?? event.occurredAt,
  };
}

/** A recorded result that says something (seed 000 §4.5: `message` always), or null. */
function toolResultOf(value: { [k: string]: unknown } | null | undefined): ToolResultBody | null {
  return value && typeof value.message === "string" ? { ...value, message: value.message } : null;
}

/** A recorded error with its code and message, or null. */
function toolErrorOf(value: { [k: string]: unknown } | null | undefined): ToolError | null {
  return value && typeof value.code === "string" && typeof value.message === "string"
    ? { ...value, code: value.code, message: value.message }
    : null;
}

export function toolStatus(call: Pick<ToolCall, "status" | "name">): { tone: Tone; icon: IconName; label: string } {
  const automatic = !!toolModule(call.name)?.answerAutomatically;
  switch (call.status) {
    case "pending":
      return automatic
        ? { tone: "running", icon: "running", label: "Working" }
        : { tone: "waiting", icon: "hand", label: "Waiting for you" };
    case "completed":
      return { tone: "success", icon: "checkCircle", label: automatic ? "Done" : "Answered" };
    case "failed":
      return { tone: "danger", icon: "xCircle", label: "Error" };
    case "expired":
      return { tone: "neutral", icon: "clock", label: "Timed out" };
    default:
      return { tone: "neutral", icon: "stopCircle", label: "Withdrawn" };
  }
}

export function ToolCallCard({
  call,
  api,
  agentName,
  context,
  headingLevel = 3,
  onAnswered,
}: {
  call: ToolCall;
  api: ToolCardApi;
  agentName?: string;
  context?: ReactNode;
  headingLevel?: 2 | 3 | 4;
  onAnswered?: (call: ToolCall) => void;
}) {
  const { current, open, phase, busy, conflict, submit, retry, outcomeRef } = useAnswerOnce<ToolCall, ToolOutcome>({
    item: call,
    isOpen: (c) => c.status === "pending",
    applyEvent: applyToolEvent,
    answer: (outcome, key) => api.answerToolCall(call.id, outcome, key),
    reload: () => api.toolCall(call.id),
    afterConflict: (c) => ({ ...c, status: "completed" }),
    onAnswered,
  });
  const titleId = useId();
  const module = toolModule(current.name);

  const Heading = `h${headingLevel}` as "h3";
  const status = toolStatus(current);
  const check = open ? checkCall(current) : { problems: [], message: "" };
  const Renderer = module?.Renderer;

  return (
    <article
      className={`icard tcard tcard-${current.name} ${open ? "icard-open" : "icard-closed"}`}
      aria-labelledby={titleId}
      data-tool-call-id={current.id}
      data-tool={current.name}
      data-status={current.status}
    >
      <header className="icard-head">
        <span className="icard-kind">
          <Icon name={module?.icon ?? "info"} size={16} />
          {open ? (module?.label ?? current.name) : (module?.doneLabel ?? current.name)}
        </span>
        <span className="icard-meta">
          {agentName ? <span>from {agentName}</span> : null}
          {current.createdAt ? (
            <RelativeTime iso={current.createdAt} />
          ) : null}
        </span>
        <StatusPill {...status} />
      </header>
      <Heading id={titleId} className="icard-title">
        {module ? module.title(current) : `${current.name}${current.action ? `.${current.action}` : ""}`}
      </Heading>
      {context ? <div className="icard-context">{context}</div> : null}

      {open ? (
        <section className="icard-section icard-actions" aria-label="What you can do">
          {check.problems.length > 0 || !Renderer ? (
            <Banner tone="warning" title="This app cannot show this call">
              {check.message || `This app has no tool called ${current.name}.`}
            </Banner>
          ) : (
            <Renderer call={current} busy={busy} submit={submit} api={api} />
          )}
          {current.expiresAt ? (
            <p className="icard-expiry">
              <Icon name="clock" size={14} /> Answer by {fullTime(current.expiresAt)}
            </p>
          ) : null}
          <AnswerProgress phase={phase} retry={retry} />
        </section>
      ) : (
        <ToolOutcomeView call={current} conflict={conflict} focusRef={outcomeRef} />
      )}
    </article>
  );
}

function ToolOutcomeView({
  call,
  conflict,
  focusRef,
}: {
  call: ToolCall;
  conflict: string | null;
  focusRef: RefObject<HTMLElement | null>;
}) {
  const module = toolModule(call.name);
  const automatic = !!module?.answerAutomatically;
  const who = call.answeredBy === "system" ? "LineUp" : call.answeredByName || (automatic ? "This app" : "Someone");
  let body: ReactNode;
  if (call.status === "completed") {
    body = (
      <p className="outcome-line">
        <Icon name="checkCircle" size={16} className="outcome-icon" />
        <span>
          <strong>{who}</strong>
          {automatic && call.answeredByName ? "’s app answered automatically" : automatic ? " answered automatically" : " answered"}{" "}
          {call.answeredAt ? <time dateTime={call.answeredAt}>{fullTime(call.answeredAt)}</time> : null}:{" "}
          <span className="outcome-answer">{module?.describe(call) || call.result?.message || "done"}</span>
        </span>
      </p>
    );
  } else if (call.status === "failed") {
    body = (
      <p className="outcome-line">
        <Icon name="xCircle" size={16} className="outcome-icon" />
        <span>
          <strong>{who}</strong>
          {automatic && call.answeredByName ? "’s app" : ""} answered with an error ({call.error?.code ?? "error"}):{" "}
          <span className="outcome-answer">{call.error?.message ?? ""}</span>
        </span>
      </p>
    );
  } else if (call.status === "expired") {
    body = (
      <p className="outcome-line">
        <Icon name="clock" size={16} className="outcome-icon" />
        <span>No app answered in time{call.timeoutMs ? ` (${Math.round(call.timeoutMs / 1000)} s)` : ""}; the agent was told.</span>
      </p>
    );
  } else {
    body = (
      <p className="outcome-line">
        <Icon name="stopCircle" size={16} className="outcome-icon" />
        <span>{withdrawnLine("call", call.cancelReason)}</span>
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
