// Settings → Accounts: the person's own sign-in on each outside system the hub's agents
// reach — bound, expired or not bound — with Bind (the system's sign-in page, or a username
// and password given once) and Unbind.

import { useCallback, useEffect, useId, useMemo, useState, type FormEvent } from "react";
import { ApiError } from "../../api/client";
import { fullTime } from "../../lib/time";
import { navigate, useLocation, withQuery } from "../../lib/router";
import { useSession } from "../auth/session";
import { Banner, Button, Card, StatusPill, type IconName, type Tone } from "../../ui";
import { PeopleApi, type AccountBinding } from "./api";
import "./settings.css";

const BIND_ERRORS: Record<string, string> = {
  flow_expired: "The sign-in took too long or was already used. Try binding again.",
  signed_out: "You were signed out of LineUp while signing in there. Sign in and bind again.",
  other_person: "That sign-in was started by someone else. Bind from your own settings.",
  not_member: "You are not a member of that workspace any more.",
  denied: "The sign-in was cancelled at the system; nothing was bound.",
  refused: "The system did not accept the sign-in; nothing was bound.",
  unavailable: "The system could not be reached; nothing was bound. Try again later.",
  unknown_system: "That system is no longer on this hub.",
};

function standing(a: AccountBinding): { tone: Tone; icon: IconName; label: string } {
  if (a.authKind === "apikey") {
    return a.status === "bound"
      ? { tone: "success", icon: "key", label: "Bound (operator key)" }
      : { tone: "neutral", icon: "circle", label: "Not set up: ask the hub's operator" };
  }
  if (a.status === "bound") {
    return { tone: "success", icon: "checkCircle", label: a.account ? `Bound as ${a.account}` : "Bound" };
  }
  if (a.status === "expired") return { tone: "danger", icon: "xCircle", label: "Expired: bind again" };
  return { tone: "neutral", icon: "circle", label: "Not bound" };
}

export function Accounts({
  workspaceId,
  openUrl = (url: string) => window.location.assign(url),
}: {
  workspaceId: string;
  /** Sends the browser to the system's sign-in page. */
  openUrl?: (url: string) => void;
}) {
  const { transport } = useSession();
  const people = useMemo(() => new PeopleApi(transport), [transport]);
  const loc = useLocation();
  const titleId = useId();
  const [accounts, setAccounts] = useState<AccountBinding[] | null>(null);
  const [asking, setAsking] = useState<string | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [news, setNews] = useState<{ tone: "success" | "danger"; text: string } | null>(null);

  const load = useCallback(async () => {
    try {
      setAccounts((await people.accounts(workspaceId)).accounts);
    } catch (err) {
      setError((err as ApiError).message);
    }
  }, [people, workspaceId]);

  useEffect(() => {
    void load();
  }, [load]);

  // back from a system's sign-in page: say how it went, once
  const bound = loc.search.get("bound");
  const bindError = loc.search.get("bindError");
  useEffect(() => {
    if (!bound && !bindError) return;
    setNews(
      bound
        ? { tone: "success", text: `Your account on ${bound} is bound.` }
        : { tone: "danger", text: BIND_ERRORS[bindError ?? ""] ?? "Nothing was bound." },
    );
    navigate(withQuery(loc, { bound: null, bindError: null, provider: null }), { replace: true });
  }, [bound, bindError, loc]);

  const keyOf = (a: AccountBinding) => `${a.providerId}/${a.instance}`;

  async function bind(a: AccountBinding) {
    setError(null);
    setNews(null);
    if (a.authKind === "password-exchange") {
      setAsking(keyOf(a));
      return;
    }
    setBusy(keyOf(a));
    try {
      const { authorizationUrl } = await people.startOAuth(workspaceId, a.providerId, a.instance);
      openUrl(authorizationUrl);
    } catch (err) {
      setError((err as ApiError).message);
      setBusy(null);
    }
  }

  async function unbind(a: AccountBinding) {
    setError(null);
    setNews(null);
    setBusy(keyOf(a));
    try {
      await people.unbind(workspaceId, a.providerId, a.instance);
      await load();
    } catch (err) {
      setError((err as ApiError).message);
    } finally {
      setBusy(null);
    }
  }

  async function exchanged(a: AccountBinding) {
    setAsking(null);
    setNews({ tone: "success", text: `Your account on ${a.providerName} is bound.` });
    await load();
  }

  return (
    <Card aria-labelledby={titleId}>
      <h2 className="card-title" id={titleId}>
        Accounts
      </h2>
      <p className="muted">
        Agents reach some systems as you: bind your own account on each, once. The hub keeps only what the system gives
        back, sealed; unbind to remove it.
      </p>
      {news ? <Banner tone={news.tone}>{news.text}</Banner> : null}
      {accounts === null ? null : accounts.length === 0 ? (
        <p className="muted">No system on this hub needs you to sign in.</p>
      ) : (
        <ul className="kv accounts-list" aria-label="Your accounts on outside systems">
          {accounts.map((a) => {
            const s = standing(a);
            const name = `${a.providerName} (${a.instance})`;
            const perPerson = a.authKind !== "apikey";
            return (
              <li key={keyOf(a)} className="kv-row account-row">
                <span>
                  <strong>{a.providerName}</strong> · {a.instance} <StatusPill tone={s.tone} icon={s.icon} label={s.label} />
                  {a.status === "bound" && a.boundAt && perPerson ? ` · since ${fullTime(a.boundAt)}` : ""}
                </span>
                {perPerson ? (
                  <span className="account-actions">
                    {a.status !== "bound" ? (
                      <Button size="sm" aria-label={`Bind ${name}`} busy={busy === keyOf(a)} onClick={() => void bind(a)}>
                        {a.status === "expired" ? "Bind again" : "Bind"}
                      </Button>
                    ) : null}
                    {a.status !== "not_bound" ? (
                      <Button
                        size="sm"
                        variant="ghost"
                        aria-label={`Unbind ${name}`}
                        busy={busy === keyOf(a)}
                        onClick={() => void unbind(a)}
                      >
                        Unbind
                      </Button>
                    ) : null}
                  </span>
                ) : null}
                {asking === keyOf(a) ? (
                  <PasswordForm
                    account={a}
                    people={people}
                    workspaceId={workspaceId}
                    onBound={() => void exchanged(a)}
                    onCancel={() => setAsking(null)}
                  />
                ) : null}
              </li>
            );
          })}
        </ul>
      )}
      {error ? (
        <p className="field-error" role="alert">
          {error}
        </p>
      ) : null}
    </Card>
  );
}

function PasswordForm({
  account,
  people,
  workspaceId,
  onBound,
  onCancel,
}: {
  account: AccountBinding;
  people: PeopleApi;
  workspaceId: string;
  onBound: () => void;
  onCancel: () => void;
}) {
  const userId = useId();
  const passwordId = useId();
  const [username, setUsername] = useState("");
  const [password, setPassword] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  async function submit(e: FormEvent) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await people.bindPassword(workspaceId, account.providerId, account.instance, username, password);
      setPassword("");
      onBound();
    } catch (err) {
      setPassword("");
      setError((err as ApiError).message);
      setBusy(false);
    }
  }

  return (
    <form onSubmit={submit} className="auth-form account-form" aria-label={`Sign in to ${account.providerName}`}>
      <div className="field">
        <label htmlFor={userId}>Username on {account.providerName}</label>
        <input id={userId} value={username} onChange={(e) => setUsername(e.target.value)} autoComplete="off" required />
      </div>
      <div className="field">
        <label htmlFor={passwordId}>Password on {account.providerName}</label>
        <input
          id={passwordId}
          type="password"
          value={password}
          onChange={(e) => setPassword(e.target.value)}
          autoComplete="off"
          required
        />
        <p className="field-hint">Given to {account.providerName} once, for a sign-in; LineUp does not keep it.</p>
      </div>
      <span className="account-actions">
        <Button type="submit" variant="primary" busy={busy}>
          {busy ? "Binding…" : "Bind account"}
        </Button>
        <Button type="button" variant="ghost" onClick={onCancel}>
          Cancel
        </Button>
      </span>
      {error ? (
        <p className="field-error" role="alert">
          {error}
        </p>
      ) : null}
    </form>
  );
}
