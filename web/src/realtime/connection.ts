// The ONE WebSocket to the hub (src/lineup/hub/client_gateway.py), with resume.
//
// Subscribe with the last sequence seen; the hub acks, replays every event after it, says
// `client.caught_up`, then sends live events. Frames without a sequence are ephemeral
// (`message.delta`: streamed agent text). On a drop we reconnect with backoff and subscribe
// again from the last sequence — never a page reload. Events at or below the last sequence
// are duplicates of what we already have and are dropped.
//
// Nothing here touches React or the DOM: the class takes its WebSocket constructor, storage
// and timers as arguments, so tests drive it with a fake socket.

import type { FramePayloads, HubEvent } from "../api/types";

export type ConnectionState =
  /** Opening the socket or waiting for the subscription's ack. */
  | "connecting"
  /** Subscribed; the hub is replaying what we missed. */
  | "replaying"
  /** Caught up; events arrive as they happen. */
  | "live"
  /** Dropped; a reconnect is scheduled. */
  | "offline"
  /** The hub refused us (signed out, not a member): no reconnect until restarted. */
  | "denied"
  /** Stopped by the app. */
  | "closed";

export interface DeltaFrame {
  type: "message.delta";
  conversationId?: string | null;
  taskId?: string | null;
  actor?: string | null;
  occurredAt?: string;
  payload: FramePayloads["message.delta"];
}

/** A frame as parsed, before any of its fields is checked. */
interface RawFrame {
  [field: string]: unknown;
  payload?: { [field: string]: unknown } | null;
}

export interface SocketLike {
  readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  onopen: ((ev: unknown) => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
  onclose: ((ev: { code: number; reason?: string }) => void) | null;
  onerror: ((ev: unknown) => void) | null;
}

export type SocketFactory = (url: string) => SocketLike;

export interface Timers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export interface RealtimeOptions {
  workspaceId: string;
  /** Full ws:// or wss:// URL; by default the page's own origin. */
  url?: string;
  socket?: SocketFactory;
  storage?: Pick<Storage, "getItem" | "setItem"> | null;
  /** Where to start when storage has nothing for this workspace. */
  initialSequence?: number;
  timers?: Timers;
  /** Delay before reconnect attempt `n` (0-based). */
  backoff?: (attempt: number) => number;
  now?: () => Date;
  newId?: () => string;
  /**
   * Renew the session's access token (the transport's refresh); true when it goes on. A
   * socket refused because its access token expired reconnects once after it.
   */
  refresh?: () => Promise<boolean>;
}

const OPEN = 1;
/** Close codes after which retrying cannot help (client_gateway.py). */
const REFUSED = new Set([4401, 4403]);

export function defaultBackoff(attempt: number): number {
  const base = Math.min(15_000, 500 * 2 ** attempt);
  return Math.round(base * (0.8 + Math.random() * 0.4));
}

export function defaultUrl(workspaceId: string): string {
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  return `${scheme}://${location.host}/ws/client?workspaceId=${encodeURIComponent(workspaceId)}`;
}

export function storageKey(workspaceId: string): string {
  return `lineup.lastSequence.${workspaceId}`;
}

type Listener<T> = (value: T) => void;

export class RealtimeConnection {
  readonly workspaceId: string;
  lastSequence: number;
  state: ConnectionState = "closed";
  /** How many reconnects since the last time we were live. */
  attempt = 0;

  private socket: SocketLike | null = null;
  private timer: unknown = null;
  private subscriptionId: string | null = null;
  private stopped = true;
  private readonly eventListeners = new Set<Listener<HubEvent>>();
  private readonly deltaListeners = new Set<Listener<DeltaFrame>>();
  private readonly stateListeners = new Set<Listener<ConnectionState>>();
  private readonly caughtUpListeners = new Set<Listener<number>>();
  /** The hub refused this socket's access token as expired (a refresh may help). */
  private tokenExpired = false;
  /** A refresh was already tried for this refusal: a second refusal is final. */
  private refreshed = false;
  private readonly opts: Required<
    Omit<RealtimeOptions, "initialSequence" | "storage" | "url" | "refresh">
  > & {
    storage: RealtimeOptions["storage"];
    url: string;
    refresh: RealtimeOptions["refresh"];
  };

  constructor(options: RealtimeOptions) {
    this.workspaceId = options.workspaceId;
    this.opts = {
      workspaceId: options.workspaceId,
      url: options.url ?? defaultUrl(options.workspaceId),
      socket: options.socket ?? ((url) => new WebSocket(url) as unknown as SocketLike),
      storage: options.storage === undefined ? safeSessionStorage() : options.storage,
      timers: options.timers ?? {
        setTimeout: (fn, ms) => globalThis.setTimeout(fn, ms),
        clearTimeout: (h) => globalThis.clearTimeout(h as number),
      },
      backoff: options.backoff ?? defaultBackoff,
      now: options.now ?? (() => new Date()),
      newId: options.newId ?? (() => `sub_${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`),
      refresh: options.refresh,
    };
    const stored = Number(this.opts.storage?.getItem(storageKey(this.workspaceId)) ?? NaN);
    this.lastSequence = Number.isFinite(stored) && stored >= 0 ? stored : (options.initialSequence ?? 0);
  }

  // --- listeners -------------------------------------------------------------------------

  onEvent(listener: Listener<HubEvent>): () => void {
    this.eventListeners.add(listener);
    return () => this.eventListeners.delete(listener);
  }

  onDelta(listener: Listener<DeltaFrame>): () => void {
    this.deltaListeners.add(listener);
    return () => this.deltaListeners.delete(listener);
  }

  onState(listener: Listener<ConnectionState>): () => void {
    this.stateListeners.add(listener);
    return () => this.stateListeners.delete(listener);
  }

  onCaughtUp(listener: Listener<number>): () => void {
    this.caughtUpListeners.add(listener);
    return () => this.caughtUpListeners.delete(listener);
  }

  // --- life ------------------------------------------------------------------------------

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.open();
  }

  stop(): void {
    this.stopped = true;
    this.clearTimer();
    const socket = this.socket;
    this.socket = null;
    if (socket) {
      detach(socket);
      try {
        socket.close(1000, "bye");
      } catch {
        /* already closed */
      }
    }
    this.setState("closed");
  }

  /**
   * The page became visible again or the network came back: a sleeping phone may hold a
   * socket that looks open but is dead, so subscribe again (a cheap replay from our cursor),
   * or reconnect at once instead of waiting for the backoff timer.
   */
  wake(): void {
    if (this.stopped || this.state === "denied") return;
    if (this.socket && this.socket.readyState === OPEN) {
      this.subscribe();
      return;
    }
    if (this.timer !== null) {
      this.clearTimer();
      this.open();
    }
  }

  // --- internals -------------------------------------------------------------------------

  private open(): void {
    this.clearTimer();
    this.setState("connecting");
    let socket: SocketLike;
    try {
      socket = this.opts.socket(this.opts.url);
    } catch {
      this.scheduleReconnect();
      return;
    }
    this.socket = socket;
    socket.onopen = () => {
      if (this.socket === socket) this.subscribe();
    };
    socket.onmessage = (ev) => {
      if (this.socket === socket) this.receive(ev.data);
    };
    socket.onerror = () => {
      /* a close follows; reconnect is handled there */
    };
    socket.onclose = (ev) => {
      if (this.socket !== socket) return;
      detach(socket);
      this.socket = null;
      if (this.stopped) return;
      if (ev.code === 4401 && this.tokenExpired && !this.refreshed && this.opts.refresh) {
        this.tokenExpired = false;
        this.refreshed = true;
        void this.opts.refresh().then((ok) => {
          if (this.stopped) return;
          if (ok) this.open();
          else this.setState("denied");
        });
        return;
      }
      if (REFUSED.has(ev.code)) {
        this.setState("denied");
        return;
      }
      this.scheduleReconnect();
    };
  }

  private subscribe(): void {
    const socket = this.socket;
    if (!socket) return;
    this.subscriptionId = this.opts.newId();
    if (this.state !== "live") this.setState("connecting");
    socket.send(
      JSON.stringify({
        id: this.subscriptionId,
        type: "client.subscribe",
        version: "0.1",
        occurredAt: this.opts.now().toISOString(),
        workspaceId: this.workspaceId,
        payload: { lastSequence: this.lastSequence, batch: true },
      }),
    );
  }

  private scheduleReconnect(): void {
    this.setState("offline");
    const delay = this.opts.backoff(this.attempt);
    this.attempt += 1;
    this.timer = this.opts.timers.setTimeout(() => {
      this.timer = null;
      if (!this.stopped) this.open();
    }, delay);
  }

  private clearTimer(): void {
    if (this.timer !== null) {
      this.opts.timers.clearTimeout(this.timer);
      this.timer = null;
    }
  }

  private receive(data: unknown): void {
    let frame: RawFrame;
    try {
      frame = JSON.parse(String(data)) as RawFrame;
    } catch {
      return;
    }
    if (frame.type === "client.batch") {
      // a replay, many events a frame (asked for by `batch` in client.subscribe): each as if alone
      const events = (frame.payload as { events?: unknown } | undefined)?.events;
      if (Array.isArray(events)) {
        for (const each of events) {
          if (each && typeof each === "object") this.handle(each as RawFrame);
        }
      }
      return;
    }
    this.handle(frame);
  }

  private handle(frame: RawFrame): void {
    const type = frame.type;
    if (type === "ack") {
      if (frame.id === this.subscriptionId && this.state !== "live") this.setState("replaying");
      return;
    }
    if (type === "error") {
      const reason = (frame as { details?: { reason?: unknown } }).details?.reason;
      if (frame.code === "unauthenticated" && reason === "token_expired" && !this.refreshed) {
        this.tokenExpired = true; // the close that follows refreshes and reconnects
        return;
      }
      if (frame.code === "unauthenticated" || frame.code === "forbidden") {
        if (frame.id == null || frame.id === this.subscriptionId) this.setState("denied");
      }
      return;
    }
    if (type === "client.caught_up") {
      const seq = Number(frame.payload?.sequence ?? 0);
      this.advance(seq);
      this.attempt = 0;
      this.refreshed = false;
      this.setState("live");
      for (const l of this.caughtUpListeners) l(this.lastSequence);
      return;
    }
    if (type === "system.resync_required") {
      // The hub no longer has what we missed: jump to its latest and let every view refetch.
      const latest = Number(frame.payload?.latestSequence ?? NaN);
      if (Number.isFinite(latest)) this.advance(latest);
      for (const l of this.caughtUpListeners) l(this.lastSequence);
      return;
    }
    if (type === "message.delta") {
      const payload = frame.payload;
      if (payload && typeof payload.messageId === "string" && typeof payload.delta === "string") {
        for (const l of this.deltaListeners) l(frame as unknown as DeltaFrame);
      }
      return;
    }
    if (typeof type !== "string") return;
    const sequence = typeof frame.sequence === "number" ? frame.sequence : null;
    if (sequence !== null) {
      if (sequence <= this.lastSequence) return; // seen already: a replay overlap or a resend
      this.advance(sequence);
    }
    const event = frame as unknown as HubEvent;
    for (const l of this.eventListeners) l(event);
  }

  private advance(sequence: number): void {
    if (!(sequence > this.lastSequence)) return;
    this.lastSequence = sequence;
    try {
      this.opts.storage?.setItem(storageKey(this.workspaceId), String(sequence));
    } catch {
      /* storage full or disabled: memory is enough */
    }
  }

  private setState(state: ConnectionState): void {
    if (this.state === state) return;
    this.state = state;
    for (const l of this.stateListeners) l(state);
  }
}

function detach(socket: SocketLike): void {
  socket.onopen = null;
  socket.onmessage = null;
  socket.onclose = null;
  socket.onerror = null;
}

function safeSessionStorage(): Pick<Storage, "getItem" | "setItem"> | null {
  try {
    return typeof sessionStorage === "undefined" ? null : sessionStorage;
  } catch {
    return null;
  }
}
