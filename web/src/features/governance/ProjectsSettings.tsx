// Settings → Projects: what governance needs and nothing more. Projects and who is in them
// with which role; the rules that allow or deny capabilities; the catalogue of capabilities
// with their switches (workspace owners); standing permissions, with Revoke.

import { useId, useState, type FormEvent } from "react";
import { ApiError, newIdempotencyKey } from "../../api/client";
import type { NewRule, Policy, PolicyRule, ProjectDetail, ProjectRole, StandingPermission } from "../../api/types";
import { useWorkspace } from "../../app/workspace";
import { Link, navigate } from "../../lib/router";
import { fullTime } from "../../lib/time";
import { useResource, type Resource } from "../../lib/useResource";
import { useTitle } from "../../lib/useTitle";
import { Badge, Button, Card, EmptyState, ErrorBanner, Icon, Loading, StatusPill } from "../../ui";
import "./governance.css";

const ROLES: ProjectRole[] = ["owner", "editor", "viewer"];
const ROLE_HELP: Record<ProjectRole, string> = {
  owner: "manages members and rules, decides",
  editor: "starts conversations, decides",
  viewer: "reads",
};

function message(err: unknown): string {
  return err instanceof ApiError ? err.message : String(err);
}

const touchesPolicy = (type: string) =>
  type.startsWith("project.") || type.startsWith("policy.") || type.startsWith("permission.") || type === "capability.state_changed";

export function ProjectsSettings() {
  const { api, workspace } = useWorkspace();
  useTitle("Projects");
  const projects = useResource(() => api.projects().then((r) => r.projects), [api], {
    refreshOn: (e) => e.type.startsWith("project."),
  });
  const [creating, setCreating] = useState(false);
  const owner = workspace.role === "owner";
  return (
    <div className="page settings">
      <Link to="/settings" className="back-link">
        <Icon name="back" size={16} /> Settings
      </Link>
      <header className="page-head page-head-row">
        <h1>Projects</h1>
        {!creating ? (
          <Button variant="primary" icon="plus" onClick={() => setCreating(true)}>
            New project
          </Button>
        ) : null}
      </header>
      <p className="muted">
        Agents change outside systems only in a project’s conversations, as its rules allow, and only once an owner or
        editor approves.
      </p>
      {creating ? <NewProject onCancel={() => setCreating(false)} /> : null}
      {projects.error && !projects.data ? <ErrorBanner error={projects.error} onRetry={projects.reload} /> : null}
      {!projects.data && !projects.error ? <Loading what="projects" /> : null}
      {projects.data && projects.data.length === 0 && !creating ? (
        <EmptyState icon="tasks" title="No projects yet">
          Make one to let agents propose changes its owners and editors approve.
        </EmptyState>
      ) : null}
      {projects.data && projects.data.length > 0 ? (
        <ul className="project-list" aria-label="Projects">
          {projects.data.map((p) => (
            <li key={p.id}>
              <Link to={`/settings/projects/${encodeURIComponent(p.id)}`} className="project-row">
                <span className="project-row-name">{p.name}</span>
                <span className="muted">{p.role ? `you: ${p.role}` : "you are not a member"}</span>
                <Icon name="chevron" size={14} />
              </Link>
            </li>
          ))}
        </ul>
      ) : null}
      <Capabilities canSwitch={owner} />
      <WorkspaceRules canEdit={owner} />
    </div>
  );
}

function NewProject({ onCancel }: { onCancel: () => void }) {
  const { api } = useWorkspace();
  const [name, setName] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [key] = useState(newIdempotencyKey);
  const id = useId();
  async function create(e: FormEvent) {
    e.preventDefault();
    if (!name.trim()) {
      setError("Give the project a name, like “Plant 1 scheduling”.");
      return;
    }
    setBusy(true);
    setError(null);
    try {
      const made = await api.createProject({ name: name.trim() }, key);
      navigate(`/settings/projects/${encodeURIComponent(made.id)}`);
    } catch (err) {
      setError(message(err));
      setBusy(false);
    }
  }
  return (
    <Card>
      <form onSubmit={create} noValidate>
        <h2 className="card-title">New project</h2>
        <div className="field">
          <label htmlFor={id}>Name</label>
          <input id={id} value={name} onChange={(e) => setName(e.target.value)} maxLength={200} autoFocus placeholder="Plant 1 scheduling" />
        </div>
        {error ? (
          <p className="field-error" role="alert">
            {error}
          </p>
        ) : null}
        <div className="button-row">
          <Button type="submit" variant="primary" busy={busy}>
            {busy ? "Creating…" : "Create project"}
          </Button>
          <Button variant="ghost" onClick={onCancel} disabled={busy}>
            Cancel
          </Button>
        </div>
      </form>
    </Card>
  );
}

export function ProjectSettings({ projectId }: { projectId: string }) {
  const { api, workspace } = useWorkspace();
  const project = useResource(() => api.project(projectId), [api, projectId], {
    refreshOn: (e) => e.type.startsWith("project."),
  });
  const policy = usePolicy();
  useTitle(project.data?.name ?? "Project");
  const p = project.data;
  const isOwner = p?.role === "owner";
  return (
    <div className="page settings">
      <Link to="/settings/projects" className="back-link">
        <Icon name="back" size={16} /> Projects
      </Link>
      {project.error && !p ? <ErrorBanner error={project.error} onRetry={project.reload} /> : null}
      {!p && !project.error ? <Loading what="the project" /> : null}
      {p ? (
        <>
          <header className="page-head">
            <h1>{p.name}</h1>
            <p className="muted">Your role: {p.role ?? (workspace.role === "owner" ? "workspace owner (not a member)" : "none")}</p>
          </header>
          <Members project={p} canEdit={isOwner} onChanged={project.setData} />
          <ProjectRules project={p} canEdit={isOwner} policy={policy} />
          <Permissions projectId={p.id} canRevoke={isOwner || workspace.role === "owner"} policy={policy} />
        </>
      ) : null}
    </div>
  );
}

function Members({
  project,
  canEdit,
  onChanged,
}: {
  project: ProjectDetail;
  canEdit: boolean;
  onChanged: (update: (current: ProjectDetail | undefined) => ProjectDetail | undefined) => void;
}) {
  const { api, user } = useWorkspace();
  const everyone = useResource(() => api.members().then((r) => r.members), [api], { enabled: canEdit });
  const [error, setError] = useState<string | null>(null);
  const [adding, setAdding] = useState("");
  const [addRole, setAddRole] = useState<ProjectRole>("editor");
  const [busy, setBusy] = useState<string | null>(null);
  const addId = useId();
  const roleId = useId();
  const outside = (everyone.data ?? []).filter((m) => !project.members.some((pm) => pm.userId === m.id));
  const chosen = adding || outside[0]?.id || "";

  async function run(what: string, action: () => Promise<ProjectDetail | void>) {
    setBusy(what);
    setError(null);
    try {
      const next = await action();
      if (next) onChanged(() => next);
      else onChanged((cur) => cur && { ...cur, members: cur.members.filter((m) => m.userId !== what) });
    } catch (err) {
      setError(message(err));
    } finally {
      setBusy(null);
    }
  }

  return (
    <Card>
      <h2 className="card-title">Members</h2>
      <ul className="member-list" aria-label="Members">
        {project.members.map((m) => (
          <li key={m.userId} className="member-row">
            <span className="member-name">
              {m.displayName}
              {m.userId === user.id ? " (you)" : ""}
              <span className="muted small"> {m.email}</span>
            </span>
            {canEdit ? (
              <>
                <label className="sr-only" htmlFor={`role-${m.userId}`}>
                  Role of {m.displayName}
                </label>
                <select
                  id={`role-${m.userId}`}
                  value={m.role}
                  disabled={busy !== null}
                  onChange={(e) => void run(m.userId, () => api.setProjectMember(project.id, m.userId, e.target.value as ProjectRole))}
                >
                  {ROLES.map((r) => (
                    <option key={r} value={r}>
                      {r}
                    </option>
                  ))}
                </select>
                <Button
                  size="sm"
                  variant="ghost"
                  disabled={busy !== null}
                  aria-label={`Remove ${m.displayName}`}
                  onClick={() => void run(m.userId, () => api.removeProjectMember(project.id, m.userId))}
                >
                  Remove
                </Button>
              </>
            ) : (
              <Badge>{m.role}</Badge>
            )}
          </li>
        ))}
      </ul>
      {canEdit ? (
        outside.length > 0 ? (
          <form
            className="inline-form member-add"
            onSubmit={(e) => {
              e.preventDefault();
              if (chosen) void run("add", () => api.setProjectMember(project.id, chosen, addRole));
            }}
          >
            <div className="field">
              <label htmlFor={addId}>Add a workspace member</label>
              <select id={addId} value={chosen} onChange={(e) => setAdding(e.target.value)}>
                {outside.map((m) => (
                  <option key={m.id} value={m.id}>
                    {m.displayName || m.email}
                  </option>
                ))}
              </select>
            </div>
            <div className="field">
              <label htmlFor={roleId}>As</label>
              <select id={roleId} value={addRole} onChange={(e) => setAddRole(e.target.value as ProjectRole)}>
                {ROLES.map((r) => (
                  <option key={r} value={r}>
                    {r} — {ROLE_HELP[r]}
                  </option>
                ))}
              </select>
            </div>
            <Button type="submit" busy={busy === "add"}>
              Add
            </Button>
          </form>
        ) : (
          <p className="muted small">Everyone in the workspace is in this project.</p>
        )
      ) : null}
      {error ? (
        <p className="field-error" role="alert">
          {error}
        </p>
      ) : null}
    </Card>
  );
}

function RuleList({ rules, canEdit, onRemoved }: { rules: PolicyRule[]; canEdit: boolean; onRemoved: () => void }) {
  const { api } = useWorkspace();
  const [error, setError] = useState<string | null>(null);
  if (rules.length === 0) return <p className="muted">No rules: reads are allowed, writes are refused.</p>;
  return (
    <>
      <ul className="rule-list" aria-label="Rules">
        {rules.map((r) => (
          <li key={r.id} className="rule-row" data-rule-id={r.id}>
            <StatusPill
              tone={r.effect === "allow" ? "success" : "danger"}
              icon={r.effect === "allow" ? "checkCircle" : "xCircle"}
              label={r.effect === "allow" ? "Allow" : "Deny"}
            />
            <code>{r.capability}</code>
            <span className="muted">
              {r.roles && r.roles.length > 0 ? `for ${r.roles.join(", ")}` : "for every role"}
              {r.instance ? ` · on ${r.instance}` : " · on every target"}
            </span>
            {canEdit ? (
              <Button
                size="sm"
                variant="ghost"
                aria-label={`Remove the rule ${r.effect} ${r.capability}`}
                onClick={() =>
                  api.removeRule(r.id).then(onRemoved, (err: unknown) => setError(message(err)))
                }
              >
                Remove
              </Button>
            ) : null}
          </li>
        ))}
      </ul>
      {error ? (
        <p className="field-error" role="alert">
          {error}
        </p>
      ) : null}
    </>
  );
}

function usePolicy(): Resource<Policy> {
  const { api } = useWorkspace();
  return useResource(() => api.policy(), [api], { refreshOn: (e) => touchesPolicy(e.type) });
}

function ProjectRules({ project, canEdit, policy }: { project: ProjectDetail; canEdit: boolean; policy: Resource<Policy> }) {
  const rules = (policy.data?.rules ?? []).filter((r) => r.projectId === project.id);
  return (
    <Card>
      <h2 className="card-title">Rules</h2>
      <p className="small muted">
        Which capabilities agents may use in this project’s conversations, by the role of the person whose conversation it
        is. A write still waits for an approval. The project’s rules speak before the workspace’s; a deny wins.
      </p>
      {policy.error && !policy.data ? <ErrorBanner error={policy.error} onRetry={policy.reload} /> : null}
      {policy.data ? <RuleList rules={rules} canEdit={canEdit} onRemoved={policy.reload} /> : null}
      {canEdit ? <RuleForm projectId={project.id} onAdded={policy.reload} /> : null}
    </Card>
  );
}

function WorkspaceRules({ canEdit }: { canEdit: boolean }) {
  const policy = usePolicy();
  const rules = (policy.data?.rules ?? []).filter((r) => !r.projectId);
  return (
    <Card>
      <h2 className="card-title">Rules for the whole workspace</h2>
      {policy.error && !policy.data ? <ErrorBanner error={policy.error} onRetry={policy.reload} /> : null}
      {policy.data ? <RuleList rules={rules} canEdit={canEdit} onRemoved={policy.reload} /> : null}
      {canEdit ? <RuleForm onAdded={policy.reload} /> : null}
    </Card>
  );
}

function RuleForm({ projectId, onAdded }: { projectId?: string; onAdded: () => void }) {
  const { api } = useWorkspace();
  const [capability, setCapability] = useState("");
  const [effect, setEffect] = useState<"allow" | "deny">("allow");
  const [roles, setRoles] = useState<ProjectRole[]>(["owner", "editor"]);
  const [instance, setInstance] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const base = useId();

  async function add(e: FormEvent) {
    e.preventDefault();
    const pattern = capability.trim();
    if (!pattern) {
      setError("Name a capability (scheduling.schedule.publish), a family (scheduling.*) or * for all.");
      return;
    }
    if (roles.length === 0) {
      setError("Tick at least one role.");
      return;
    }
    const rule: NewRule = { capability: pattern, effect };
    if (projectId) rule.projectId = projectId;
    if (instance.trim()) rule.instance = instance.trim();
    if (roles.length < ROLES.length) rule.roles = roles;
    setBusy(true);
    setError(null);
    try {
      await api.addRule(rule, newIdempotencyKey());
      setCapability("");
      setInstance("");
      onAdded();
    } catch (err) {
      setError(message(err));
    } finally {
      setBusy(false);
    }
  }

  return (
    <form className="rule-form" onSubmit={add} noValidate aria-label="Add a rule">
      <h3 className="rule-form-title">Add a rule</h3>
      <div className="rule-form-grid">
        <div className="field">
          <label htmlFor={`${base}-effect`}>Effect</label>
          <select id={`${base}-effect`} value={effect} onChange={(e) => setEffect(e.target.value as "allow" | "deny")}>
            <option value="allow">allow</option>
            <option value="deny">deny</option>
          </select>
        </div>
        <div className="field">
          <label htmlFor={`${base}-cap`}>Capability</label>
          <input id={`${base}-cap`} value={capability} onChange={(e) => setCapability(e.target.value)} placeholder="scheduling.*" maxLength={100} />
        </div>
        <div className="field">
          <label htmlFor={`${base}-inst`}>Target (optional)</label>
          <input id={`${base}-inst`} value={instance} onChange={(e) => setInstance(e.target.value)} placeholder="every target" maxLength={100} />
        </div>
      </div>
      <fieldset className="checks checks-row">
        <legend>For people who are</legend>
        {ROLES.map((r) => (
          <label key={r} className="check-inline">
            <input
              type="checkbox"
              checked={roles.includes(r)}
              onChange={(e) => setRoles((list) => (e.target.checked ? [...list, r] : list.filter((x) => x !== r)))}
            />
            {r}
          </label>
        ))}
      </fieldset>
      {error ? (
        <p className="field-error" role="alert">
          {error}
        </p>
      ) : null}
      <Button type="submit" busy={busy} icon="plus">
        Add rule
      </Button>
    </form>
  );
}

const PERMISSION_LOOK: Record<StandingPermission["status"], { tone: "success" | "neutral"; icon: "checkCircle" | "clock" | "stopCircle"; label: string }> = {
  active: { tone: "success", icon: "checkCircle", label: "Active" },
  expired: { tone: "neutral", icon: "clock", label: "Expired" },
  used_up: { tone: "neutral", icon: "stopCircle", label: "Used up" },
  revoked: { tone: "neutral", icon: "stopCircle", label: "Revoked" },
};

function Permissions({ projectId, canRevoke, policy }: { projectId: string; canRevoke: boolean; policy: Resource<Policy> }) {
  const { api, actorName } = useWorkspace();
  const [error, setError] = useState<string | null>(null);
  const list = (policy.data?.permissions ?? []).filter((p) => p.projectId === projectId);
  return (
    <Card>
      <h2 className="card-title">Standing permissions</h2>
      <p className="small muted">Calls that run without asking again, granted with “Approve and don’t ask again”.</p>
      {!policy.data ? <Loading what="standing permissions" /> : list.length === 0 ? <p className="muted">None.</p> : null}
      <ul className="rule-list" aria-label="Standing permissions" hidden={list.length === 0}>
        {list.map((p) => {
          const look = PERMISSION_LOOK[p.status];
          return (
            <li key={p.id} className="rule-row" data-permission-id={p.id}>
              <StatusPill {...look} />
              <code>{p.capability}</code>
              <span className="muted">
                on {p.instance}
                {p.maxCalls != null ? ` · ${p.callsUsed} of ${p.maxCalls} calls` : ` · ${p.callsUsed} calls`}
                {p.expiresAt ? ` · until ${fullTime(p.expiresAt)}` : ""}
                {Object.keys(p.bounds).length > 0 ? ` · within ${JSON.stringify(p.bounds)}` : ""}
                {` · granted by ${actorName(p.grantedBy)}`}
              </span>
              {canRevoke && p.status === "active" ? (
                <Button
                  size="sm"
                  variant="danger"
                  onClick={() => api.revokePermission(p.id).then(policy.reload, (err: unknown) => setError(message(err)))}
                >
                  Revoke
                </Button>
              ) : null}
            </li>
          );
        })}
      </ul>
      {error ? (
        <p className="field-error" role="alert">
          {error}
        </p>
      ) : null}
    </Card>
  );
}

function Capabilities({ canSwitch }: { canSwitch: boolean }) {
  const { api } = useWorkspace();
  const list = useResource(() => api.capabilities().then((r) => r.capabilities), [api], {
    refreshOn: (e) => e.type === "capability.state_changed",
  });
  const [error, setError] = useState<string | null>(null);
  return (
    <Card>
      <h2 className="card-title">Capabilities</h2>
      <p className="small muted">What agents can ask this hub to do in outside systems. Switched off, new calls are refused at once.</p>
      {list.error && !list.data ? <ErrorBanner error={list.error} onRetry={list.reload} /> : null}
      {!list.data && !list.error ? <Loading what="capabilities" /> : null}
      <ul className="cap-list" aria-label="Capabilities">
        {(list.data ?? []).map(({ capability: c, enabled, disabledReason }) => (
          <li key={c.id} className="cap-row" data-capability={c.id}>
            <span className="cap-main">
              <code>{c.id}</code>
              <Badge tone={c.effect === "write" ? "waiting" : "neutral"}>{c.effect === "write" ? "write — asks first" : "read"}</Badge>
              <span className="muted small">{c.description}</span>
              {!enabled && disabledReason ? <span className="small">Off: {disabledReason}</span> : null}
            </span>
            <label className="check-inline cap-switch">
              <input
                type="checkbox"
                role="switch"
                checked={enabled}
                disabled={!canSwitch}
                aria-label={`Allow ${c.id}`}
                onChange={(e) =>
                  api
                    .setCapabilityEnabled(c.id, e.target.checked)
                    .then(list.reload, (err: unknown) => setError(message(err)))
                }
              />
              {enabled ? "On" : "Off"}
            </label>
          </li>
        ))}
      </ul>
      {!canSwitch ? <p className="small muted">Only workspace owners switch capabilities.</p> : null}
      {error ? (
        <p className="field-error" role="alert">
          {error}
        </p>
      ) : null}
    </Card>
  );
}
