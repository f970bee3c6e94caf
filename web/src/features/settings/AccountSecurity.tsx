// Settings: change the password (the current one is needed) and sign out other sessions.

import { useId, useState, type FormEvent } from "react";
import { ApiError } from "../../api/client";
import { useSession } from "../auth/session";
import { Button, Card } from "../../ui";

function sessionsText(n: number): string {
  if (n === 0) return "No other session was signed in.";
  return n === 1 ? "1 other session was signed out." : `${n} other sessions were signed out.`;
}

export function AccountSecurity() {
  const { auth } = useSession();
  const currentId = useId();
  const newId = useId();
  const hintId = useId();
  const [current, setCurrent] = useState("");
  const [next, setNext] = useState("");
  const [busy, setBusy] = useState<"password" | "others" | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);

  async function changePassword(e: FormEvent) {
    e.preventDefault();
    setBusy("password");
    setError(null);
    setDone(null);
    try {
      const result = await auth.changePassword(current, next);
      setCurrent("");
      setNext("");
      setDone(`Password changed. ${sessionsText(result.signedOutSessions)}`);
    } catch (err) {
      setError((err as ApiError).message);
    } finally {
      setBusy(null);
    }
  }

  async function signOutOthers() {
    setBusy("others");
    setError(null);
    setDone(null);
    try {
      const result = await auth.signOutOthers();
      setDone(sessionsText(result.signedOutSessions));
    } catch (err) {
      setError((err as ApiError).message);
    } finally {
      setBusy(null);
    }
  }

  return (
    <Card aria-labelledby={`${currentId}-title`}>
      <h2 className="card-title" id={`${currentId}-title`}>
        Password and sessions
      </h2>
      <form onSubmit={changePassword} className="auth-form">
        <div className="field">
          <label htmlFor={currentId}>Current password</label>
          <input
            id={currentId}
            type="password"
            autoComplete="current-password"
            value={current}
            onChange={(e) => setCurrent(e.target.value)}
            required
          />
        </div>
        <div className="field">
          <label htmlFor={newId}>New password</label>
          <input
            id={newId}
            type="password"
            autoComplete="new-password"
            value={next}
            onChange={(e) => setNext(e.target.value)}
            aria-describedby={hintId}
            required
          />
          <p id={hintId} className="field-hint">
            At least 8 characters; a few uncommon words make a good one. Your other sessions are signed out.
          </p>
        </div>
        <Button type="submit" variant="primary" busy={busy === "password"}>
          {busy === "password" ? "Changing…" : "Change password"}
        </Button>
      </form>
      <p className="muted">Signed in somewhere you no longer use, or lost a device?</p>
      <Button icon="signOut" busy={busy === "others"} onClick={signOutOthers}>
        {busy === "others" ? "Signing out…" : "End my other sessions"}
      </Button>
      {error ? (
        <p className="field-error" role="alert">
          {error}
        </p>
      ) : null}
      {done ? <p role="status">{done}</p> : null}
    </Card>
  );
}
