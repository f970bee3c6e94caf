// A card for an agent's tool call (seed 000 §4.4): the tool's own controls while it waits,
// then who answered, when and what — like an interaction card. The person answers choice,
// confirm and input; this app answers the calculator and the canvas by itself (see runner.ts),
// and the card shows what it computed or drew.
//
// Answering is honest: "Submitting…", then the read-only result; a failure keeps the answer
// with Retry (the same Idempotency-Key, so it is never recorded twice); a conflict — another
// device answered first, the agent withdrew the call, it timed out — turns the card read-only.

import { useEffect, useId, useRef, useState, type ReactNode, type RefObject } from "react";
import { ApiError, newIdempotencyKey } from "../api/client";
import type { HubEvent, ToolAnswer, ToolCall } from "../api/types";
import { fullTime } from "../lib/time";
import { useHubEvents } from "../realtime/RealtimeProvider";
import { Banner, Button, Icon, StatusPill, type IconName, type Tone, RelativeTime } from "../ui";
import { withdrawnLine } from "../features/interactions/withdrawn";
import { checkCall, toolModule } from "./registry";
import type { ToolOutcome, ToolReadApi } from "./types";
import "./tools.css";

export interface ToolCardApi extends ToolReadApi {
  answerToolCall(id: string, answer: ToolAnswer, key?: string): Promise<ToolCall>;
  toolCall(id: string): Promise<ToolCall>;
}

type Phase =
  | { kind: "idle" }
  | { kind: "submitting"; outcome: ToolOutcome; key: string }
  | { kind: "failed"; outcome: ToolOutcome; key: string; error: ApiError };

const ENDED = new Set(["tool.completed", "tool.cancelled"]);

function isoOf(value: unknown): string | null {
  if (typeof value === "number") return new Date(value).toISOString();
  return typeof value === "string" ? value : null;
}

/** The call after a recorded event about it (an answer from another device, a timeout, a
 * withdrawal), or null when the event is about something else. */
export function applyToolEvent(current: ToolCall, event: HubEvent): ToolCall | null {
  if (!ENDED.has(event.type) || event.payload.toolCallId !== current.id) return null;
  const p = event.payload as Record<string, unknown>;
  if (event.type === "tool.cancelled") {
    return { ...current, status: "cancelled", cancelReason: typeof p.reason === "string" ? p.reason : null };
  }
  const error = (p.error as ToolCall["error"]) ?? null;
  return {
    ...current,
    status: p.expired ? "expired" : error ? "failed" : "completed",
    result: (p.result as ToolCall["result"]) ?? null,
    error,
    answeredBy: typeof p.answeredBy === "string" ? p.answeredBy : null,
    answeredByName: typeof p.answeredByName === "string" ? p.answeredByName : null,
    answeredAt: isoOf(p.answeredAt) ?? event.occurredAt,
  };
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
  const [override, setOverride] = useState<ToolCall | null>(null);
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

  // The hub's word (props) wins once it says the call is over; until then, our own.
  const current: ToolCall = call.status !== "pending" ? call : (override ?? call);
  const open = current.status === "pending";
  const module = toolModule(current.name);

  useEffect(() => {
    if (!open && answeredHere.current) {
      answeredHere.current = false;
      outcomeRef.current?.focus();
    }
  }, [open]);

  useHubEvents((event) => {
    const next = applyToolEvent(current, event);
    if (next) {
      setOverride(next);
      setPhase({ kind: "idle" });
    }
  });

  async function send(outcome: ToolOutcome, key: string) {
    setPhase({ kind: "submitting", outcome, key });
    setConflict(null);
    try {
      const answered = await api.answerToolCall(current.id, outcome, key);
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
          const latest = await api.toolCall(current.id);
          if (mounted.current) setOverride(latest);
        } catch {
          if (mounted.current) setOverride({ ...current, status: "completed" });
        }
        if (mounted.current) setPhase({ kind: "idle" });
        return;
      }
      setPhase({ kind: "failed", outcome, key, error });
    }
  }

  const submit = (outcome: ToolOutcome) => void send(outcome, newIdempotencyKey());
  const retry = () => {
    if (phase.kind === "failed") void send(phase.outcome, phase.key);
  };

  const Heading = `h${headingLevel}` as "h3";
  const status = toolStatus(current);
  const check = open ? checkCall(current) : { problems: [], message: "" };
  const busy = phase.kind === "submitting";
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
          <div aria-live="polite" className="icard-status">
            {busy ? (
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
      {conflict ? (
        <p className="outcome-conflict">
          <Icon name="info" size={16} /> Your answer was not recorded: {conflict}
        </p>
      ) : null}
      {body}
    </section>
  );
}
