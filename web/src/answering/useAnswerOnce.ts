// A pending request on a person's screen — an interaction or a tool call — is answered once.
// The hook holds what every such card does between the props (the hub's word) and the answer:
// "Submitting…"; the hub's answered record; a failure kept with Retry under the same
// Idempotency-Key (a retry never answers twice); a conflict — someone answered first, or the
// request expired or was withdrawn — read back from the hub and shown with who answered; and
// an answer arriving over the socket from another device, which ends the card at once.

import { useEffect, useRef, useState, type RefObject } from "react";
import { ApiError, newIdempotencyKey } from "../api/client";
import type { HubEvent } from "../api/types";
import { useHubEvents } from "../realtime/RealtimeProvider";

export interface AnswerOnceRequest<Item, Answer> {
  /** The request as the hub last said it (props). */
  item: Item;
  /** Whether it still waits for an answer. */
  isOpen: (item: Item) => boolean;
  /** The request after a recorded event about it, or null when the event is about another. */
  applyEvent: (current: Item, event: HubEvent) => Item | null;
  /** Send the answer under an idempotency key; resolves with the answered request. */
  answer: (answer: Answer, key: string) => Promise<Item>;
  /** Read the request again (after a conflict, to show who answered first). */
  reload: () => Promise<Item>;
  /** What the request is known to be after a conflict when it cannot be read again. */
  afterConflict: (current: Item, error: ApiError) => Item;
  onAnswered?: (item: Item) => void;
}

export type AnswerPhase<Answer> =
  | { kind: "idle" }
  | { kind: "submitting"; answer: Answer; key: string }
  | { kind: "failed"; answer: Answer; key: string; error: ApiError };

export interface AnswerOnce<Item, Answer> {
  /** The request as this card shows it: the hub's word once it is over, else the newest known. */
  current: Item;
  open: boolean;
  phase: AnswerPhase<Answer>;
  /** True while an answer is on its way: every control is disabled. */
  busy: boolean;
  /** The answer being sent (to show which button was pressed), or null. */
  pending: Answer | null;
  /** Why this card's answer was not recorded (someone answered first), or null. */
  conflict: string | null;
  submit: (answer: Answer) => void;
  /** Send the failed answer again, under the same key. */
  retry: () => void;
  /** The outcome section: it takes keyboard focus when the pressed button disappears. */
  outcomeRef: RefObject<HTMLElement | null>;
  /** Show the hub's newer word about the still open request (a change that is not an
   * answer, like handing it to someone else). */
  replace: (item: Item) => void;
}

export function useAnswerOnce<Item, Answer>(request: AnswerOnceRequest<Item, Answer>): AnswerOnce<Item, Answer> {
  const { item, isOpen, applyEvent, answer, reload, afterConflict, onAnswered } = request;
  const [override, setOverride] = useState<Item | null>(null);
  const [phase, setPhase] = useState<AnswerPhase<Answer>>({ kind: "idle" });
  const [conflict, setConflict] = useState<string | null>(null);
  const mounted = useRef(true);
  const answeredHere = useRef(false);
  const outcomeRef = useRef<HTMLElement>(null);
  useEffect(() => {
    mounted.current = true;
    return () => {
      mounted.current = false;
    };
  }, []);

  // The hub's word (props) wins once it says the request is over; until then, our own.
  const current = !isOpen(item) ? item : (override ?? item);
  const open = isOpen(current);

  // The pressed button is gone once the card is read-only: keep keyboard focus in the card.
  useEffect(() => {
    if (!open && answeredHere.current) {
      answeredHere.current = false;
      outcomeRef.current?.focus();
    }
  }, [open]);

  useHubEvents((event) => {
    const next = applyEvent(current, event);
    if (next) {
      setOverride(next);
      setPhase({ kind: "idle" });
    }
  });

  async function send(value: Answer, key: string) {
    setPhase({ kind: "submitting", answer: value, key });
    setConflict(null);
    try {
      const answered = await answer(value, key);
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
          const latest = await reload();
          if (mounted.current) setOverride(latest);
        } catch {
          if (mounted.current) setOverride(afterConflict(current, error));
        }
        if (mounted.current) setPhase({ kind: "idle" });
        return;
      }
      setPhase({ kind: "failed", answer: value, key, error });
    }
  }

  return {
    current,
    open,
    phase,
    busy: phase.kind === "submitting",
    pending: phase.kind === "submitting" ? phase.answer : null,
    conflict,
    submit: (value) => void send(value, newIdempotencyKey()),
    retry: () => {
      if (phase.kind === "failed") void send(phase.answer, phase.key);
    },
    outcomeRef,
    replace: (next) => setOverride(next),
  };
}
