// A tiny router on the History API: the hub answers every unknown path with index.html.

import { useSyncExternalStore, type AnchorHTMLAttributes, type MouseEvent } from "react";

type Listener = () => void;
const listeners = new Set<Listener>();

function notify(): void {
  for (const l of listeners) l();
}

if (typeof window !== "undefined") {
  window.addEventListener("popstate", notify);
}

export function navigate(to: string, { replace = false }: { replace?: boolean } = {}): void {
  const current = location.pathname + location.search;
  if (to === current) return;
  if (replace) history.replaceState(null, "", to);
  else history.pushState(null, "", to);
  notify();
}

function snapshot(): string {
  return location.pathname + location.search;
}

export interface Location {
  path: string;
  search: URLSearchParams;
  href: string;
}

export function useLocation(): Location {
  const href = useSyncExternalStore(
    (l) => {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    snapshot,
    snapshot,
  );
  const url = new URL(href, "http://x");
  return { path: url.pathname, search: url.searchParams, href };
}

/** `/tasks/:id` against `/tasks/task_1` → `{ id: "task_1" }`; null when it does not match. */
export function matchPath(pattern: string, path: string): Record<string, string> | null {
  const a = pattern.split("/").filter(Boolean);
  const b = path.split("/").filter(Boolean);
  if (a.length !== b.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < a.length; i++) {
    const p = a[i]!;
    const v = b[i]!;
    if (p.startsWith(":")) params[p.slice(1)] = decodeURIComponent(v);
    else if (p !== v) return null;
  }
  return params;
}

/** The current URL with some query parameters set (or removed with null). */
export function withQuery(loc: Location, changes: Record<string, string | null>, path = loc.path): string {
  const next = new URLSearchParams(loc.search);
  for (const [k, v] of Object.entries(changes)) {
    if (v === null) next.delete(k);
    else next.set(k, v);
  }
  const q = next.toString();
  return q ? `${path}?${q}` : path;
}

export function Link({
  to,
  replace,
  onClick,
  ...rest
}: AnchorHTMLAttributes<HTMLAnchorElement> & { to: string; replace?: boolean }) {
  function handle(e: MouseEvent<HTMLAnchorElement>) {
    onClick?.(e);
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    navigate(to, { replace });
  }
  return <a href={to} onClick={handle} {...rest} />;
}
