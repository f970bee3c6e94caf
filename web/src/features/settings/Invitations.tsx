// Settings: owners invite people into the workspace, or into a project with a role (project
// owners into theirs); anyone joins another workspace with a code.

import { useCallback, useEffect, useId, useMemo, useState, type FormEvent } from "react";
import { ApiError } from "../../api/client";
import { fullTime } from "../../lib/time";
import { useSession } from "../auth/session";
import { invitationLink, type CreatedInvitation, type Invitation } from "../auth/api";
import { Button, Card, CopyButton } from "../../ui";
import { PeopleApi, type ProjectRole, type ProjectSummary } from "./api";

const ROLE_LABEL: Record<ProjectRole, string> = { viewer: "Viewer", editor: "Editor", owner: "Owner" };

const STATUS: Record<Invitation["status"], string> = { open: "Not used yet", used: "Used or revoked", expired: "Expired" };

export function InviteSomeone({
  workspaceId,
  workspaceName,
  isOwner,
}: {
  workspaceId: string;
  workspaceName: string;
  /** A workspace owner invites into the workspace or any project; others into projects they own. */
  isOwner: boolean;
}) {
  const { auth, transport } = useSession();
  const people = useMemo(() => new PeopleApi(transport), [transport]);
  const titleId = useId();
  const intoId = useId();
  const roleId = useId();
  const [created, setCreated] = useState<CreatedInvitation | null>(null);
  const [invitations, setInvitations] = useState<Invitation[]>([]);
  const [projects, setProjects] = useState<ProjectSummary[]>([]);
  const [into, setInto] = useState("");
  const [role, setRole] = useState<ProjectRole>("viewer");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const invitable = projects.filter((p) => isOwner || p.role === "owner");
  const mayInvite = isOwner || invitable.length > 0;
  const target = into || (isOwner ? "" : (invitable[0]?.id ?? ""));

  const load = useCallback(async () => {
    try {
      const found = (await people.projects(workspaceId)).projects;
      setProjects(found);
      if (isOwner || found.some((p) => p.role === "owner")) {
        setInvitations((await auth.invitations(workspaceId)).invitations);
      }
    } catch (err) {
      setError((err as ApiError).message);
    }
  }, [auth, people, workspaceId, isOwner]);

  useEffect(() => {
    void load();
  }, [load]);

  async function invite() {
    setBusy(true);
    setError(null);
    try {
      setCreated(await auth.createInvitation(workspaceId, target ? { projectId: target, projectRole: role } : {}));
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

  if (!mayInvite) return null;
  const projectName = (id: string | null) => projects.find((p) => p.id === id)?.name ?? id;
  const open = invitations.filter((i) => i.status === "open");
  return (
    <Card aria-labelledby={titleId}>
      <h2 className="card-title" id={titleId}>
        Invite people
      </h2>
      <p className="muted">
        An invitation lets one person create an account (or use theirs) and join {workspaceName}
        {invitable.length > 0 ? ", and a project with the role you choose" : ""}. It works once and expires after a
        week.
      </p>
      {invitable.length > 0 ? (
        <div className="inline-form">
          <div className="field">
            <label htmlFor={intoId}>Invite into</label>
            <select id={intoId} value={target} onChange={(e) => setInto(e.target.value)}>
              {isOwner ? <option value="">The workspace only</option> : null}
              {invitable.map((p) => (
                <option key={p.id} value={p.id}>
                  Project {p.name}
                </option>
              ))}
            </select>
          </div>
          {target ? (
            <div className="field">
              <label htmlFor={roleId}>Role in the project</label>
              <select id={roleId} value={role} onChange={(e) => setRole(e.target.value as ProjectRole)}>
                {(Object.keys(ROLE_LABEL) as ProjectRole[]).map((r) => (
                  <option key={r} value={r}>
                    {ROLE_LABEL[r]}
                  </option>
                ))}
              </select>
            </div>
          ) : null}
        </div>
      ) : null}
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
          {created.projectId && created.projectRole ? (
            <p>
              It also makes them {ROLE_LABEL[created.projectRole].toLowerCase()} of project{" "}
              {projectName(created.projectId)}.
            </p>
          ) : null}
          <p className="field-hint">Shown only now. Expires {fullTime(created.expiresAt)}.</p>
        </div>
      ) : null}
      {open.length > 0 ? (
        <ul className="kv" aria-label="Open invitations">
          {open.map((i) => (
            <li key={i.id} className="kv-row">
              <span>
                {i.projectId && i.projectRole
                  ? `Project ${projectName(i.projectId)} as ${ROLE_LABEL[i.projectRole].toLowerCase()} · `
                  : ""}
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
