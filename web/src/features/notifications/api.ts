// The typed client of /api/notifications (src/lineup/hub/api/notifications.py).

import type { Transport } from "../../api/client";

export type NotifyEvent = "waiting" | "failed" | "done";
export type NotifyChannel = "push" | "email" | "browser";

export interface QuietHours {
  start: string;
  end: string;
}

export interface NotificationPreferences {
  events: NotifyEvent[];
  channels: NotifyChannel[];
  quietHours: QuietHours | null;
  timeZone: string;
}

export interface ChannelHealth {
  lastAttemptAt: string | null;
  lastDeliveredAt: string | null;
  failingSince: string | null;
  lastError: string | null;
}

export interface NotifyDevice extends ChannelHealth {
  id: string;
  label: string;
  endpointOrigin: string;
  createdAt: string | null;
}

export interface SentNotification {
  id: string;
  kind: NotifyEvent | "test";
  channel: "push" | "email";
  target: string;
  targetLabel: string;
  title: string;
  body: string;
  link: string;
  status: "pending" | "delivered" | "failed" | "expired" | "skipped";
  attempts: number;
  createdAt: string | null;
  deliveredAt: string | null;
  nextAttemptAt: string | null;
  lastError: string | null;
}

export interface NotificationsView {
  vapidPublicKey: string | null;
  preferences: NotificationPreferences;
  options: { events: Array<{ id: NotifyEvent; label: string }>; channels: Array<{ id: NotifyChannel; label: string }> };
  email: ChannelHealth & { configured: boolean; address: string | null };
  devices: NotifyDevice[];
  recent: SentNotification[];
}

export interface PushSubscriptionBody {
  endpoint: string;
  keys: { p256dh: string; auth: string };
  label: string;
}

export class NotificationsApi {
  constructor(readonly transport: Transport) {}

  view(): Promise<NotificationsView> {
    return this.transport.get("/api/notifications");
  }

  savePreferences(prefs: NotificationPreferences): Promise<NotificationsView> {
    return this.transport.request("PUT", "/api/notifications/preferences", { body: prefs });
  }

  addDevice(body: PushSubscriptionBody): Promise<NotifyDevice> {
    return this.transport.post("/api/notifications/devices", body);
  }

  removeDevice(id: string): Promise<void> {
    return this.transport.request("DELETE", `/api/notifications/devices/${encodeURIComponent(id)}`);
  }

  sendTest(): Promise<{ queued: number }> {
    return this.transport.post("/api/notifications/test", {});
  }
}

/** Settings changed: live hooks (browser notifications) read the preferences again. */
export const PREFERENCES_CHANGED = "lineup:notification-preferences";
