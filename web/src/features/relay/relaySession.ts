// The relay session this browser remembers (localStorage), and the relay named in the opened
// address (`#relay=<TangSengDaoDao API>&agent=<uid>`), read once and removed from the address
// bar like direct mode's `#token=`.

import type { HistoryLike, UrlPlace } from "../direct/launchToken";

const KEY = "lineup.relay";

export interface RelaySession {
  /** TangSengDaoDao's API address. */
  api: string;
  /** WuKongIM's WebSocket address. */
  ws: string;
  uid: string;
  token: string;
  name: string;
  /** The agent's uid, and its name. */
  agent: string;
  agentName: string;
}

export interface RelayTarget {
  api: string;
  agent: string | null;
}

type Store = Pick<Storage, "getItem" | "setItem" | "removeItem">;

export function loadRelaySession(storage: Store | null = safeStorage()): RelaySession | null {
  try {
    const raw = storage?.getItem(KEY);
    if (!raw) return null;
    const s = JSON.parse(raw) as Partial<RelaySession>;
    const fields = [s.api, s.ws, s.uid, s.token, s.agent];
    if (!fields.every((f) => typeof f === "string" && f)) return null;
    return { ...(s as RelaySession), name: s.name ?? s.uid!, agentName: s.agentName ?? s.agent! };
  } catch {
    return null;
  }
}

export function saveRelaySession(session: RelaySession, storage: Store | null = safeStorage()): void {
  try {
    storage?.setItem(KEY, JSON.stringify(session));
  } catch {
    /* private mode: this page keeps it in memory */
  }
}

export function forgetRelaySession(storage: Store | null = safeStorage()): void {
  try {
    storage?.removeItem(KEY);
  } catch {
    /* nothing kept */
  }
}

/** `#relay=…&agent=…` in the address, or null; strips both from it when found. */
export function takeRelayTarget(
  place: UrlPlace = window.location,
  history: HistoryLike = window.history,
): RelayTarget | null {
  const url = new URL(place.href);
  const fragment = new URLSearchParams(url.hash.replace(/^#/, ""));
  if (!fragment.has("relay")) return null;
  const api = (fragment.get("relay") ?? "").trim();
  const agent = (fragment.get("agent") ?? "").trim() || null;
  fragment.delete("relay");
  fragment.delete("agent");
  const hash = fragment.toString();
  url.hash = hash ? `#${hash}` : "";
  history.replaceState(history.state, "", url.pathname + url.search + url.hash);
  return { api, agent };
}

function safeStorage(): Store | null {
  try {
    return typeof localStorage === "undefined" ? null : localStorage;
  } catch {
    return null;
  }
}
