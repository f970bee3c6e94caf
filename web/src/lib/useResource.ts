// Fetch a view's data, and fetch it again (debounced) when a realtime event touches it.

import { useCallback, useEffect, useRef, useState, type DependencyList } from "react";
import type { HubEvent } from "../api/types";
import { ApiError } from "../api/client";
import { useRealtime } from "../realtime/RealtimeProvider";

export interface Resource<T> {
  data: T | undefined;
  error: ApiError | null;
  loading: boolean;
  /** Fetch again now (keeps showing the current data meanwhile). */
  reload: () => void;
  /** Patch the data locally (an optimistic update or an event applied in place). */
  setData: (update: (current: T | undefined) => T | undefined) => void;
}

export interface ResourceOptions {
  /** Events that make this view stale. */
  refreshOn?: (event: HubEvent) => boolean;
  debounceMs?: number;
  enabled?: boolean;
}

export function useResource<T>(
  load: (signal: AbortSignal) => Promise<T>,
  deps: DependencyList,
  { refreshOn, debounceMs = 120, enabled = true }: ResourceOptions = {},
): Resource<T> {
  const [data, setDataState] = useState<T | undefined>(undefined);
  const [error, setError] = useState<ApiError | null>(null);
  const [loading, setLoading] = useState<boolean>(enabled);
  const generation = useRef(0);
  const controller = useRef<AbortController | null>(null);
  const loadRef = useRef(load);
  loadRef.current = load;
  const refreshRef = useRef(refreshOn);
  refreshRef.current = refreshOn;
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  const hasData = useRef(false);

  const run = useCallback(() => {
    const mine = ++generation.current;
    controller.current?.abort();
    const ctrl = new AbortController();
    controller.current = ctrl;
    setLoading(true);
    loadRef.current(ctrl.signal).then(
      (value) => {
        if (mine !== generation.current) return;
        hasData.current = true;
        setDataState(value);
        setError(null);
        setLoading(false);
      },
      (err: unknown) => {
        if (mine !== generation.current || (err as Error)?.name === "AbortError") return;
        setError(
          err instanceof ApiError ? err : new ApiError("unknown_result", String(err), 0),
        );
        setLoading(false);
      },
    );
  }, []);

  useEffect(() => {
    hasData.current = false;
    setDataState(undefined);
    setError(null);
    if (!enabled) {
      setLoading(false);
      return;
    }
    run();
    return () => {
      generation.current++;
      controller.current?.abort();
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, enabled]);

  const bus = useRealtime();
  useEffect(() => {
    if (!enabled) return;
    const schedule = () => {
      if (timer.current !== null) clearTimeout(timer.current);
      timer.current = setTimeout(() => {
        timer.current = null;
        run();
      }, debounceMs);
    };
    const offEvent = bus.onEvent((event) => {
      if (refreshRef.current?.(event)) schedule();
    });
    // After a reconnect, fetch again: cheap, and covers anything a resync could not replay.
    const offCaughtUp = bus.onCaughtUp(() => {
      if (hasData.current) schedule();
    });
    return () => {
      offEvent();
      offCaughtUp();
      if (timer.current !== null) clearTimeout(timer.current);
      timer.current = null;
    };
  }, [bus, run, debounceMs, enabled]);

  const setData = useCallback((update: (current: T | undefined) => T | undefined) => {
    setDataState((current) => update(current));
  }, []);

  return { data, error, loading, reload: run, setData };
}
