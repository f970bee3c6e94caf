// Settings: personal developer tokens for scripts — made here (shown once), listed, revoked.

import { useCallback, useEffect, useId, useMemo, useState, type FormEvent } from "react";
import { ApiError } from "../../api/client";
import { fullTime } from "../../lib/time";
import { useSession } from "../auth/session";
import { Button, Card, CopyButton } from "../../ui";
import { PeopleApi, type CreatedToken, type DeveloperToken, type Scope } from "./api";
import "./settings.css";

const STATUS: Record<DeveloperToken["status"], string> = { active: "Active", expired: "Expired", revoked: "Revoked" };

export function DeveloperTokens({ workspaceId, workspaceName }: { workspaceId: string; workspaceName: string }) {
  const { transport } = useSession();
  const people = useMemo(() => new PeopleApi(transport), [transport]);
  const titleId = useId();
  const nameId = useId();
  const daysId = useId();
  const [tokens, setTokens] = useState<DeveloperToken[]>([]);
  const [created, setCreated] = useState<CreatedToken | null>(null);
  const [name, setName] = useState("");
  const [write, setWrite] = useState(false);
  const [onlyHere, setOnlyHere] = useState(true);
  const [days, setDays] = useState("90");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const load = useCallback(async () => {
    try {
      setTokens((await people.tokens()).tokens);
    } catch (err) {
      setError((err as ApiError).message);
    }
  }, [people]);

  useEffect(() => {
    void load();
  }, [load]);

  async function create(e: FormEvent) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const scopes: Scope[] = write ? ["read", "write"] : ["read"];
      setCreated(
        await people.createToken({
          name: name.trim(),
          scopes,
          ...(days.trim() ? { expiresInDays: Number(days) } : {}),
          ...(onlyHere ? { workspaceId } : {}),
        }),
      );
      setName("");
      await load();
    } catch (err) {
      setError((err as ApiError).message);
    } finally {
      setBusy(false);
    }
  }

  async function revoke(id: string) {
    setError(null);
    try {
      await people.revokeToken(id);
      if (created?.id === id) setCreated(null);
      await load();
    } catch (err) {
      setError((err as ApiError).message);
    }
  }

  return (
    <Card aria-labelledby={titleId}>
      <h2 className="card-title" id={titleId}>
        Developer tokens
      </h2>
      <p className="muted">
        A token lets a script act as you on the hub's API (<code>Authorization: Bearer lut_…</code>). With only
        “read” it can look but not change anything. It cannot manage tokens, passwords or sessions.
      </p>
      <form onSubmit={create} className="auth-form">
        <div className="field">
          <label htmlFor={nameId}>Token name</label>
          <input id={nameId} value={name} onChange={(e) => setName(e.target.value)} maxLength={100} required />
        </div>
        <label className="check">
          <input type="checkbox" checked={write} onChange={(e) => setWrite(e.target.checked)} />
          Allow changes too (write), not only reading
        </label>
        <label className="check">
          <input type="checkbox" checked={onlyHere} onChange={(e) => setOnlyHere(e.target.checked)} />
          Only for {workspaceName}
        </label>
        <div className="field">
          <label htmlFor={daysId}>Expires after (days; empty: never)</label>
          <input
            id={daysId}
            type="number"
            min={1}
            max={366}
            step={1}
            inputMode="numeric"
            value={days}
            onChange={(e) => setDays(e.target.value)}
          />
        </div>
        <Button type="submit" icon="plus" busy={busy}>
          {busy ? "Making a token…" : "Make a token"}
        </Button>
      </form>
      {created ? (
        <div className="field" data-testid="new-token">
          <p className="token-once">
            <code>{created.token}</code> <CopyButton text={created.token} what="developer token" />
          </p>
          <p className="field-hint">Shown only now: copy it into your script's secrets.</p>
        </div>
      ) : null}
      {tokens.length > 0 ? (
        <ul className="kv" aria-label="Your developer tokens">
          {tokens.map((t) => (
            <li key={t.id} className="kv-row">
              <span>
                <strong>{t.name}</strong> · {t.scopes.join(" + ")} · {STATUS[t.status]} · made {fullTime(t.createdAt)}
                {t.lastUsedAt ? ` · last used ${fullTime(t.lastUsedAt)}` : " · never used"}
                {t.expiresAt ? ` · expires ${fullTime(t.expiresAt)}` : ""}
              </span>
              {t.status === "active" ? (
                <Button size="sm" variant="ghost" onClick={() => void revoke(t.id)}>
                  Revoke
                </Button>
              ) : null}
            </li>
          ))}
        </ul>
      ) : null}
      {error ? (
        <p className="field-error" role="alert">
          {error}
        </p>
      ) : null}
    </Card>
  );
}
