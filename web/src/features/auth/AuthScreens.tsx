// Sign up (creates the first workspace, or joins the one of an invitation), sign in, and
// "create a workspace" for people with none.

import { useId, useState, type FormEvent, type ReactNode } from "react";
import { ApiError } from "../../api/client";
import { Link, navigate, useLocation } from "../../lib/router";
import { useTitle } from "../../lib/useTitle";
import { Banner, Button } from "../../ui";
import { useSession } from "./session";
import "./auth.css";

/** The frame of the screens before the app (also direct mode's token screen). */
export function AuthFrame({ title, subtitle, children, footer }: { title: string; subtitle: string; children: ReactNode; footer?: ReactNode }) {
  return (
    <div className="auth">
      <main className="auth-card" id="main">
        <div className="brand brand-lg">
          <img src="/icon.svg" alt="" width={32} height={32} />
          <span>LineUp</span>
        </div>
        <h1 className="auth-title">{title}</h1>
        <p className="auth-sub">{subtitle}</p>
        {children}
        {footer ? <div className="auth-footer">{footer}</div> : null}
      </main>
    </div>
  );
}

function Field({
  label,
  type = "text",
  value,
  onChange,
  autoComplete,
  hint,
  autoFocus,
  optional = false,
}: {
  optional?: boolean;
  label: string;
  type?: string;
  value: string;
  onChange: (v: string) => void;
  autoComplete?: string;
  hint?: string;
  autoFocus?: boolean;
}) {
  const id = useId();
  const hintId = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        type={type}
        value={value}
        autoComplete={autoComplete}
        autoFocus={autoFocus}
        onChange={(e) => onChange(e.target.value)}
        aria-describedby={hint ? hintId : undefined}
        required={!optional}
      />
      {hint ? (
        <p id={hintId} className="field-hint">
          {hint}
        </p>
      ) : null}
    </div>
  );
}

function afterAuth(next: string | null) {
  navigate(next && next.startsWith("/") && !next.startsWith("//") ? next : "/inbox", { replace: true });
}

export function SignIn({ next, expired }: { next: string | null; expired?: boolean }) {
  const session = useSession();
  const signup = session.options?.signup ?? "open";
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  useTitle("Sign in");
  async function submit(e: FormEvent) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await session.signIn(email.trim(), password);
      afterAuth(next);
    } catch (err) {
      setError((err as ApiError).message);
      setBusy(false);
    }
  }
  return (
    <AuthFrame
      title="Sign in"
      subtitle="See and steer the agents you already run."
      footer={
        signup === "closed" ? (
          "New here? Ask whoever runs this hub for an account."
        ) : signup === "invite" ? (
          <>
            Invited? <Link to="/signup">Create your account with the code</Link>
          </>
        ) : (
          <>
            New here? <Link to="/signup">Create an account</Link>
          </>
        )
      }
    >
      {expired ? (
        <Banner tone="info" title="Your session ended">
          Sign in again to continue.
        </Banner>
      ) : null}
      <form onSubmit={submit} className="auth-form">
        <Field label="Email" type="email" value={email} onChange={setEmail} autoComplete="email" autoFocus />
        <Field label="Password" type="password" value={password} onChange={setPassword} autoComplete="current-password" />
        {error ? (
          <p className="field-error" role="alert">
            {error}
          </p>
        ) : null}
        <Button type="submit" variant="primary" busy={busy} className="btn-block">
          {busy ? "Signing in…" : "Sign in"}
        </Button>
      </form>
    </AuthFrame>
  );
}

export function SignUp() {
  const session = useSession();
  const loc = useLocation();
  const signup = session.options?.signup ?? "open";
  const firstAccount = session.options?.hasAccounts === false;
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [displayName, setDisplayName] = useState("");
  const [workspaceName, setWorkspaceName] = useState("");
  const [invitationCode, setInvitationCode] = useState(loc.search.get("invite") ?? "");
  const [askCode, setAskCode] = useState(loc.search.has("invite"));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  useTitle("Create your account");
  const showCode = askCode || signup === "invite";
  const invited = showCode && invitationCode.trim() !== "";
  const footer = (
    <>
      Already have an account? <Link to="/signin">Sign in</Link>
    </>
  );
  if (signup === "closed") {
    return (
      <AuthFrame title="Create your account" subtitle="This hub does not take sign-ups." footer={footer}>
        <Banner tone="info" title="Accounts come from whoever runs this hub">
          Ask them to create yours (<code>lineup user create</code>), then sign in.
        </Banner>
      </AuthFrame>
    );
  }
  async function submit(e: FormEvent) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await session.signUp({
        email: email.trim(),
        password,
        displayName: displayName.trim(),
        workspaceName: invited ? "" : workspaceName.trim(),
        ...(invited ? { invitationCode: invitationCode.trim() } : {}),
      });
      navigate("/inbox", { replace: true });
    } catch (err) {
      setError((err as ApiError).message);
      setBusy(false);
    }
  }
  const subtitle = invited
    ? "You join the workspace that invited you."
    : firstAccount
      ? "This hub is new: create the first account. Your first workspace is created with it."
      : "Your first workspace is created with it.";
  return (
    <AuthFrame title="Create your account" subtitle={subtitle} footer={footer}>
      <form onSubmit={submit} className="auth-form">
        <Field label="Display name" value={displayName} onChange={setDisplayName} autoComplete="name" autoFocus />
        <Field label="Email" type="email" value={email} onChange={setEmail} autoComplete="email" />
        <Field
          label="Password"
          type="password"
          value={password}
          onChange={setPassword}
          autoComplete="new-password"
          hint="At least 8 characters; a few uncommon words make a good one."
        />
        {showCode ? (
          <Field
            label={signup === "invite" ? "Invitation code" : "Invitation code (optional)"}
            value={invitationCode}
            onChange={setInvitationCode}
            autoComplete="off"
            optional={signup !== "invite"}
            hint="From a workspace owner; you join their workspace."
          />
        ) : (
          <button type="button" className="linkish" onClick={() => setAskCode(true)}>
            I have an invitation code
          </button>
        )}
        {!showCode ? (
          <Field
            label="Workspace name (optional)"
            value={workspaceName}
            onChange={setWorkspaceName}
            optional
            hint="For example your team or project."
          />
        ) : null}
        {error ? (
          <p className="field-error" role="alert">
            {error}
          </p>
        ) : null}
        <Button type="submit" variant="primary" busy={busy} className="btn-block">
          {busy ? "Creating…" : "Create account"}
        </Button>
      </form>
    </AuthFrame>
  );
}

export function CreateWorkspace() {
  const session = useSession();
  const [name, setName] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  useTitle("Create a workspace");
  async function submit(e: FormEvent) {
    e.preventDefault();
    if (!name.trim()) {
      setError("Give the workspace a name.");
      return;
    }
    setBusy(true);
    setError(null);
    try {
      await session.createWorkspace(name.trim());
      navigate("/inbox", { replace: true });
    } catch (err) {
      setError((err as ApiError).message);
      setBusy(false);
    }
  }
  return (
    <AuthFrame
      title="Create a workspace"
      subtitle="You are not in any workspace yet. A workspace holds your agents, conversations and tasks."
      footer={
        <button type="button" className="linkish" onClick={() => void session.signOut()}>
          Sign out
        </button>
      }
    >
      <form onSubmit={submit} className="auth-form">
        <Field label="Workspace name" value={name} onChange={setName} autoFocus />
        {error ? (
          <p className="field-error" role="alert">
            {error}
          </p>
        ) : null}
        <Button type="submit" variant="primary" busy={busy} className="btn-block">
          {busy ? "Creating…" : "Create workspace"}
        </Button>
      </form>
    </AuthFrame>
  );
}
