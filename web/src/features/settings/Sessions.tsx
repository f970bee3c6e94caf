// Settings: where this person is signed in — this device marked — with End per session and
// End all others (a lost phone, a shared computer). Ending one ends its tokens at once.

import { useCallback, useEffect, useId, useMemo, useState } from "react";
import { ApiError } from "../../api/client";
import { fullTime } from "../../lib/time";
import { useSession } from "../auth/session";
import { Button, Card } from "../../ui";
import { PeopleApi, type SignedInSession } from "./api";
import "./settings.css";

export function Sessions() {
  const { transport } = useSession();
  const people = useMemo(() => new PeopleApi(transport), [transport]);
  const titleId = useId();
  const [sessions, setSessions] = useState<SignedInSession[]>([]);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);

  const load = useCallback(async () => {
    try {
      setSessions((await people.sessions()).sessions);
    } catch (err) {
      setError((err as ApiError).message);
    }
  }, [people]);

  useEffect(() => {
    void load();
  }, [load]);

  async function act(work: () => Promise<string | null>) {
    setBusy(true);
    setError(null);
    setDone(null);
    try {
      setDone(await work());
      await load();
    } catch (err) {
      setError((err as ApiError).message);
    } finally {
      setBusy(false);
    }
  }

  const others = sessions.filter((s) => !s.current).length;
  return (
    <Card aria-labelledby={titleId}>
      <h2 className="card-title" id={titleId}>
        Sessions
      </h2>
      <p className="muted">Where you are signed in. Ending a session signs that device out at once.</p>
      <ul className="kv" aria-label="Your sessions">
        {sessions.map((s) => (
          <li key={s.id} className="kv-row" data-testid="session">
            <span>
              <strong>{s.userAgent || "Unknown device"}</strong>
              {s.current ? " · this device" : ""} · signed in {fullTime(s.createdAt)} · last used{" "}
              {fullTime(s.lastUsedAt)}
            </span>
            {s.current ? null : (
              <Button
                size="sm"
                variant="ghost"
                disabled={busy}
                aria-label={`End the session of ${s.userAgent || "an unknown device"}`}
                onClick={() =>
                  void act(async () => {
                    await people.endSession(s.id);
                    return "That session was ended.";
                  })
                }
              >
                End
              </Button>
            )}
          </li>
        ))}
      </ul>
      {others > 0 ? (
        <Button
          variant="secondary"
          disabled={busy}
          onClick={() =>
            void act(async () => {
              const { signedOutSessions: n } = await people.endOtherSessions();
              return n === 1 ? "1 other session was ended." : `${n} other sessions were ended.`;
            })
          }
        >
          End all others
        </Button>
      ) : null}
      {done ? (
        <p className="field-hint" role="status">
          {done}
        </p>
      ) : null}
      {error ? (
        <p className="field-error" role="alert">
          {error}
        </p>
      ) : null}
    </Card>
  );
}
