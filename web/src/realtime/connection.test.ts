import { describe, expect, it } from "vitest";
import type { HubEvent } from "../api/types";
import { asHubEvent } from "../test/fixtures";
import { RealtimeConnection, storageKey, type ConnectionState, type DeltaFrame } from "./connection";
import { FakeSocket } from "../test/fakeSocket";
import { StreamingMessages } from "./streams";

/** Timers the test fires by hand. */
class ManualTimers {
  pending: Array<{ fn: () => void; ms: number; id: number }> = [];
  private next = 1;
  setTimeout(fn: () => void, ms: number): unknown {
    const id = this.next++;
    this.pending.push({ fn, ms, id });
    return id;
  }
  clearTimeout(handle: unknown): void {
    this.pending = this.pending.filter((t) => t.id !== handle);
  }
  fire(): void {
    const all = this.pending;
    this.pending = [];
    for (const t of all) t.fn();
  }
}

class MemoryStorage {
  data = new Map<string, string>();
  getItem(k: string): string | null {
    return this.data.get(k) ?? null;
  }
  setItem(k: string, v: string): void {
    this.data.set(k, v);
  }
}

function event(sequence: number, type = "task.status_changed", payload: Record<string, unknown> = {}): HubEvent {
  return asHubEvent({
    id: `evt_${sequence}`,
    type,
    version: "0.1",
    occurredAt: "2026-07-24T12:00:00.000Z",
    workspaceId: "ws_1",
    sequence,
    actor: "agent:a1",
    payload,
  });
}

function setup(
  options: { initialSequence?: number; storage?: MemoryStorage; refresh?: () => Promise<boolean> } = {},
) {
  const sockets: FakeSocket[] = [];
  const timers = new ManualTimers();
  const storage = options.storage ?? new MemoryStorage();
  const connection = new RealtimeConnection({
    workspaceId: "ws_1",
    url: "ws://hub/ws/client?workspaceId=ws_1",
    socket: (url) => {
      const s = new FakeSocket(url);
      sockets.push(s);
      return s;
    },
    storage,
    timers,
    backoff: (attempt) => 100 * 2 ** attempt,
    initialSequence: options.initialSequence,
    now: () => new Date("2026-07-24T12:00:00.000Z"),
    refresh: options.refresh,
  });
  const events: HubEvent[] = [];
  const states: ConnectionState[] = [];
  const deltas: DeltaFrame[] = [];
  connection.onEvent((e) => events.push(e));
  connection.onState((s) => states.push(s));
  connection.onDelta((d) => deltas.push(d));
  connection.start();
  return { connection, sockets, timers, storage, events, states, deltas, socket: () => sockets[sockets.length - 1]! };
}

describe("the realtime connection", () => {
  it("subscribes with its last sequence when the socket opens", () => {
    const { socket } = setup({ initialSequence: 41 });
    socket().open();
    expect(socket().sent).toEqual([
      {
        id: expect.any(String),
        type: "client.subscribe",
        version: "0.1",
        occurredAt: "2026-07-24T12:00:00.000Z",
        workspaceId: "ws_1",
        payload: { lastSequence: 41, batch: true },
      },
    ]);
  });

  it("replays, then is live after client.caught_up", () => {
    const { socket, events, states, connection } = setup();
    socket().open();
    socket().ack();
    expect(connection.state).toBe("replaying");
    socket().push(event(1));
    socket().push(event(2));
    socket().push({ type: "client.caught_up", payload: { sequence: 2 } });
    expect(events.map((e) => e.sequence)).toEqual([1, 2]);
    expect(states).toEqual(["connecting", "replaying", "live"]);
    expect(connection.lastSequence).toBe(2);
  });

  it("takes a batched replay as its events one by one, in order", () => {
    const { socket, events, connection } = setup();
    socket().open();
    socket().ack();
    socket().push({ type: "client.batch", payload: { events: [event(1), event(2), event(3)] } });
    socket().push({ type: "client.batch", payload: { events: [event(3), event(4)] } });
    socket().push({ type: "client.caught_up", payload: { sequence: 4 } });
    expect(events.map((e) => e.sequence)).toEqual([1, 2, 3, 4]);
    expect(connection.lastSequence).toBe(4);
    expect(connection.state).toBe("live");
  });

  it("ignores duplicates and events older than what it has", () => {
    const { socket, events } = setup();
    socket().open();
    socket().ack();
    for (const seq of [1, 2, 2, 1, 3, 3, 5, 4]) socket().push(event(seq));
    expect(events.map((e) => e.sequence)).toEqual([1, 2, 3, 5]);
  });

  it("after a drop, reconnects with backoff and resubscribes from the last sequence", () => {
    const { socket, sockets, timers, events, connection, states } = setup();
    socket().open();
    socket().ack();
    socket().push(event(1));
    socket().push(event(2));
    socket().push({ type: "client.caught_up", payload: { sequence: 2 } });
    socket().drop();
    expect(connection.state).toBe("offline");
    expect(timers.pending.map((t) => t.ms)).toEqual([100]);
    timers.fire();
    expect(sockets).toHaveLength(2);
    socket().open();
    expect(socket().sent[0]!.payload).toEqual({ lastSequence: 2, batch: true });
    socket().ack();
    // The hub replays from 3; an overlapping resend of 2 is dropped.
    socket().push(event(2));
    socket().push(event(3));
    socket().push({ type: "client.caught_up", payload: { sequence: 3 } });
    expect(events.map((e) => e.sequence)).toEqual([1, 2, 3]);
    expect(states.slice(-3)).toEqual(["connecting", "replaying", "live"]);
  });

  it("backs off longer after each failed attempt, and starts over once live", () => {
    const { socket, timers } = setup();
    socket().drop();
    expect(timers.pending[0]!.ms).toBe(100);
    timers.fire();
    socket().drop();
    expect(timers.pending[0]!.ms).toBe(200);
    timers.fire();
    socket().drop();
    expect(timers.pending[0]!.ms).toBe(400);
    timers.fire();
    socket().open();
    socket().ack();
    socket().push({ type: "client.caught_up", payload: { sequence: 0 } });
    socket().drop();
    expect(timers.pending[0]!.ms).toBe(100);
  });

  it("keeps the cursor in storage so a reloaded page resumes from it", () => {
    const storage = new MemoryStorage();
    const first = setup({ storage });
    first.socket().open();
    first.socket().ack();
    first.socket().push(event(7));
    expect(storage.getItem(storageKey("ws_1"))).toBe("7");
    first.connection.stop();
    const second = setup({ storage, initialSequence: 0 });
    second.socket().open();
    expect(second.socket().sent[0]!.payload).toEqual({ lastSequence: 7, batch: true });
  });

  it("when the page wakes up, subscribes again on an open socket", () => {
    const { socket, connection } = setup();
    socket().open();
    socket().ack();
    socket().push(event(4));
    connection.wake();
    expect(socket().sent).toHaveLength(2);
    expect(socket().sent[1]!.payload).toEqual({ lastSequence: 4, batch: true });
  });

  it("when the page wakes up while waiting to reconnect, reconnects at once", () => {
    const { socket, sockets, timers, connection } = setup();
    socket().open();
    socket().drop();
    expect(timers.pending).toHaveLength(1);
    connection.wake();
    expect(timers.pending).toHaveLength(0);
    expect(sockets).toHaveLength(2);
  });

  it("stops trying when the hub refuses the session", () => {
    const { socket, timers, connection } = setup();
    socket().open();
    socket().push({ type: "error", code: "unauthenticated", message: "Sign in again." });
    socket().drop(4401);
    expect(connection.state).toBe("denied");
    expect(timers.pending).toHaveLength(0);
  });

  it("refreshes an expired access token and reconnects once with the fresh one", async () => {
    let refreshes = 0;
    const { socket, sockets, connection } = setup({
      refresh: async () => {
        refreshes += 1;
        return true;
      },
    });
    socket().open();
    const expired = { type: "error", code: "unauthenticated", message: "expired", details: { reason: "token_expired" } };
    socket().push(expired);
    socket().drop(4401);
    await Promise.resolve();
    await Promise.resolve();
    expect(refreshes).toBe(1);
    expect(sockets).toHaveLength(2);
    // refused again straight away: the refresh did not help, so stop
    socket().open();
    socket().push(expired);
    socket().drop(4401);
    await Promise.resolve();
    expect(refreshes).toBe(1);
    expect(connection.state).toBe("denied");
  });

  it("on system.resync_required jumps to the hub's latest sequence and asks views to refetch", () => {
    const { socket, connection } = setup();
    const caughtUp: number[] = [];
    connection.onCaughtUp((seq) => caughtUp.push(seq));
    socket().open();
    socket().ack();
    socket().push({ type: "system.resync_required", payload: { reason: "pruned", latestSequence: 90 } });
    expect(connection.lastSequence).toBe(90);
    expect(caughtUp).toEqual([90]);
  });

  it("ignores frames from a socket it has replaced", () => {
    const { socket, sockets, timers, events } = setup();
    socket().open();
    const old = socket();
    old.drop();
    timers.fire();
    expect(sockets).toHaveLength(2);
    old.push(event(9));
    expect(events).toHaveLength(0);
  });

  it("passes message.delta frames (no sequence) to the delta listeners, not as events", () => {
    const { socket, events, deltas } = setup();
    socket().open();
    socket().ack();
    socket().push({ type: "message.delta", taskId: "task_1", payload: { messageId: "m1", delta: "Hel" } });
    expect(deltas.map((d) => d.payload.delta)).toEqual(["Hel"]);
    expect(events).toHaveLength(0);
  });
});

describe("streamed agent text", () => {
  const delta = (messageId: string, text: string): DeltaFrame => ({
    type: "message.delta",
    conversationId: "conv_1",
    taskId: "task_1",
    actor: "agent:a1",
    occurredAt: "2026-07-24T12:00:00.000Z",
    payload: { messageId, delta: text },
  });

  it("builds a bubble from deltas until the final message.created replaces it", () => {
    const streams = new StreamingMessages();
    streams.applyDelta(delta("m1", "All "));
    streams.applyDelta(delta("m1", "done: "));
    streams.applyDelta(delta("m1", "3 pages improved."));
    expect(streams.snapshot()).toEqual([
      expect.objectContaining({ messageId: "m1", text: "All done: 3 pages improved.", conversationId: "conv_1" }),
    ]);
    streams.applyEvent(event(10, "message.created", { messageId: "m1", content: "All done: 3 pages improved." }));
    expect(streams.snapshot()).toEqual([]);
  });

  it("does not bring a finished message back when a late delta arrives", () => {
    const streams = new StreamingMessages();
    streams.applyDelta(delta("m1", "Hi"));
    streams.applyEvent(event(11, "message.created", { messageId: "m1" }));
    streams.applyDelta(delta("m1", " again"));
    expect(streams.snapshot()).toEqual([]);
  });

  it("runs the whole path: deltas over the socket, then the recorded message", () => {
    const { socket, connection } = setup();
    const streams = new StreamingMessages();
    connection.onDelta((d) => streams.applyDelta(d));
    connection.onEvent((e) => streams.applyEvent(e));
    socket().open();
    socket().ack();
    socket().push(delta("m2", "Working"));
    socket().push(delta("m2", "… done."));
    expect(streams.get("m2")?.text).toBe("Working… done.");
    socket().push(event(1, "message.created", { messageId: "m2", content: "Working… done." }));
    expect(streams.get("m2")).toBeUndefined();
  });
});
