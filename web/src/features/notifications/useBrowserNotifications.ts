// Browser notifications from the open page: while LineUp is open but hidden (another tab, a
// minimised window), tell the person when an agent waits for them or something failed. Not
// when this device already gets Web Push (that would say it twice), and never with details.

import { useEffect, useRef } from "react";
import type { HubEvent } from "../../api/types";
import { useWorkspace } from "../../app/workspace";
import { useSession } from "../auth/session";
import { useHubEvents } from "../../realtime/RealtimeProvider";
import { NotificationsApi, PREFERENCES_CHANGED, type NotificationPreferences } from "./api";
import { currentSubscription } from "./push";

const WORDS: Record<string, string> = { approval: "approval", choice: "choice", input: "answer", review: "review" };
const TOOL_WORDS: Record<string, string> = { choice: "choice", confirm: "confirmation", input: "answer" };

export interface PageNotice {
  kind: "waiting" | "failed" | "done";
  title: string;
  body: string;
  url: string;
  tag: string;
}

/** The same words and tags as the hub's pushes (src/lineup/hub/notify/rules.py). */
export function noticeFor(event: HubEvent, workspaceId: string, agentName: (id: string | null | undefined) => string): PageNotice | null {
  const agentOf = (actor?: string | null) => (actor?.startsWith("agent:") ? agentName(actor.slice(6)) : "An agent");
  if (event.type === "interaction.requested") {
    const i = event.payload.interaction;
    const q = new URLSearchParams({ workspace: workspaceId, interaction: i.id ?? "" });
    if (event.taskId) q.set("task", event.taskId);
    return {
      kind: "waiting",
      title: "Waiting for you",
      body: `${agentOf(event.actor)} asks for your ${WORDS[i.type] ?? "decision"}.`,
      url: `/inbox?${q}`,
      tag: `lineup:interaction:${i.id}`,
    };
  }
  if (event.type === "tool.called" && event.payload.name in TOOL_WORDS) {
    const p = event.payload;
    const id = String(p.toolCallId ?? "");
    const q = new URLSearchParams({ workspace: workspaceId, toolCall: id });
    if (event.taskId) q.set("task", event.taskId);
    return {
      kind: "waiting",
      title: "Waiting for you",
      body: `${agentOf(event.actor)} asks for your ${TOOL_WORDS[p.name]}.`,
      url: `/inbox?${q}`,
      tag: `lineup:tool-call:${id}`,
    };
  }
  if (event.type === "task.status_changed" && (event.payload.status === "failed" || event.payload.status === "succeeded")) {
    const p = event.payload;
    const taskId = String(p.taskId ?? event.taskId ?? "");
    const failed = p.status === "failed";
    const who = agentOf(event.actor === "system" ? null : event.actor);
    return {
      kind: failed ? "failed" : "done",
      title: failed ? "A task failed" : "A task finished",
      body: failed ? `A task of ${who} failed.` : `${who} finished a task.`,
      url: `/tasks/${encodeURIComponent(taskId)}?workspace=${encodeURIComponent(workspaceId)}`,
      tag: `lineup:task:${taskId}`,
    };
  }
  return null;
}

export function useBrowserNotifications(): void {
  const { workspace, agentName } = useWorkspace();
  const session = useSession();
  const prefs = useRef<NotificationPreferences | null>(null);
  const pushHere = useRef(false);

  useEffect(() => {
    const api = new NotificationsApi(session.transport);
    let live = true;
    const load = () => {
      api.view().then(
        (v) => {
          if (live) prefs.current = v.preferences;
        },
        () => undefined,
      );
      currentSubscription().then(
        (s) => {
          if (live) pushHere.current = s !== null;
        },
        () => undefined,
      );
    };
    load();
    window.addEventListener(PREFERENCES_CHANGED, load);
    return () => {
      live = false;
      window.removeEventListener(PREFERENCES_CHANGED, load);
    };
  }, [session.transport]);

  useHubEvents((event) => {
    if (typeof Notification === "undefined" || Notification.permission !== "granted") return;
    if (document.visibilityState !== "hidden" || pushHere.current) return;
    const chosen = prefs.current;
    if (!chosen || !chosen.channels.includes("browser")) return;
    const notice = noticeFor(event, workspace.id, agentName);
    if (!notice || !chosen.events.includes(notice.kind)) return;
    const options = { body: notice.body, tag: notice.tag, icon: "/icons/icon-192.png", data: { url: notice.url } };
    void navigator.serviceWorker?.getRegistration().then((reg) => {
      if (reg) return reg.showNotification(notice.title, options);
      const shown = new Notification(notice.title, options);
      shown.onclick = () => {
        window.focus();
        window.location.assign(notice.url);
      };
      return undefined;
    });
  });
}
