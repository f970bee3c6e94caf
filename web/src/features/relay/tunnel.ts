// The web app's hub, reached through WuKongIM (docs/relay-mode.md): the agent's relay host runs
// LineUp in its own process, and the app's REST calls and its realtime socket travel as
// messages in the person channel between the person's uid and the agent's uid.
//
// - `fetch` is a Fetch for the app's Transport: each call is one persisted request (3101) with a
//   fresh id, answered by a response (3102) carrying that id, its body split in parts when
//   large. No answer in time is a 503 `unavailable` in the hub's own error envelope, so the app
//   shows it like any refusal.
// - `socket` is a SocketFactory for the realtime connection: open, frames and close as
//   no-persist socket messages (3103). A lost frame is recovered by the client protocol's own
//   resume: the socket closes when WuKongIM drops (or the agent says it restarted), and the
//   realtime connection reopens with its last sequence, as it does against a hub.
// - On each connect the app sends the tools it renders (3104); after a reconnect it fetches
//   through TangSengDaoDao's message sync what the agent answered while the page was offline.
// - Files never travel as tunnel messages: a binary request body is stored with TSDD first
//   (`upload`) and the request names it (`file: {url, size, sha256}`); `fileLink` asks the host
//   where a hub file opens (it stores the file with TSDD and answers its address).
//
// WuKongIM may deliver a message twice (a redelivered RECV, the same message again by sync):
// messages are dropped by message id, and responses by request id and part.
//
// Nothing here touches the DOM: the SDK, the sync call, timers and ids are arguments, so tests
// drive it with a fake SDK.

import { Channel } from "wukongimjssdk/lib/model";
import type { MessageContent } from "wukongimjssdk/lib/model";
import { parseError, type Fetch } from "../../api/client";
import type { SocketFactory, SocketLike, Timers } from "../../realtime/connection";
import { PERSON_CHANNEL } from "./tsdd";
import { LineUpContent, REQUEST, RESPONSE, SOCKET, TOOLS, registerContentTypes, type ContentRegistry, type Payload } from "./content";

/** What the tunnel uses of a message the SDK hands to its listeners. */
export interface SdkMessage {
  messageID: string;
  messageSeq: number;
  fromUID: string;
  content: MessageContent;
}

/** What the tunnel sets on a SEND before it goes out. */
export interface SdkPacket {
  noPersist: boolean;
}

export interface SdkSendPacket extends SdkPacket {
  clientSeq: number;
}

export interface SdkSendack {
  clientSeq: number;
  messageSeq: number;
  reasonCode: number;
}

/** `ConnectStatus` of the SDK. */
export const CONNECTED = 1;

/** The part of the official SDK (`WKSDK.shared()`) the tunnel drives. */
export interface RelaySdk extends ContentRegistry {
  config: { uid?: string; token?: string; addr: string };
  connect(): void;
  disconnect(): void;
  chatManager: {
    /** SENDs not acknowledged yet, resent by the SDK after each CONNACK. */
    sendingQueues: Map<number, SdkSendPacket>;
    getSendPacket(content: MessageContent, channel: Channel): SdkSendPacket;
    addMessageListener(listener: (message: SdkMessage) => void): void;
    removeMessageListener(listener: (message: SdkMessage) => void): void;
    addMessageStatusListener(listener: (ack: SdkSendack) => void): void;
    removeMessageStatusListener(listener: (ack: SdkSendack) => void): void;
  };
  connectManager: {
    sendPacket(packet: SdkPacket): void;
    addConnectStatusListener(listener: (status: number, reasonCode?: number) => void): void;
    removeConnectStatusListener(listener: (status: number, reasonCode?: number) => void): void;
  };
}

/** A message as TangSengDaoDao's message sync returns it, already decoded. */
export interface SyncedMessage {
  messageId: string;
  messageSeq: number;
  fromUid: string;
  payload: Payload;
}

export interface TunnelOptions {
  sdk: RelaySdk;
  /** The agent's uid: the channel, and the only sender whose messages count. */
  agentUid: string;
  /** How the agent is called in error messages. */
  agentName?: string;
  /** Messages of the agent's channel from `startSeq` on (TangSengDaoDao's channel sync). */
  sync?: (startSeq: number) => Promise<SyncedMessage[]>;
  /** The tools this app renders, sent on each connect. */
  tools?: () => unknown[];
  /** Store a request body with TSDD; answers its file path. Without it a binary body is refused. */
  upload?: (body: Blob) => Promise<string>;
  /** How long a request waits for its response. */
  timeoutMs?: number;
  timers?: Timers;
  newId?: () => string;
}

export type LinkState = "connecting" | "connected" | "offline" | "refused";

interface Pending {
  resolve(response: Response): void;
  reject(error: unknown): void;
  timer: unknown;
  parts: Array<string | undefined>;
  /** The request's own message sequence, once WuKongIM acknowledged it. */
  sentSeq: number | null;
  clientSeq: number;
}

/** How many recent message and request ids are remembered for dropping duplicates. */
const REMEMBER = 2000;
/** Statuses whose Response has no body. */
const NO_BODY = new Set([101, 204, 205, 304]);

export class RelayTunnel {
  readonly agentUid: string;
  state: LinkState = "connecting";
  /** Messages dropped: from someone else, a duplicate, or of no use (counted for diagnosis). */
  readonly dropped = { foreign: 0, duplicate: 0, stray: 0 };

  private readonly sdk: RelaySdk;
  private readonly channel: Channel;
  private readonly opts: Required<Omit<TunnelOptions, "sync" | "tools" | "agentName" | "upload">> &
    Pick<TunnelOptions, "sync" | "tools" | "upload">;
  private readonly agentName: string;
  private readonly pending = new Map<string, Pending>();
  private readonly answered = new BoundedSet(REMEMBER);
  private readonly seenMessages = new BoundedSet(REMEMBER);
  private readonly sockets = new Map<string, RelaySocket>();
  private readonly stateListeners = new Set<(state: LinkState) => void>();
  private connectedOnce = false;
  private started = false;

  constructor(options: TunnelOptions) {
    this.sdk = options.sdk;
    this.agentUid = options.agentUid;
    this.agentName = options.agentName ?? "The agent";
    this.channel = new Channel(options.agentUid, PERSON_CHANNEL);
    this.opts = {
      sdk: options.sdk,
      agentUid: options.agentUid,
      sync: options.sync,
      tools: options.tools,
      upload: options.upload,
      timeoutMs: options.timeoutMs ?? 30_000,
      timers: options.timers ?? {
        setTimeout: (fn, ms) => globalThis.setTimeout(fn, ms),
        clearTimeout: (h) => globalThis.clearTimeout(h as number),
      },
      newId: options.newId ?? (() => crypto.randomUUID()),
    };
    registerContentTypes(this.sdk);
  }

  // --- life ------------------------------------------------------------------------------

  /** Listen, then connect (the SDK reconnects by itself after a drop). */
  start(): void {
    if (this.started) return;
    this.started = true;
    this.sdk.chatManager.addMessageListener(this.onMessage);
    this.sdk.chatManager.addMessageStatusListener(this.onSendack);
    this.sdk.connectManager.addConnectStatusListener(this.onStatus);
    this.sdk.connect();
  }

  stop(): void {
    if (!this.started) return;
    this.started = false;
    this.sdk.chatManager.removeMessageListener(this.onMessage);
    this.sdk.chatManager.removeMessageStatusListener(this.onSendack);
    this.sdk.connectManager.removeConnectStatusListener(this.onStatus);
    this.sdk.disconnect();
    this.closeSockets(1000, "signed out");
    for (const [id, entry] of this.pending) {
      this.opts.timers.clearTimeout(entry.timer);
      entry.reject(new DOMException("The relay session ended.", "AbortError"));
      this.pending.delete(id);
    }
    this.setState("offline");
  }

  onState(listener: (state: LinkState) => void): () => void {
    this.stateListeners.add(listener);
    return () => this.stateListeners.delete(listener);
  }

  // --- REST over 3101 / 3102 -------------------------------------------------------------

  readonly fetch: Fetch = async (input, init) => {
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    const method = (init?.method ?? "GET").toUpperCase();
    const headers: Record<string, string> = {};
    new Headers(init?.headers).forEach((value, key) => {
      headers[key] = value;
    });
    const body = init?.body;
    let text: string | null = null;
    let file: FileRef | null = null;
    if (typeof body === "string") text = body;
    else if (body instanceof Blob && /^(text\/|application\/json)/.test(body.type || headers["content-type"] || "")) {
      text = await body.text();
    } else if (body instanceof Blob || body instanceof ArrayBuffer || ArrayBuffer.isView(body)) {
      const blob = body instanceof Blob ? body : new Blob([body as BlobPart], { type: headers["content-type"] ?? "" });
      if (!this.opts.upload) {
        return errorResponse(400, "invalid_argument", "Files cannot be sent through this relay session.", { diagnostic: "LNP-RELAY-BINARY" });
      }
      try {
        file = { url: await this.opts.upload(blob), size: blob.size, ...(await sha256(blob)) };
      } catch (cause) {
        const why = cause instanceof Error ? cause.message : String(cause);
        return errorResponse(503, "unavailable", `The file could not be stored with the IM server: ${why}`, { diagnostic: "LNP-RELAY-UPLOAD" });
      }
    } else if (body != null) {
      return errorResponse(400, "invalid_argument", "This kind of request body cannot be sent through the relay.", { diagnostic: "LNP-RELAY-BODY" });
    }
    const signal = init?.signal ?? null;
    if (signal?.aborted) throw new DOMException("Aborted", "AbortError");

    const id = this.opts.newId();
    const request = { id, method, path: pathOf(url), headers, body: text, ...(file ? { file } : {}) };
    return new Promise<Response>((resolve, reject) => {
      const seconds = Math.round(this.opts.timeoutMs / 1000);
      const timer = this.opts.timers.setTimeout(() => {
        if (!this.pending.delete(id)) return;
        resolve(
          errorResponse(
            503,
            "unavailable",
            `${this.agentName} did not answer through the relay within ${seconds} s. It may be offline or restarting; try again in a moment.`,
            { diagnostic: "LNP-RELAY-TIMEOUT", requestId: id },
          ),
        );
      }, this.opts.timeoutMs);
      const packet = this.sdk.chatManager.getSendPacket(new LineUpContent(REQUEST, request), this.channel);
      this.pending.set(id, { resolve, reject, timer, parts: [], sentSeq: null, clientSeq: packet.clientSeq });
      signal?.addEventListener("abort", () => {
        const entry = this.pending.get(id);
        if (!entry) return;
        this.pending.delete(id);
        this.opts.timers.clearTimeout(entry.timer);
        reject(new DOMException("Aborted", "AbortError"));
      });
      // persisted, and kept in the SDK's queue until acknowledged: resent after a reconnect
      this.sdk.chatManager.sendingQueues.set(packet.clientSeq, packet);
      this.transmit(packet);
    });
  };

  /** Where a hub file (`/api/workspaces/…/files/…`) opens: the host stores it with TSDD. */
  async fileLink(path: string): Promise<FileLink> {
    const response = await this.fetch(path, { method: "GET", headers: { accept: FILE_LINK } });
    if (!response.ok) throw await parseError(response);
    const link = (await response.json()) as Partial<FileLink>;
    if (typeof link.url !== "string" || !/^https?:\/\//.test(link.url)) {
      throw new DOMException("The agent answered no address for the file.", "NotFoundError");
    }
    return link as FileLink;
  }

  /** How many requests wait for their response. */
  get waiting(): number {
    return this.pending.size;
  }

  private onResponse(payload: Payload): void {
    const id = typeof payload.id === "string" ? payload.id : null;
    if (id === null) return void this.dropped.stray++;
    const entry = this.pending.get(id);
    if (!entry) {
      if (this.answered.has(id)) this.dropped.duplicate++;
      else this.dropped.stray++; // timed out, or another page's
      return;
    }
    const parts = Number.isInteger(payload.parts) && (payload.parts as number) > 0 ? (payload.parts as number) : 1;
    const part = Number.isInteger(payload.part) ? (payload.part as number) : 0;
    if (part < 0 || part >= parts) return void this.dropped.stray++;
    if (entry.parts.length === 0) entry.parts = new Array<string | undefined>(parts).fill(undefined);
    if (entry.parts[part] !== undefined) return void this.dropped.duplicate++;
    entry.parts[part] = typeof payload.body === "string" ? payload.body : "";
    if (entry.parts.some((p) => p === undefined)) return;
    this.pending.delete(id);
    this.answered.add(id);
    this.opts.timers.clearTimeout(entry.timer);
    const status = typeof payload.status === "number" ? payload.status : 502;
    const headers = new Headers();
    if (payload.headers && typeof payload.headers === "object") {
      for (const [key, value] of Object.entries(payload.headers as Record<string, unknown>)) {
        if (typeof value === "string") headers.set(key, value);
      }
    }
    const text = entry.parts.join("");
    entry.resolve(new Response(NO_BODY.has(status) ? null : text, { status, headers }));
  }

  // --- the realtime socket over 3103 -----------------------------------------------------

  readonly socket: SocketFactory = (url) => {
    const socket = new RelaySocket(this.opts.newId(), (payload) => this.sendSocket(payload), () => {
      this.sockets.delete(socket.id);
    });
    this.sockets.set(socket.id, socket);
    const connected = this.state === "connected";
    this.opts.timers.setTimeout(() => {
      if (connected && this.state === "connected") socket.open(pathOf(url));
      else socket.closed(1006, "The relay is not connected.");
    }, 0);
    return socket;
  };

  private sendSocket(payload: Payload): void {
    const packet = this.sdk.chatManager.getSendPacket(new LineUpContent(SOCKET, payload), this.channel);
    packet.noPersist = true; // the SEND header's flag: WuKongIM delivers it and keeps nothing
    this.transmit(packet);
  }

  private onSocket(payload: Payload): void {
    const id = typeof payload.socket === "string" ? payload.socket : null;
    if (id === null) return void this.dropped.stray++;
    if (id === "*" && payload.op === "close") {
      // the relay host started again: none of our sockets exists there any more
      this.closeSockets(numberOr(payload.code, 1012), stringOr(payload.reason, "The agent restarted."));
      return;
    }
    const socket = this.sockets.get(id);
    if (!socket) return void this.dropped.stray++;
    if (payload.op === "frame" && typeof payload.data === "string") socket.frame(payload.data);
    else if (payload.op === "close") socket.closed(numberOr(payload.code, 1000), stringOr(payload.reason, ""));
  }

  private closeSockets(code: number, reason: string): void {
    for (const socket of [...this.sockets.values()]) socket.closed(code, reason);
  }

  // --- WuKongIM --------------------------------------------------------------------------

  private transmit(packet: SdkPacket): void {
    try {
      this.sdk.connectManager.sendPacket(packet);
    } catch {
      // not connected yet: a persisted SEND waits in the SDK's queue, a socket message is lost
      // and its socket closes with the connection
    }
  }

  private readonly onMessage = (message: SdkMessage): void => {
    if (message.fromUID === this.sdk.config.uid) return; // the SDK hands our own sends on too
    if (message.fromUID !== this.agentUid) return void this.dropped.foreign++;
    const content = message.content;
    if (!(content instanceof LineUpContent)) return; // TSDD's own types: not the app's
    this.accept(message.messageID, content.data);
  };

  private accept(messageId: string, payload: Payload): void {
    if (messageId && messageId !== "0") {
      if (this.seenMessages.has(messageId)) return void this.dropped.duplicate++;
      this.seenMessages.add(messageId);
    }
    if (payload.type === RESPONSE) this.onResponse(payload);
    else if (payload.type === SOCKET) this.onSocket(payload);
  }

  private readonly onSendack = (ack: SdkSendack): void => {
    for (const [id, entry] of this.pending) {
      if (entry.clientSeq !== ack.clientSeq) continue;
      if (ack.reasonCode !== 1) {
        this.pending.delete(id);
        this.opts.timers.clearTimeout(entry.timer);
        entry.resolve(
          errorResponse(503, "unavailable", `The relay did not accept the request (WuKongIM reason ${ack.reasonCode}).`, {
            diagnostic: "LNP-RELAY-REFUSED",
            reasonCode: ack.reasonCode,
          }),
        );
      } else entry.sentSeq = ack.messageSeq;
      return;
    }
  };

  private readonly onStatus = (status: number, reasonCode?: number): void => {
    if (status !== CONNECTED) {
      // a CONNACK refusing the token or a kick: the SDK does not retry; a drop: it does
      this.setState(status === 3 || status === 4 ? "refused" : "offline");
      this.closeSockets(1006, "The relay connection dropped.");
      void reasonCode;
      return;
    }
    const again = this.connectedOnce;
    this.connectedOnce = true;
    this.setState("connected");
    const tools = this.opts.tools?.();
    if (tools) {
      // persisted (the host reads it when it comes back), but not queued for a resend: every
      // connect sends the list again
      this.transmit(this.sdk.chatManager.getSendPacket(new LineUpContent(TOOLS, { tools }), this.channel));
    }
    if (again) void this.catchUp();
  };

  /** Fetch what the agent answered while we were offline: from the oldest waiting request on. */
  async catchUp(): Promise<number> {
    if (!this.opts.sync) return 0;
    const seqs = [...this.pending.values()].map((p) => p.sentSeq).filter((s): s is number => s !== null && s > 0);
    if (seqs.length === 0) return 0;
    let messages: SyncedMessage[];
    try {
      messages = await this.opts.sync(Math.min(...seqs) + 1);
    } catch {
      return 0; // the request's own timeout reports it
    }
    let taken = 0;
    for (const m of messages) {
      if (m.fromUid !== this.agentUid) continue;
      taken += 1;
      this.accept(m.messageId, m.payload);
    }
    return taken;
  }

  private setState(state: LinkState): void {
    if (this.state === state) return;
    this.state = state;
    for (const l of this.stateListeners) l(state);
  }
}

/** One realtime socket through the tunnel, with a browser WebSocket's shape. */
export class RelaySocket implements SocketLike {
  readyState = 0;
  onopen: ((ev: unknown) => void) | null = null;
  onmessage: ((ev: { data: unknown }) => void) | null = null;
  onclose: ((ev: { code: number; reason?: string }) => void) | null = null;
  onerror: ((ev: unknown) => void) | null = null;

  constructor(
    readonly id: string,
    private readonly post: (payload: Payload) => void,
    private readonly forget: () => void,
  ) {}

  open(path: string): void {
    if (this.readyState !== 0) return;
    this.post({ socket: this.id, op: "open", path });
    this.readyState = 1;
    this.onopen?.({});
  }

  send(data: string): void {
    if (this.readyState !== 1) throw new DOMException("The relay socket is not open.", "InvalidStateError");
    this.post({ socket: this.id, op: "frame", data });
  }

  close(code = 1000, reason = ""): void {
    if (this.readyState >= 2) return;
    if (this.readyState === 1) this.post({ socket: this.id, op: "close", code, reason });
    this.closed(code, reason);
  }

  /** Received or local: the socket is done. */
  frame(data: string): void {
    if (this.readyState === 1) this.onmessage?.({ data });
  }

  closed(code: number, reason: string): void {
    if (this.readyState === 3) return;
    this.readyState = 3;
    this.forget();
    this.onclose?.({ code, reason });
  }
}

/** The `accept` of a file-link request, and the type of its answer. */
export const FILE_LINK = "application/vnd.lineup.file-link+json";

/** Where a hub file opens (TSDD's address of the same bytes). */
export interface FileLink {
  url: string;
  path: string;
  name: string;
  mimeType: string;
  size: number;
  sha256: string;
}

/** A request body stored with TSDD, named in the request instead of the bytes. */
export interface FileRef {
  url: string;
  size: number;
  sha256?: string;
}

/** The body's SHA-256, when the page may compute it (a secure context); the host checks it. */
async function sha256(blob: Blob): Promise<{ sha256?: string }> {
  const subtle = globalThis.crypto?.subtle;
  if (!subtle) return {};
  const read = new Uint8Array(await bytesOf(blob));
  const bytes = new Uint8Array(read.length); // this realm's own buffer, which `digest` insists on
  bytes.set(read);
  const digest = new Uint8Array(await subtle.digest("SHA-256", bytes));
  return { sha256: [...digest].map((b) => b.toString(16).padStart(2, "0")).join("") };
}

function bytesOf(blob: Blob): Promise<ArrayBuffer> {
  if (typeof blob.arrayBuffer === "function") return blob.arrayBuffer();
  return new Promise((resolve, reject) => {
    const reader = new FileReader(); // older engines (and jsdom) have no Blob.arrayBuffer
    reader.onload = () => resolve(reader.result as ArrayBuffer);
    reader.onerror = () => reject(reader.error);
    reader.readAsArrayBuffer(blob);
  });
}

/** The path and query of a request or socket address (the tunnel has no origin). */
export function pathOf(url: string): string {
  const match = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i.exec(url);
  const rest = match ? url.slice(match[0].length) : url;
  return rest.startsWith("/") ? rest : `/${rest}`;
}

function errorResponse(status: number, code: string, message: string, details: Record<string, unknown>): Response {
  return new Response(JSON.stringify({ error: { code, message, details } }), {
    status,
    headers: { "content-type": "application/json" },
  });
}

function numberOr(value: unknown, fallback: number): number {
  return typeof value === "number" && Number.isInteger(value) ? value : fallback;
}

function stringOr(value: unknown, fallback: string): string {
  return typeof value === "string" ? value : fallback;
}

/** A set that forgets its oldest entries past a size. */
class BoundedSet {
  private readonly items = new Set<string>();
  constructor(private readonly limit: number) {}

  has(item: string): boolean {
    return this.items.has(item);
  }

  add(item: string): void {
    this.items.add(item);
    if (this.items.size > this.limit) {
      const oldest = this.items.values().next().value;
      if (oldest !== undefined) this.items.delete(oldest);
    }
  }
}
