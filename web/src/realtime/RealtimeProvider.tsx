// React side of the one WebSocket: one connection per workspace, events fanned out to views.

import {
  createContext,
  useContext,
  useEffect,
  useMemo,
  useRef,
  useState,
  useSyncExternalStore,
  type ReactNode,
} from "react";
import type { HubEvent } from "../api/types";
import type { WorkspaceApi } from "../api/hub";
import { RealtimeConnection, storageKey, type ConnectionState, type SocketFactory } from "./connection";
import { StreamingMessages, type StreamingMessage } from "./streams";

type Listener<T> = (value: T) => void;

/** What views use: live events, caught-up notices and streamed text. The object stays the same
 * for the life of the connection, so subscribing effects (and their pending debounced
 * refetches) survive changes of the connection state, which has its own context. */
export interface RealtimeBus {
  onEvent(listener: Listener<HubEvent>): () => void;
  onCaughtUp(listener: Listener<number>): () => void;
  streams: StreamingMessages;
}

/** A bus you drive by hand: the default outside a provider, and the tests' fake. */
export class ManualBus implements RealtimeBus {
  streams = new StreamingMessages();
  private readonly events = new Set<Listener<HubEvent>>();
  private readonly caughtUp = new Set<Listener<number>>();

  onEvent(listener: Listener<HubEvent>): () => void {
    this.events.add(listener);
    return () => this.events.delete(listener);
  }

  onCaughtUp(listener: Listener<number>): () => void {
    this.caughtUp.add(listener);
    return () => this.caughtUp.delete(listener);
  }

  emit(event: HubEvent): void {
    this.streams.applyEvent(event);
    for (const l of this.events) l(event);
  }
}

const RealtimeContext = createContext<RealtimeBus>(new ManualBus());
const ConnectionStateContext = createContext<ConnectionState>("live");

export const RealtimeBusProvider = RealtimeContext.Provider;

/** Where the realtime socket goes when it is not the page's own origin (relay mode's tunnel). */
export interface SocketRoute {
  socket: SocketFactory;
  url: (workspaceId: string) => string;
}

const SocketRouteContext = createContext<SocketRoute | null>(null);
export const SocketRouteProvider = SocketRouteContext.Provider;

export function useRealtime(): RealtimeBus {
  return useContext(RealtimeContext);
}

export function useConnectionState(): ConnectionState {
  return useContext(ConnectionStateContext);
}

/** Call `handler` for every recorded event (the latest handler; no resubscribe per render). */
export function useHubEvents(handler: (event: HubEvent) => void): void {
  const bus = useRealtime();
  const ref = useRef(handler);
  ref.current = handler;
  useEffect(() => bus.onEvent((e) => ref.current(e)), [bus]);
}

export function useStreams(): StreamingMessage[] {
  const { streams } = useRealtime();
  return useSyncExternalStore(
    (l) => streams.subscribe(l),
    () => streams.snapshot(),
    () => streams.snapshot(),
  );
}

export interface RealtimeProviderProps {
  workspaceId: string;
  api: WorkspaceApi;
  children: ReactNode;
  /** Tests pass their own (fake socket); the app makes the real one. */
  connect?: (workspaceId: string, initialSequence: number) => RealtimeConnection;
}

export function RealtimeProvider({ workspaceId, api, children, connect }: RealtimeProviderProps) {
  const [state, setState] = useState<ConnectionState>("connecting");
  const streams = useMemo(() => new StreamingMessages(), [workspaceId]);
  const connectionRef = useRef<RealtimeConnection | null>(null);
  const route = useContext(SocketRouteContext);
  const listeners = useMemo(
    () => ({ events: new Set<Listener<HubEvent>>(), caughtUp: new Set<Listener<number>>() }),
    [workspaceId],
  );

  useEffect(() => {
    let cancelled = false;
    let unsubscribe: Array<() => void> = [];

    async function begin(): Promise<void> {
      let initial = 0;
      const stored = safeGet(storageKey(workspaceId));
      if (stored === null) {
        // Views load the present over HTTP; the socket only needs what happens from now on.
        try {
          initial = (await api.events(0, 1)).latestSequence;
        } catch {
          initial = 0;
        }
      }
      if (cancelled) return;
      const connection = connect
        ? connect(workspaceId, initial)
        : new RealtimeConnection({
            workspaceId,
            initialSequence: initial,
            refresh: () => api.transport.refresh(),
            ...(route ? { socket: route.socket, url: route.url(workspaceId) } : {}),
          });
      connectionRef.current = connection;
      unsubscribe = [
        connection.onState(setState),
        connection.onEvent((event) => {
          streams.applyEvent(event);
          for (const l of listeners.events) l(event);
        }),
        connection.onDelta((frame) => streams.applyDelta(frame)),
        connection.onCaughtUp((seq) => {
          for (const l of listeners.caughtUp) l(seq);
        }),
      ];
      connection.start();
    }
    void begin();

    const wake = () => {
      if (document.visibilityState === "visible") connectionRef.current?.wake();
    };
    const online = () => connectionRef.current?.wake();
    document.addEventListener("visibilitychange", wake);
    window.addEventListener("online", online);
    window.addEventListener("pageshow", online);
    return () => {
      cancelled = true;
      document.removeEventListener("visibilitychange", wake);
      window.removeEventListener("online", online);
      window.removeEventListener("pageshow", online);
      for (const u of unsubscribe) u();
      connectionRef.current?.stop();
      connectionRef.current = null;
    };
  }, [workspaceId, api, connect, streams, listeners, route]);

  const bus = useMemo<RealtimeBus>(
    () => ({
      streams,
      onEvent(listener) {
        listeners.events.add(listener);
        return () => listeners.events.delete(listener);
      },
      onCaughtUp(listener) {
        listeners.caughtUp.add(listener);
        return () => listeners.caughtUp.delete(listener);
      },
    }),
    [streams, listeners],
  );

  return (
    <RealtimeContext.Provider value={bus}>
      <ConnectionStateContext.Provider value={state}>{children}</ConnectionStateContext.Provider>
    </RealtimeContext.Provider>
  );
}

function safeGet(key: string): string | null {
  try {
    return sessionStorage.getItem(key);
  } catch {
    return null;
  }
}
