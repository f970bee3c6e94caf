// Tool calls waiting in the inbox: one card per call a person answers or the app computes, one
// canvas card per canvas being drawn. Cards answered during this visit stay, read-only, showing
// who answered what; they leave the inbox the next time it is opened.

import { useEffect, useRef, useState } from "react";
import type { ToolCall } from "../api/types";
import { useHubEvents } from "../realtime/RealtimeProvider";
import { CanvasCard } from "./canvas/CanvasCard";
import { ToolCallCard, type ToolCardApi } from "./ToolCallCard";

export type InboxEntry =
  | { kind: "call"; key: string; sequence: number; call: ToolCall }
  | { kind: "canvas"; key: string; sequence: number; instanceId: string; openCall?: ToolCall; pending: number };

/** Cards for `calls`: canvas calls grouped by their instance. */
export function inboxEntries(calls: ToolCall[]): InboxEntry[] {
  const entries: InboxEntry[] = [];
  const canvases = new Map<string, Extract<InboxEntry, { kind: "canvas" }>>();
  for (const call of [...calls].sort((a, b) => a.sequence - b.sequence)) {
    if (call.name === "canvas" && call.instanceId) {
      let entry = canvases.get(call.instanceId);
      if (!entry) {
        entry = { kind: "canvas", key: `canvas:${call.instanceId}`, sequence: call.sequence, instanceId: call.instanceId, pending: 0 };
        canvases.set(call.instanceId, entry);
        entries.push(entry);
      }
      if (call.action === "open") entry.openCall = call;
      if (call.status === "pending") entry.pending += 1;
      continue;
    }
    entries.push({ kind: "call", key: call.id, sequence: call.sequence, call });
  }
  return entries;
}

export function InboxTools({
  calls,
  api,
  agentName,
  onAnswered,
}: {
  /** The pending calls (the inbox's `waitingTools`). */
  calls: ToolCall[];
  api: ToolCardApi;
  agentName: (agentId: string | null | undefined) => string;
  onAnswered?: () => void;
}) {
  const seen = useRef(new Map<string, ToolCall>());
  const [settled, setSettled] = useState<Record<string, ToolCall>>({});
  const [withdrawn, setWithdrawn] = useState<ReadonlySet<string>>(() => new Set());
  useHubEvents((event) => {
    const id = event.payload.toolCallId;
    if (event.type === "tool.cancelled" && typeof id === "string") setWithdrawn((w) => new Set(w).add(id));
  });
  for (const call of calls) seen.current.set(call.id, call);
  useEffect(() => {
    const open = new Set(calls.map((c) => c.id));
    for (const [id, last] of seen.current) {
      if (open.has(id) || settled[id]) continue;
      setSettled((s) => ({ ...s, [id]: { ...last, status: last.status === "pending" ? "completed" : last.status } }));
      api.toolCall(id).then(
        (latest) => setSettled((s) => ({ ...s, [id]: latest })),
        () => undefined,
      );
    }
  }, [calls, api, settled]);
  // A withdrawn call leaves at once, like a withdrawn interaction card: nothing to read or do.
  const shown = [...seen.current.values()]
    .map((c) => calls.find((w) => w.id === c.id) ?? settled[c.id] ?? c)
    .filter((c) => c.status !== "cancelled" && !withdrawn.has(c.id));
  const entries = inboxEntries(shown);
  if (entries.length === 0) return null;
  return (
    <>
      {entries.map((entry) =>
        entry.kind === "call" ? (
          <ToolCallCard
            key={entry.key}
            call={entry.call}
            api={api}
            agentName={agentName(entry.call.agentId)}
            onAnswered={onAnswered}
          />
        ) : (
          <CanvasCard
            key={entry.key}
            instanceId={entry.instanceId}
            openCall={entry.openCall}
            pending={calls.filter((c) => c.instanceId === entry.instanceId).length}
            api={api}
          />
        ),
      )}
    </>
  );
}

/** How many cards the pending `calls` make (a canvas counts once). */
export function countToolCards(calls: ToolCall[]): number {
  return inboxEntries(calls).length;
}
