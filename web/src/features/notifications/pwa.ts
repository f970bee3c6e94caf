// The installable app's page side: register the service worker, warm its cache of the inbox
// the first time it takes over, and answer its questions ("is this card on screen?").

import { navigate } from "../../lib/router";
import { loadRelaySession } from "../relay/relaySession";

const WORKSPACE_KEY = "lineup.workspace";

/** Is the person looking at the card this notification is about? (Then the push stays quiet.) */
export function showingCard(url: string, subjectId?: string): boolean {
  if (document.visibilityState !== "visible" || !document.hasFocus()) return false;
  if (subjectId) {
    const selector = `[data-interaction-id="${CSS.escape(subjectId)}"], [data-task-id="${CSS.escape(subjectId)}"], [data-agent-id="${CSS.escape(subjectId)}"]`;
    for (const el of document.querySelectorAll(selector)) {
      const r = el.getBoundingClientRect();
      if (r.bottom > 0 && r.top < window.innerHeight && r.width > 0) return true;
    }
  }
  const target = new URL(url, location.origin);
  if (target.pathname !== location.pathname) return false;
  const here = new URLSearchParams(location.search);
  for (const key of ["interaction", "task"]) {
    const want = target.searchParams.get(key);
    if (want && here.get(key) !== want) return false;
  }
  return target.pathname.startsWith("/tasks/") || target.pathname.startsWith("/agents/");
}

function onMessage(event: MessageEvent): void {
  const data = event.data as { type?: string; url?: string; subjectId?: string } | null;
  if (data?.type === "lineup.showing") {
    event.ports[0]?.postMessage(showingCard(data.url ?? "/", data.subjectId));
  } else if (data?.type === "lineup.open" && data.url) {
    const url = new URL(data.url, location.origin);
    navigate(url.pathname + url.search);
  }
}

/** What the inbox shows offline: fetched once through the new worker so it keeps a copy. */
function warmCache(): void {
  // in relay mode the API is reached through WuKongIM, not this origin: nothing to warm
  if (loadRelaySession()) return;
  const workspace = localStorage.getItem(WORKSPACE_KEY);
  const paths = ["/api/auth/me", "/api/notifications"];
  if (workspace) {
    const base = `/api/workspaces/${encodeURIComponent(workspace)}`;
    paths.push(`${base}/inbox`, `${base}/agents`, `${base}/tasks?status=waiting`, `${base}/events?after=0&limit=1`);
  }
  for (const path of paths) void fetch(path, { credentials: "same-origin" }).catch(() => undefined);
}

export function registerServiceWorker(): void {
  if (!("serviceWorker" in navigator)) return;
  navigator.serviceWorker.addEventListener("message", onMessage);
  const firstTime = !navigator.serviceWorker.controller;
  if (firstTime) navigator.serviceWorker.addEventListener("controllerchange", warmCache, { once: true });
  window.addEventListener("load", () => {
    navigator.serviceWorker.register("/sw.js", { scope: "/" }).catch(() => undefined);
  });
}
