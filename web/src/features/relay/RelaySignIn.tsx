// Relay mode's sign-in: the TangSengDaoDao account that talks to the agent through WuKongIM.
// Step one signs in (`POST /v1/user/login`) and asks the route API where WuKongIM is; step two
// names the agent (its uid) to open. Nobody needs a public address, only the IM deployment.

import { useId, useState, type FormEvent } from "react";
import type { ApiError } from "../../api/client";
import { useTitle } from "../../lib/useTitle";
import { Banner, Button } from "../../ui";
import { AuthFrame } from "../auth/AuthScreens";
import type { RelaySession } from "./relaySession";
import { TsddApi, type TsddLogin } from "./tsdd";

export interface RelaySignInProps {
  /** From the opened address (`#relay=…&agent=…`) or the last session. */
  initialApi?: string;
  initialAgent?: string | null;
  onSignedIn: (session: RelaySession) => void;
  /** Why the remembered session could not go on. */
  notice?: string | null;
  makeApi?: (base: string, token?: string) => TsddApi;
}

export function RelaySignIn({ initialApi = "", initialAgent = null, onSignedIn, notice, makeApi }: RelaySignInProps) {
  const make = makeApi ?? ((base: string, token?: string) => new TsddApi(base, token ?? null));
  const [api, setApi] = useState(initialApi);
  const [username, setUsername] = useState("");
  const [password, setPassword] = useState("");
  const [agent, setAgent] = useState(initialAgent ?? "");
  const [ws, setWs] = useState("");
  const [login, setLogin] = useState<TsddLogin | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const errorId = useId();
  useTitle("Open an agent through a relay");

  async function signIn(e: FormEvent) {
    e.preventDefault();
    if (!api.trim() || !username.trim() || !password) {
      setError("Enter the IM server's API address, your username and your password.");
      return;
    }
    setBusy(true);
    setError(null);
    try {
      const client = make(api.trim());
      const who = await client.login(username.trim(), password);
      const address = await client.route(who.uid);
      setLogin(who);
      setWs(address);
      setPassword("");
    } catch (err) {
      setError((err as ApiError).message);
    } finally {
      setBusy(false);
    }
  }

  async function open(e: FormEvent) {
    e.preventDefault();
    if (!login) return;
    if (!agent.trim()) {
      setError("Enter the agent's uid: the relay host prints it where the agent runs.");
      return;
    }
    if (!/^wss?:\/\//.test(ws.trim())) {
      setError("The WuKongIM address starts with ws:// or wss://.");
      return;
    }
    setBusy(true);
    setError(null);
    try {
      const peer = await make(api.trim(), login.token).user(agent.trim());
      onSignedIn({
        api: api.trim(),
        ws: ws.trim(),
        uid: login.uid,
        token: login.token,
        name: login.name,
        agent: peer.uid,
        agentName: peer.name,
      });
    } catch (err) {
      const apiError = err as ApiError;
      setError(apiError.code === "not_found" ? `The IM server has no user ${agent.trim()}.` : apiError.message);
      setBusy(false);
    }
  }

  const errorLine = error ? (
    <p id={errorId} className="field-error" role="alert">
      {error}
    </p>
  ) : null;

  return (
    <AuthFrame
      title={login ? "Open which agent?" : "Sign in through a relay"}
      subtitle={
        login
          ? `Signed in to the IM server as ${login.name}. The agent is reached through WuKongIM.`
          : "Your agent is reached through a WuKongIM + TangSengDaoDao server (relay mode)."
      }
      footer={
        login ? (
          <button type="button" className="linkish" onClick={() => { setLogin(null); setError(null); }}>
            Use another account
          </button>
        ) : undefined
      }
    >
      {notice ? (
        <Banner tone="info" title="Sign in again">
          {notice}
        </Banner>
      ) : null}
      {login ? (
        <form onSubmit={open} className="auth-form" noValidate aria-label="Open an agent">
          <TextField label="Agent uid" name="agent" value={agent} onChange={setAgent} autoFocus hint="The agent's user id on the IM server." describedBy={error ? errorId : undefined} />
          <TextField label="WuKongIM address" name="ws" value={ws} onChange={setWs} hint="From the IM server's route API; change it only if told to." />
          {errorLine}
          <Button type="submit" variant="primary" busy={busy} className="btn-block">
            {busy ? "Opening…" : "Open agent"}
          </Button>
        </form>
      ) : (
        <form onSubmit={signIn} className="auth-form" noValidate aria-label="Sign in through a relay">
          <TextField label="IM server API address" name="api" value={api} onChange={setApi} autoFocus={!initialApi} hint="TangSengDaoDao's API, e.g. https://im.example.com/api" type="url" />
          <TextField label="Username" name="username" value={username} onChange={setUsername} autoComplete="username" autoFocus={!!initialApi} />
          <TextField label="Password" name="password" value={password} onChange={setPassword} type="password" autoComplete="current-password" describedBy={error ? errorId : undefined} />
          {errorLine}
          <Button type="submit" variant="primary" busy={busy} className="btn-block">
            {busy ? "Signing in…" : "Sign in"}
          </Button>
        </form>
      )}
    </AuthFrame>
  );
}

function TextField({
  label,
  name,
  value,
  onChange,
  type = "text",
  autoComplete = "off",
  autoFocus,
  hint,
  describedBy,
}: {
  label: string;
  name: string;
  value: string;
  onChange: (v: string) => void;
  type?: string;
  autoComplete?: string;
  autoFocus?: boolean;
  hint?: string;
  describedBy?: string;
}) {
  const id = useId();
  const hintId = useId();
  const described = [hint ? hintId : null, describedBy ?? null].filter(Boolean).join(" ") || undefined;
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        name={name}
        type={type}
        value={value}
        onChange={(e) => onChange(e.target.value)}
        autoComplete={autoComplete}
        autoCapitalize="none"
        autoCorrect="off"
        spellCheck={false}
        autoFocus={autoFocus}
        required
        aria-describedby={described}
      />
      {hint ? (
        <p id={hintId} className="field-hint">
          {hint}
        </p>
      ) : null}
    </div>
  );
}
