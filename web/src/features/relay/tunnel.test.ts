import { describe, expect, it, vi } from "vitest";
import { ApiError, Transport } from "../../api/client";
import { RealtimeConnection } from "../../realtime/connection";
import { FakeSdk } from "../../test/fakeRelaySdk";
import { REQUEST, RESPONSE, SOCKET, TOOLS } from "./content";
import { FILE_LINK, RelayTunnel, pathOf, type SyncedMessage } from "./tunnel";

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
  /** Fire what is due within `ms` (0: only the immediate ones). */
  fire(ms = 0): void {
    const due = this.pending.filter((t) => t.ms <= ms);
    this.pending = this.pending.filter((t) => t.ms > ms);
    for (const t of due) t.fn();
  }
}

function setup(
  options: { sync?: (start: number) => Promise<SyncedMessage[]>; tools?: () => unknown[]; upload?: (body: Blob) => Promise<string> } = {},
) {
  const sdk = new FakeSdk();
  const timers = new ManualTimers();
  let n = 0;
  const tunnel = new RelayTunnel({
    sdk,
    agentUid: "agent",
    agentName: "Build bot",
    timers,
    timeoutMs: 30_000,
    newId: () => `id${++n}`,
    sync: options.sync,
    tools: options.tools,
    upload: options.upload,
  });
  tunnel.start();
  sdk.connected();
  return { sdk, timers, tunnel, transport: new Transport(tunnel.fetch, () => "") };
}

/** Let awaited work (the fetch's own awaits, sync) run. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

function respond(sdk: FakeSdk, id: string, status: number, body: unknown, messageID: string, extra: Record<string, unknown> = {}) {
  sdk.deliver(
    { type: RESPONSE, id, status, headers: { "content-type": "application/json" }, body: JSON.stringify(body), part: 0, parts: 1, ...extra },
    { messageID },
  );
}

describe("relay requests (3101 / 3102)", () => {
  it("registers LineUp's content types with the SDK before anything can arrive", () => {
    const { sdk } = setup();
    expect([...sdk.handlers.keys()].sort()).toEqual([REQUEST, RESPONSE, SOCKET, TOOLS]);
  });

  it("sends each call as a persisted request and matches responses by id, whatever their order", async () => {
    const { sdk, transport } = setup();
    const first = transport.get<{ n: number }>("/api/workspaces/w1/inbox");
    const second = transport.post<{ ok: boolean }>("/api/workspaces/w1/conversations", { title: "hi" }, "key-1");
    await settle();
    const requests = sdk.packets(REQUEST);
    expect(requests).toHaveLength(2);
    expect(requests.every((p) => p.noPersist === false && p.channelID === "agent")).toBe(true);
    const [a, b] = requests.map((p) => p.payload);
    expect(a).toMatchObject({ type: REQUEST, id: "id1", method: "GET", path: "/api/workspaces/w1/inbox", body: null });
    expect(b).toMatchObject({ id: "id2", method: "POST", body: JSON.stringify({ title: "hi" }) });
    expect((b!.headers as Record<string, string>)["idempotency-key"]).toBe("key-1");
    expect((b!.headers as Record<string, string>)["content-type"]).toBe("application/json");

    respond(sdk, "id2", 201, { ok: true }, "m2");
    respond(sdk, "id1", 200, { n: 3 }, "m1");
    await expect(first).resolves.toEqual({ n: 3 });
    await expect(second).resolves.toEqual({ ok: true });
  });

  it("turns the hub's error envelope into the app's ApiError", async () => {
    const { sdk, transport } = setup();
    const call = transport.post("/api/workspaces/w1/interactions/i1/respond", { response: {} });
    await settle();
    respond(sdk, "id1", 409, { error: { code: "conflict", message: "Already answered by Ana." } }, "m1");
    await expect(call).rejects.toMatchObject({ code: "conflict", status: 409, message: "Already answered by Ana." });
  });

  it("gives up after the timeout with an unavailable error that says why", async () => {
    const { sdk, timers, transport, tunnel } = setup();
    const call = transport.get("/api/auth/me");
    await settle();
    timers.fire(30_000);
    const error = (await call.catch((e: unknown) => e)) as ApiError;
    expect(error).toBeInstanceOf(ApiError);
    expect(error.code).toBe("unavailable");
    expect(error.status).toBe(503);
    expect(error.message).toContain("Build bot did not answer through the relay within 30 s");
    expect(error.details.diagnostic).toBe("LNP-RELAY-TIMEOUT");
    // the answer that comes too late is dropped, not handed to anyone
    respond(sdk, "id1", 200, {}, "late");
    expect(tunnel.dropped.stray).toBe(1);
    expect(tunnel.waiting).toBe(0);
  });

  it("reassembles a response sent in parts, in any order, a repeated part once", async () => {
    const { sdk, transport } = setup();
    const call = transport.get<{ text: string }>("/api/workspaces/w1/events");
    await settle();
    const text = JSON.stringify({ text: "x".repeat(90) });
    const parts = [text.slice(0, 30), text.slice(30, 60), text.slice(60)];
    const part = (i: number, messageID: string) =>
      sdk.deliver({ type: RESPONSE, id: "id1", status: 200, headers: { "content-type": "application/json" }, body: parts[i], part: i, parts: 3 }, { messageID });
    part(2, "p2");
    part(0, "p0");
    part(0, "p0-again"); // the same part under another message id (sync and RECV both)
    let done = false;
    void call.then(() => (done = true));
    await settle();
    expect(done).toBe(false);
    part(1, "p1");
    await expect(call).resolves.toEqual({ text: "x".repeat(90) });
  });

  it("drops duplicates: the same message id twice, and a response to a request already answered", async () => {
    const { sdk, transport, tunnel } = setup();
    const call = transport.post<{ n: number }>("/api/x", {});
    await settle();
    respond(sdk, "id1", 200, { n: 1 }, "m1");
    respond(sdk, "id1", 200, { n: 1 }, "m1");
    respond(sdk, "id1", 200, { n: 2 }, "m1-by-sync");
    await expect(call).resolves.toEqual({ n: 1 });
    expect(tunnel.dropped.duplicate).toBe(2);
  });

  it("ignores messages from anyone but the agent, and contents of other types", async () => {
    const { sdk, transport, tunnel, timers } = setup();
    const call = transport.get("/api/auth/me");
    await settle();
    sdk.deliver({ type: RESPONSE, id: "id1", status: 200, body: "{}", part: 0, parts: 1 }, { messageID: "x1", fromUID: "mallory" });
    sdk.deliver({ type: 1, content: "hello" }, { messageID: "x2" });
    expect(tunnel.dropped.foreign).toBe(1);
    expect(tunnel.waiting).toBe(1);
    timers.fire(30_000);
    await expect(call).rejects.toMatchObject({ code: "unavailable" });
  });

  it("a request the relay refuses fails at once", async () => {
    const { sdk, transport } = setup();
    const call = transport.get("/api/auth/me");
    await settle();
    sdk.ack(sdk.packets(REQUEST)[0]!.clientSeq, 0, 4);
    await expect(call).rejects.toMatchObject({ code: "unavailable", details: { diagnostic: "LNP-RELAY-REFUSED" } });
  });

  it("a request made while offline goes out when WuKongIM is back", async () => {
    const { sdk, transport } = setup();
    sdk.dropped();
    const call = transport.get<{ ok: number }>("/api/auth/me");
    await settle();
    expect(sdk.packets(REQUEST)).toHaveLength(0);
    sdk.connected();
    expect(sdk.packets(REQUEST)).toHaveLength(1);
    respond(sdk, "id1", 200, { ok: 1 }, "m1");
    await expect(call).resolves.toEqual({ ok: 1 });
  });

  it("after a reconnect, fetches through message sync what the agent answered meanwhile", async () => {
    const asked: number[] = [];
    let missed: SyncedMessage[] = [];
    const { sdk, transport, tunnel } = setup({
      sync: async (start) => {
        asked.push(start);
        return missed;
      },
    });
    const call = transport.post<{ answered: boolean }>("/api/x", {});
    await settle();
    sdk.ack(sdk.packets(REQUEST)[0]!.clientSeq, 41);
    sdk.dropped();
    const body = JSON.stringify({ answered: true });
    missed = [
      { messageId: "own", messageSeq: 41, fromUid: "person", payload: { type: REQUEST, id: "id1" } },
      { messageId: "m42", messageSeq: 42, fromUid: "agent", payload: { type: RESPONSE, id: "id1", status: 200, body, part: 0, parts: 1 } },
    ];
    sdk.connected();
    await expect(call).resolves.toEqual({ answered: true });
    expect(asked).toEqual([42]);
    // the server then redelivers the same message: dropped by its id
    sdk.deliver({ type: RESPONSE, id: "id1", status: 200, body, part: 0, parts: 1 }, { messageID: "m42" });
    expect(tunnel.dropped.duplicate).toBe(1);
  });

  it("sends the tools it renders on each connect", () => {
    const { sdk } = setup({ tools: () => [{ name: "choice" }, { name: "confirm" }] });
    expect(sdk.sent(TOOLS)).toEqual([{ type: TOOLS, tools: [{ name: "choice" }, { name: "confirm" }] }]);
    sdk.dropped();
    sdk.connected();
    expect(sdk.sent(TOOLS)).toHaveLength(2);
  });

  it("pathOf keeps only the path and the query", () => {
    expect(pathOf("http://127.0.0.1:5173/api/auth/me?x=1")).toBe("/api/auth/me?x=1");
    expect(pathOf("relay://agent/ws/client?workspaceId=w1")).toBe("/ws/client?workspaceId=w1");
    expect(pathOf("/api/direct")).toBe("/api/direct");
  });
});

describe("the realtime socket through the relay (3103)", () => {
  function live() {
    const env = setup();
    const storage = new Map<string, string>();
    const connection = new RealtimeConnection({
      workspaceId: "w1",
      url: "relay://agent/ws/client?workspaceId=w1",
      socket: env.tunnel.socket,
      storage: { getItem: (k) => storage.get(k) ?? null, setItem: (k, v) => void storage.set(k, v) },
      timers: env.timers,
      backoff: () => 100,
      initialSequence: 4,
    });
    const events: number[] = [];
    connection.onEvent((e) => events.push(e.sequence as number));
    connection.start();
    env.timers.fire(0); // the socket opens once the tunnel has sent its open
    return { ...env, connection, events };
  }

  const frames = (sdk: FakeSdk) => sdk.sent(SOCKET);
  const lastSocket = (sdk: FakeSdk) => String(frames(sdk).filter((f) => f.op === "open").at(-1)!.socket);
  const fromAgent = (sdk: FakeSdk, socket: string, frame: unknown, messageID: string) =>
    sdk.deliver({ type: SOCKET, socket, op: "frame", data: JSON.stringify(frame) }, { messageID });
  const event = (sequence: number) => ({ id: `e${sequence}`, type: "task.progress", version: "0.1", workspaceId: "w1", sequence, payload: {} });

  function subscribeOf(sdk: FakeSdk, socket: string) {
    const sent = frames(sdk).filter((f) => f.socket === socket && f.op === "frame");
    return JSON.parse(String(sent.at(-1)!.data)) as { id: string; type: string; payload: { lastSequence: number } };
  }

  it("opens with the socket path, sends frames no-persist, and hands the agent's frames on", () => {
    const { sdk, connection, events } = live();
    const socket = lastSocket(sdk);
    expect(frames(sdk)[0]).toMatchObject({ type: SOCKET, socket, op: "open", path: "/ws/client?workspaceId=w1" });
    expect(sdk.packets(SOCKET).every((p) => p.noPersist)).toBe(true);
    const subscribe = subscribeOf(sdk, socket);
    expect(subscribe).toMatchObject({ type: "client.subscribe", payload: { lastSequence: 4 } });

    fromAgent(sdk, socket, { type: "ack", id: subscribe.id }, "f1");
    fromAgent(sdk, socket, event(5), "f2");
    fromAgent(sdk, socket, event(5), "f2"); // redelivered: dropped by message id
    fromAgent(sdk, socket, { type: "client.caught_up", payload: { sequence: 5 } }, "f3");
    fromAgent(sdk, "someone-elses", event(6), "f4");
    expect(connection.state).toBe("live");
    expect(events).toEqual([5]);
  });

  it("when WuKongIM drops, the socket closes and reopens from the last sequence once it is back", () => {
    const { sdk, connection, timers, events } = live();
    const first = lastSocket(sdk);
    fromAgent(sdk, first, { type: "ack", id: subscribeOf(sdk, first).id }, "f1");
    fromAgent(sdk, first, event(5), "f2");
    fromAgent(sdk, first, event(6), "f3");
    fromAgent(sdk, first, { type: "client.caught_up", payload: { sequence: 6 } }, "f4");

    sdk.dropped();
    expect(connection.state).toBe("offline");
    timers.fire(100); // the reconnect attempt while still offline: closes again at once
    timers.fire(0);
    expect(connection.state).toBe("offline");
    sdk.connected();
    timers.fire(100);
    timers.fire(0);
    const second = lastSocket(sdk);
    expect(second).not.toBe(first);
    expect(subscribeOf(sdk, second).payload.lastSequence).toBe(6);
    // the agent's replay overlaps what we had: only the new event counts
    fromAgent(sdk, second, { type: "ack", id: subscribeOf(sdk, second).id }, "g1");
    fromAgent(sdk, second, event(6), "g2");
    fromAgent(sdk, second, event(7), "g3");
    expect(events).toEqual([5, 6, 7]);
  });

  it("the agent's close, or its restart, makes the connection resubscribe", () => {
    const { sdk, connection, timers } = live();
    const first = lastSocket(sdk);
    fromAgent(sdk, first, { type: "client.caught_up", payload: { sequence: 4 } }, "f1");
    sdk.deliver({ type: SOCKET, socket: "*", op: "close", code: 1012, reason: "agent restarted" }, { messageID: "r1" });
    expect(connection.state).toBe("offline");
    timers.fire(100);
    timers.fire(0);
    const second = lastSocket(sdk);
    expect(second).not.toBe(first);
    sdk.deliver({ type: SOCKET, socket: second, op: "close", code: 1011, reason: "" }, { messageID: "r2" });
    expect(connection.state).toBe("offline");
  });

  it("closing from the app tells the agent", () => {
    const { sdk, connection } = live();
    const socket = lastSocket(sdk);
    connection.stop();
    expect(frames(sdk).at(-1)).toMatchObject({ socket, op: "close", code: 1000 });
  });
});

describe("files through the relay", () => {
  it("stores a binary body with TSDD and sends the request naming it, with its size and SHA-256", async () => {
    const stored: Blob[] = [];
    const { sdk, transport } = setup({
      upload: async (body) => {
        stored.push(body);
        return "file/preview/chat/1/agent/abc.lineup-provider";
      },
    });
    const archive = new Blob([new Uint8Array([0x1f, 0x8b, 0, 255])], { type: "application/octet-stream" });
    const call = transport.upload<{ id: string }>("/api/workspaces/w1/providers/packages", archive, "application/octet-stream", "k1");
    await vi.waitFor(() => expect(sdk.packets(REQUEST)).toHaveLength(1));
    const sent = sdk.packets(REQUEST)[0]!.payload;
    expect(stored).toEqual([archive]);
    expect(sent).toMatchObject({
      method: "POST",
      body: null,
      file: {
        url: "file/preview/chat/1/agent/abc.lineup-provider",
        size: 4,
        sha256: "6adf81ba16d001cb9c84f1bcbe5bb40b4f6b2a11f1c0a79386b9ef1266add294",
      },
    });
    expect((sent.headers as Record<string, string>)["content-type"]).toBe("application/octet-stream");
    respond(sdk, "id1", 201, { id: "notes" }, "m1");
    await expect(call).resolves.toEqual({ id: "notes" });
  });

  it("says so when the file cannot be stored, and sends nothing", async () => {
    const { sdk, transport } = setup({
      upload: async () => {
        throw new Error("the IM server answered 500");
      },
    });
    const call = transport.upload("/api/workspaces/w1/providers/packages", new Blob([new Uint8Array([1])]), "application/octet-stream");
    await expect(call).rejects.toMatchObject({ code: "unavailable", status: 503, details: { diagnostic: "LNP-RELAY-UPLOAD" } });
    expect(sdk.packets(REQUEST)).toHaveLength(0);
  });

  it("refuses a binary body when it has nowhere to store it", async () => {
    const { transport } = setup();
    const call = transport.upload("/api/workspaces/w1/providers/packages", new Blob([new Uint8Array([1])]), "application/octet-stream");
    await expect(call).rejects.toMatchObject({ code: "invalid_argument", details: { diagnostic: "LNP-RELAY-BINARY" } });
  });

  it("asks the host where a hub file opens, and reads its answer", async () => {
    const { sdk, tunnel } = setup();
    const asked = tunnel.fileLink("/api/workspaces/w1/files/f1");
    await settle();
    const request = sdk.packets(REQUEST)[0]!.payload;
    expect(request).toMatchObject({ method: "GET", path: "/api/workspaces/w1/files/f1", body: null });
    expect((request.headers as Record<string, string>).accept).toBe(FILE_LINK);
    const link = { url: "https://im.example/api/v1/file/preview/chat/1/ana/x.md?filename=r.md", path: "file/preview/chat/1/ana/x.md", name: "r.md", mimeType: "text/markdown", size: 3, sha256: "a".repeat(64) };
    sdk.deliver({ type: RESPONSE, id: "id1", status: 200, headers: { "content-type": FILE_LINK }, body: JSON.stringify(link), part: 0, parts: 1 }, { messageID: "m1" });
    await expect(asked).resolves.toEqual(link);
  });

  it("passes on the hub's refusal of a file link", async () => {
    const { sdk, tunnel } = setup();
    const asked = tunnel.fileLink("/api/workspaces/w1/files/gone");
    await settle();
    respond(sdk, "id1", 404, { error: { code: "not_found", message: "There is no such file in this workspace." } }, "m1");
    await expect(asked).rejects.toMatchObject({ code: "not_found", message: "There is no such file in this workspace." });
  });
});
