// Direct mode's "sign in": the pre-shared token printed where the agent runs (`lineup direct`).

import { useId, useState, type FormEvent } from "react";
import type { ApiError } from "../../api/client";
import { useTitle } from "../../lib/useTitle";
import { Banner, Button } from "../../ui";
import { AuthFrame } from "../auth/AuthScreens";

export function TokenScreen({
  agentName,
  onToken,
  launchError,
  expired,
}: {
  agentName: string;
  /** Resolves once signed in; rejects with the hub's ApiError. */
  onToken: (token: string) => Promise<void>;
  /** Why the token in the opened address did not work. */
  launchError?: string | null;
  expired?: boolean;
}) {
  const [token, setToken] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(launchError ?? null);
  const id = useId();
  const hintId = useId();
  const errorId = useId();
  useTitle(`Open ${agentName}`);

  async function submit(e: FormEvent) {
    e.preventDefault();
    if (!token.trim()) {
      setError("Enter the token printed where the agent runs.");
      return;
    }
    setBusy(true);
    setError(null);
    try {
      await onToken(token.trim());
    } catch (err) {
      setError((err as ApiError).message);
      setBusy(false);
    }
  }

  return (
    <AuthFrame
      title={`Open ${agentName}`}
      subtitle="This agent serves LineUp itself, with no hub (direct mode)."
      footer={
        <span data-testid="direct-limits">
          Direct mode keeps nothing once the agent stops: no history beyond it, one agent, one
          person, no notifications.
        </span>
      }
    >
      {expired ? (
        <Banner tone="info" title="Your session ended">
          Enter the token again to continue.
        </Banner>
      ) : null}
      <form onSubmit={submit} className="auth-form" noValidate>
        <div className="field">
          <label htmlFor={id}>Token</label>
          <input
            id={id}
            name="token"
            type="text"
            value={token}
            onChange={(e) => setToken(e.target.value)}
            autoComplete="off"
            autoCapitalize="none"
            autoCorrect="off"
            spellCheck={false}
            autoFocus
            required
            aria-invalid={error ? true : undefined}
            aria-describedby={error ? `${hintId} ${errorId}` : hintId}
          />
          <p id={hintId} className="field-hint">
            Printed by <code>lineup direct</code> where the agent runs.
          </p>
        </div>
        {error ? (
          <p id={errorId} className="field-error" role="alert">
            {error}
          </p>
        ) : null}
        <Button type="submit" variant="primary" busy={busy} className="btn-block">
          {busy ? "Opening…" : "Open"}
        </Button>
      </form>
    </AuthFrame>
  );
}
