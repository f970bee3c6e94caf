// Settings: profile, workspace and invitations, layered settings, accounts on outside systems,
// appearance, notifications, password and sessions, developer tokens.

import { useId, useState } from "react";
import { useWorkspace } from "../../app/workspace";
import { useSession } from "../auth/session";
import { applyTheme, savedTheme, type ThemeChoice } from "../../lib/theme";
import { useTitle } from "../../lib/useTitle";
import { Link } from "../../lib/router";
import { Button, Card, Icon } from "../../ui";
import { ApiError } from "../../api/client";
import { NotificationSettings } from "../notifications/NotificationSettings";
import { Accounts } from "./Accounts";
import { AccountSecurity } from "./AccountSecurity";
import { DeveloperTokens } from "./DeveloperTokens";
import { HubCertificate } from "./HubCertificate";
import { Sessions } from "./Sessions";
import { InviteSomeone, JoinWorkspace } from "./Invitations";
import { LayeredSettings } from "./LayeredSettings";

export function SettingsView() {
  const { user, workspace } = useWorkspace();
  const session = useSession();
  const [theme, setTheme] = useState<ThemeChoice>(savedTheme);
  const [signingOut, setSigningOut] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const themeName = useId();
  useTitle("Settings");
  const workspaces = session.state.status === "signedIn" ? session.state.workspaces : [];

  function choose(t: ThemeChoice) {
    setTheme(t);
    applyTheme(t);
  }

  async function signOut() {
    setSigningOut(true);
    setError(null);
    try {
      await session.signOut();
    } catch (err) {
      setError((err as ApiError).message);
      setSigningOut(false);
    }
  }

  return (
    <div className="page settings">
      <header className="page-head">
        <h1>Settings</h1>
      </header>

      <Card>
        <h2 className="card-title">Profile</h2>
        <dl className="kv">
          <div className="kv-row">
            <dt>Display name</dt>
            <dd>{user.displayName || "—"}</dd>
          </div>
          <div className="kv-row">
            <dt>Email</dt>
            <dd>{user.email}</dd>
          </div>
        </dl>
      </Card>

      <Card>
        <h2 className="card-title">Workspace</h2>
        <dl className="kv">
          <div className="kv-row">
            <dt>Name</dt>
            <dd>{workspace.name}</dd>
          </div>
          <div className="kv-row">
            <dt>Your role</dt>
            <dd>{workspace.role}</dd>
          </div>
        </dl>
        {workspaces.length > 1 ? (
          <div className="field">
            <label htmlFor="ws-switch">Open another workspace</label>
            <select id="ws-switch" value={workspace.id} onChange={(e) => session.selectWorkspace(e.target.value)}>
              {workspaces.map((w) => (
                <option key={w.id} value={w.id}>
                  {w.name}
                </option>
              ))}
            </select>
          </div>
        ) : null}
        {session.direct ? null : <JoinWorkspace />}
      </Card>

      {session.direct ? null : (
        <InviteSomeone workspaceId={workspace.id} workspaceName={workspace.name} isOwner={workspace.role === "owner"} />
      )}

      <LayeredSettings workspaceId={workspace.id} userId={user.id} isOwner={workspace.role === "owner"} />

      {session.direct ? null : (
        <Card>
          <h2 className="card-title">Projects and policy</h2>
          <p className="muted">
            Projects, their members and roles, the rules for what agents may do, the capabilities and standing permissions.
          </p>
          <Link to="/settings/projects">
            Open Projects <Icon name="chevron" size={14} />
          </Link>
        </Card>
      )}

      {session.direct ? null : <Accounts workspaceId={workspace.id} />}

      <Card>
        <h2 className="card-title">Appearance</h2>
        <fieldset className="segmented">
          <legend>Theme</legend>
          {(
            [
              ["system", "Match system", "settings"],
              ["light", "Light", "sun"],
              ["dark", "Dark", "moon"],
            ] as const
          ).map(([value, label, icon]) => (
            <label key={value} className={`segment${theme === value ? " is-on" : ""}`}>
              <input type="radio" name={themeName} value={value} checked={theme === value} onChange={() => choose(value)} />
              <Icon name={icon} size={16} />
              {label}
            </label>
          ))}
        </fieldset>
      </Card>

      <NotificationSettings transport={session.transport} />

      {session.direct ? null : <AccountSecurity />}
      {session.direct ? null : <Sessions />}

      {session.direct ? null : <DeveloperTokens workspaceId={workspace.id} workspaceName={workspace.name} />}

      <HubCertificate />

      <Card>
        <h2 className="card-title">Session</h2>
        <p className="muted">Signed in as {user.email}.</p>
        <Button icon="signOut" busy={signingOut} onClick={signOut}>
          {signingOut ? "Signing out…" : "Sign out"}
        </Button>
        {error ? (
          <p className="field-error" role="alert">
            {error}
          </p>
        ) : null}
      </Card>
    </div>
  );
}
