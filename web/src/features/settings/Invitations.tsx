// Settings: owners invite people into the workspace; anyone joins another with a code.

import { useCallback, useEffect, useId, useState, type FormEvent } from "react";
import { ApiError } from "../../api/client";
import { fullTime } from "../../lib/time";
import { useSession } from "../auth/session";
import { invitationLink, type CreatedInvitation, type Invitation } from "../auth/api";
import { Button, Card, CopyButton } from "../../ui";

const STATUS: Record<Invitation["status"], string> = { open: "Not used yet", used: "Used or revoked", expired: "Expired" };

export function InviteSomeone({ workspaceId, workspaceName }: { workspaceId: string; workspaceName: string }) {
  const { auth } = useSession();
  const titleId = useId();
  const [created, setCreated] = useState<CreatedInvitation | null>(null);
  const [invitations, setInvitations] = useState<Invitation[]>([]);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const load = useCallback(async () => {
    try {
      setInvitations((await auth.invitations(workspaceId)).invitations);
    } catch (err) {
      setError((err as ApiError).message);
    }
  }, [auth, workspaceId]);

  useEffect(() => {
    void load();
  }, [load]);

  async function invite() {
    setBusy(true);
    setError(null);
    try {
      setCreated(await auth.createInvitation(workspaceId));
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
      await auth.revokeInvitation(workspaceId, id);
      if (created?.id === id) setCreated(null);
      await load();
    } catch (err) {
      setError((err as ApiError).message);
    }
  }

  const open = invitations.filter((i) => i.status === "open");
  return (
    <Card aria-labelledby={titleId}>
      <h2 className="card-title" id={titleId}>
        Invite people
      </h2>
      <p className="muted">
        An invitation lets one person create an account (or use theirs) and join {workspaceName}. It works once and
        expires after a week.
      </p>
      <Button icon="plus" busy={busy} onClick={invite}>
        {busy ? "Making an invitation…" : "Make an invitation"}
      </Button>
      {created ? (
        <div className="field" data-testid="new-invitation">
          <p>
            Invitation code <code>{created.code}</code> <CopyButton text={created.code} what="invitation code" />
          </p>
          <p>
            Or send this link: <code>{invitationLink(created.code)}</code>{" "}
            <CopyButton text={invitationLink(created.code)} label="Copy link" what="invitation link" />
          </p>
          <p className="field-hint">Shown only now. Expires {fullTime(created.expiresAt)}.</p>
        </div>
      ) : null}
      {open.length > 0 ? (
        <ul className="kv" aria-label="Open invitations">
          {open.map((i) => (
            <li key={i.id} className="kv-row">
              <span>
                {STATUS[i.status]} · made {fullTime(i.createdAt)} · expires {fullTime(i.expiresAt)}
              </span>
              <Button size="sm" variant="ghost" onClick={() => void revoke(i.id)}>
                Revoke
              </Button>
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

export function JoinWorkspace() {
  const session = useSession();
  const fieldId = useId();
  const [code, setCode] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  async function join(e: FormEvent) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await session.acceptInvitation(code.trim());
      setCode("");
    } catch (err) {
      setError((err as ApiError).message);
    } finally {
      setBusy(false);
    }
  }

  return (
    <form onSubmit={join} className="auth-form">
      <div className="field">
        <label htmlFor={fieldId}>Join a workspace with an invitation code</label>
        <input id={fieldId} value={code} onChange={(e) => setCode(e.target.value)} autoComplete="off" required />
      </div>
      <Button type="submit" busy={busy}>
        {busy ? "Joining…" : "Join"}
      </Button>
      {error ? (
        <p className="field-error" role="alert">
          {error}
        </p>
      ) : null}
    </form>
  );
}
