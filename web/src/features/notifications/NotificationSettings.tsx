// Settings → Notifications: what to hear about, where, when not; this person's devices and
// email, and how every recent delivery went — so a broken channel never stays silent.

import { useCallback, useEffect, useId, useMemo, useState } from "react";
import { ApiError, type Transport } from "../../api/client";
import { relativeTime, fullTime } from "../../lib/time";
import { useNow } from "../../lib/useNow";
import { Banner, Button, Card, ErrorBanner, Loading, StatusPill, RelativeTime } from "../../ui";
import {
  NotificationsApi,
  PREFERENCES_CHANGED,
  type ChannelHealth,
  type NotificationPreferences,
  type NotificationsView,
  type SentNotification,
} from "./api";
import { currentSubscription, pushSupported, subscribeThisDevice, thisDeviceId } from "./push";
import "./notifications.css";

function zones(): string[] {
  const here = Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
  const all = typeof Intl.supportedValuesOf === "function" ? Intl.supportedValuesOf("timeZone") : [];
  return [...new Set(["UTC", here, ...all])];
}

/** "Last delivered 2 min ago" / "Failing since 10:42 (…)" / "Nothing sent yet". */
export function healthText(h: ChannelHealth): { tone: "success" | "danger" | "neutral"; text: string } {
  if (h.failingSince)
    return {
      tone: "danger",
      text: `Failing since ${fullTime(h.failingSince)} (${relativeTime(h.failingSince)})${h.lastError ? ` — ${h.lastError}` : ""}`,
    };
  if (h.lastDeliveredAt) return { tone: "success", text: `Last delivered ${relativeTime(h.lastDeliveredAt)}` };
  return { tone: "neutral", text: "Nothing sent yet" };
}

function Health({ health }: { health: ChannelHealth }) {
  const h = healthText(health);
  return (
    <StatusPill
      tone={h.tone}
      icon={h.tone === "danger" ? "alert" : h.tone === "success" ? "checkCircle" : "clock"}
      label={h.text}
    />
  );
}

const STATUS_WORDS: Record<SentNotification["status"], string> = {
  pending: "Waiting to send",
  delivered: "Delivered",
  failed: "Failed",
  expired: "Device gone",
  skipped: "Not sent",
};

export function NotificationSettings({ transport }: { transport: Transport }) {
  const api = useMemo(() => new NotificationsApi(transport), [transport]);
  const [view, setView] = useState<NotificationsView | null>(null);
  const [draft, setDraft] = useState<NotificationPreferences | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const [note, setNote] = useState<string | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const [thisEndpoint, setThisEndpoint] = useState<string | null>(null);
  const ids = { quiet: useId(), start: useId(), end: useId(), zone: useId() };
  useNow(30_000);

  const load = useCallback(async () => {
    try {
      const v = await api.view();
      setView(v);
      setDraft((d) => d ?? v.preferences);
      setError(null);
    } catch (err) {
      setError(err as ApiError);
    }
  }, [api]);

  useEffect(() => {
    void load();
    currentSubscription().then(
      (s) => setThisEndpoint(s?.endpoint ?? null),
      () => undefined,
    );
    const timer = window.setInterval(() => void load(), 30_000);
    return () => window.clearInterval(timer);
  }, [load]);

  async function act(what: string, run: () => Promise<unknown>, done?: string) {
    setBusy(what);
    setNote(null);
    setError(null);
    try {
      await run();
      if (done) setNote(done);
      await load();
    } catch (err) {
      setError(err instanceof ApiError ? err : new ApiError("unknown_result", (err as Error).message, 0));
    } finally {
      setBusy(null);
    }
  }

  if (!view || !draft) {
    return (
      <Card>
        <h2 className="card-title">Notifications</h2>
        {error ? <ErrorBanner error={error} onRetry={() => void load()} /> : <Loading what="notification settings" />}
      </Card>
    );
  }

  const toggle = <K extends "events" | "channels">(key: K, value: NotificationPreferences[K][number]) =>
    setDraft((d) => {
      if (!d) return d;
      const list = d[key] as string[];
      const next = list.includes(value) ? list.filter((v) => v !== value) : [...list, value];
      return { ...d, [key]: next };
    });

  const save = () =>
    act(
      "save",
      async () => {
        const saved = await api.savePreferences(draft);
        setDraft(saved.preferences);
        window.dispatchEvent(new Event(PREFERENCES_CHANGED));
      },
      "Saved.",
    );

  const subscribed = thisEndpoint ? view.devices.find((d) => d.id === thisDeviceId()) : undefined;
  const canPush = pushSupported() && !!view.vapidPublicKey;

  return (
    <>
      <Card>
        <h2 className="card-title">Notifications</h2>
        <p className="muted">
          LineUp tells you when an agent waits for you or something fails. Notifications name the agent and the kind of
          request, never its details.
        </p>
        <div className="notify-grid">
          <fieldset className="checks">
            <legend>Tell me when</legend>
            {view.options.events.map((o) => (
              <label key={o.id} className="check">
                <input type="checkbox" checked={draft.events.includes(o.id)} onChange={() => toggle("events", o.id)} />
                <span>{o.label}</span>
              </label>
            ))}
          </fieldset>
          <fieldset className="checks">
            <legend>How</legend>
            {view.options.channels.map((o) => (
              <label key={o.id} className="check">
                <input type="checkbox" checked={draft.channels.includes(o.id)} onChange={() => toggle("channels", o.id)} />
                <span>{o.label}</span>
              </label>
            ))}
          </fieldset>
        </div>
        <div className="notify-quiet">
          <label className="check" htmlFor={ids.quiet}>
            <input
              id={ids.quiet}
              type="checkbox"
              checked={draft.quietHours !== null}
              onChange={(e) => setDraft({ ...draft, quietHours: e.target.checked ? { start: "22:00", end: "07:00" } : null })}
            />
            <span>Quiet hours: hold notifications and send them when they end</span>
          </label>
          {draft.quietHours ? (
            <div className="notify-quiet-times">
              <div className="field">
                <label htmlFor={ids.start}>From</label>
                <input
                  id={ids.start}
                  type="time"
                  value={draft.quietHours.start}
                  onChange={(e) => setDraft({ ...draft, quietHours: { ...draft.quietHours!, start: e.target.value } })}
                />
              </div>
              <div className="field">
                <label htmlFor={ids.end}>Until</label>
                <input
                  id={ids.end}
                  type="time"
                  value={draft.quietHours.end}
                  onChange={(e) => setDraft({ ...draft, quietHours: { ...draft.quietHours!, end: e.target.value } })}
                />
              </div>
            </div>
          ) : null}
          <div className="field">
            <label htmlFor={ids.zone}>Time zone</label>
            <select id={ids.zone} value={draft.timeZone} onChange={(e) => setDraft({ ...draft, timeZone: e.target.value })}>
              {zones().map((z) => (
                <option key={z} value={z}>
                  {z}
                </option>
              ))}
            </select>
          </div>
        </div>
        <div className="notify-actions">
          <Button variant="primary" busy={busy === "save"} onClick={() => void save()}>
            {busy === "save" ? "Saving…" : "Save notification settings"}
          </Button>
          {note ? (
            <span className="muted" role="status">
              {note}
            </span>
          ) : null}
        </div>
        {error ? <ErrorBanner error={error} /> : null}
      </Card>

      <Card>
        <h2 className="card-title">Where LineUp reaches you</h2>
        <ul className="notify-list" aria-label="Devices and email">
          {view.devices.map((d) => (
            <li key={d.id} className="notify-item" data-device-id={d.id}>
              <div className="notify-item-main">
                <strong>{d.label}</strong>
                {subscribed?.id === d.id ? <span className="badge badge-brand">This device</span> : null}
                <span className="muted">Push · added <RelativeTime iso={d.createdAt} /></span>
                <Health health={d} />
              </div>
              <Button size="sm" variant="ghost" busy={busy === d.id} onClick={() => void act(d.id, () => api.removeDevice(d.id), `Removed ${d.label}.`)}>
                Remove
              </Button>
            </li>
          ))}
          <li className="notify-item" data-channel="email">
            <div className="notify-item-main">
              <strong>Email</strong>
              <span className="muted">
                {view.email.configured
                  ? `${view.email.address ?? ""}${draft.channels.includes("email") ? "" : " · turned off above"}`
                  : "Not set up on this hub (the administrator sets LINEUP_SMTP_HOST)"}
              </span>
              {view.email.configured ? <Health health={view.email} /> : null}
            </div>
          </li>
        </ul>
        {!canPush ? (
          <Banner tone="info">This browser cannot receive push notifications here; email still works.</Banner>
        ) : null}
        <div className="notify-actions">
          {canPush && !subscribed ? (
            <Button
              variant="primary"
              icon="bell"
              busy={busy === "subscribe"}
              onClick={() =>
                void act(
                  "subscribe",
                  async () => {
                    await subscribeThisDevice(api, view.vapidPublicKey!);
                    setThisEndpoint((await currentSubscription())?.endpoint ?? null);
                  },
                  "This device now gets push notifications.",
                )
              }
            >
              Get push notifications on this device
            </Button>
          ) : null}
          <Button busy={busy === "test"} onClick={() => void act("test", () => api.sendTest(), "Test notification sent; see below how it went.")}>
            Send a test notification
          </Button>
        </div>
      </Card>

      <Card>
        <h2 className="card-title">Recent notifications</h2>
        {view.recent.length === 0 ? (
          <p className="muted">Nothing sent yet.</p>
        ) : (
          <ul className="notify-list" aria-label="Recent notifications">
            {view.recent.map((n) => (
              <li key={n.id} className={`notify-item notify-${n.status}`}>
                <div className="notify-item-main">
                  <strong>{n.body}</strong>
                  <span className="muted">
                    {n.channel === "push" ? `Push to ${n.targetLabel}` : "Email"} · <RelativeTime iso={n.createdAt} />
                  </span>
                  <StatusPill
                    tone={n.status === "delivered" ? "success" : n.status === "pending" ? "waiting" : n.status === "skipped" ? "neutral" : "danger"}
                    icon={n.status === "delivered" ? "checkCircle" : n.status === "pending" ? "clock" : n.status === "skipped" ? "info" : "alert"}
                    label={`${STATUS_WORDS[n.status]}${n.attempts > 1 ? ` after ${n.attempts} tries` : ""}${
                      n.status === "pending" && n.nextAttemptAt ? ` · next try ${relativeTime(n.nextAttemptAt)}` : ""
                    }${n.lastError && n.status !== "delivered" ? ` — ${n.lastError}` : ""}`}
                  />
                </div>
              </li>
            ))}
          </ul>
        )}
      </Card>
    </>
  );
}
