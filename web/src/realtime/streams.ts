// Streamed agent text: `message.delta` frames (live only, no sequence) build a bubble until the
// recorded `message.created` with the same messageId arrives and replaces it.

import type { HubEvent } from "../api/types";
import type { DeltaFrame } from "./connection";

export interface StreamingMessage {
  messageId: string;
  text: string;
  conversationId: string | null;
  taskId: string | null;
  actor: string | null;
  startedAt: string;
}

type Listener = () => void;

export class StreamingMessages {
  private readonly streams = new Map<string, StreamingMessage>();
  /** Messages already final: a late delta for them must not resurrect a bubble. */
  private readonly finished = new Set<string>();
  private readonly listeners = new Set<Listener>();
  private cache: StreamingMessage[] = [];

  applyDelta(frame: DeltaFrame): void {
    const { messageId, delta } = frame.payload;
    if (this.finished.has(messageId)) return;
    const current = this.streams.get(messageId);
    this.streams.set(messageId, {
      messageId,
      text: (current?.text ?? "") + delta,
      conversationId: current?.conversationId ?? frame.conversationId ?? null,
      taskId: current?.taskId ?? frame.taskId ?? null,
      actor: current?.actor ?? frame.actor ?? null,
      startedAt: current?.startedAt ?? frame.occurredAt ?? new Date().toISOString(),
    });
    this.changed();
  }

  /** A recorded event; `message.created` ends the stream of its messageId. */
  applyEvent(event: HubEvent): void {
    if (event.type !== "message.created") return;
    const id = event.payload.messageId;
    if (typeof id !== "string") return;
    this.finished.add(id);
    if (this.finished.size > 500) {
      const first = this.finished.values().next().value;
      if (first !== undefined) this.finished.delete(first);
    }
    if (this.streams.delete(id)) this.changed();
  }

  get(messageId: string): StreamingMessage | undefined {
    return this.streams.get(messageId);
  }

  /** Stable array between changes (for useSyncExternalStore). */
  snapshot(): StreamingMessage[] {
    return this.cache;
  }

  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private changed(): void {
    this.cache = [...this.streams.values()];
    for (const l of this.listeners) l();
  }
}
