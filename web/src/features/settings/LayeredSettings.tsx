// Settings that hold at levels (hub default → workspace → project → you → conversation): each
// key's effective value and where it comes from, and changes at the levels this person may set.

import { useCallback, useEffect, useId, useMemo, useState } from "react";
import { ApiError } from "../../api/client";
import { useSession } from "../auth/session";
import { Button, Card } from "../../ui";
import { LEVEL_LABEL, PeopleApi, type Level, type ProjectSummary, type Setting, type SettingsPlace } from "./api";
import "./settings.css";

type Scope = { level: Level; scopeId: string; label: string; projectId?: string };

const TITLES: Record<string, string> = {
  "approvals.ttlMinutes": "Approval waits (minutes)",
  "approvals.standingMaxMinutes": "Longest standing permission (minutes)",
  "approvals.standingMaxCalls": "Most calls of a standing permission",
  "conversations.defaultProjectId": "Project of new conversations",
  "tasks.cancelTimeoutMinutes": "Cancel waits for the agent (minutes)",
};

function shown(setting: Setting, projects: ProjectSummary[]): string {
  const value = setting.value;
  if (value === null || value === undefined) return setting.key === "conversations.defaultProjectId" ? "Personal" : "—";
  if (setting.key === "conversations.defaultProjectId") return projects.find((p) => p.id === value)?.name ?? String(value);
  return String(value);
}

export function LayeredSettings({ workspaceId, userId, isOwner }: { workspaceId: string; userId: string; isOwner: boolean }) {
  const { transport } = useSession();
  const people = useMemo(() => new PeopleApi(transport), [transport]);
  const titleId = useId();
  const scopeId = useId();
  const [projects, setProjects] = useState<ProjectSummary[]>([]);
  const [place, setPlace] = useState<SettingsPlace | null>(null);
  const [chosen, setChosen] = useState(`user:${userId}`);
  const [drafts, setDrafts] = useState<Record<string, string>>({});
  const [busy, setBusy] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);

  const mine: Scope = { level: "user", scopeId: userId, label: "Just for me" };
  const scopes: Scope[] = useMemo(() => {
    const list: Scope[] = [{ level: "user", scopeId: userId, label: "Just for me" }];
    if (isOwner) list.push({ level: "workspace", scopeId: workspaceId, label: "The whole workspace" });
    for (const p of projects) {
      if (isOwner || p.role === "owner") {
        list.push({ level: "project", scopeId: p.id, label: `Project ${p.name}`, projectId: p.id });
      }
    }
    return list;
  }, [isOwner, projects, userId, workspaceId]);
  const scope = scopes.find((s) => `${s.level}:${s.scopeId}` === chosen) ?? mine;

  const load = useCallback(async () => {
    try {
      setProjects((await people.projects(workspaceId)).projects);
      setPlace(await people.settings(workspaceId, scope.projectId ? { projectId: scope.projectId } : {}));
      setDrafts({});
    } catch (err) {
      setError((err as ApiError).message);
    }
  }, [people, workspaceId, scope.projectId]);

  useEffect(() => {
    void load();
  }, [load]);

  async function save(key: string, value: unknown) {
    setBusy(key);
    setError(null);
    try {
      await people.putSettings(workspaceId, scope.level, scope.scopeId, { [key]: value });
      await load();
    } catch (err) {
      setError((err as ApiError).message);
    } finally {
      setBusy(null);
    }
  }

  if (!place) return null;
  const here = (place.values[scope.level] ?? {}) as Record<string, unknown>;
  return (
    <Card aria-labelledby={titleId}>
      <h2 className="card-title" id={titleId}>
        Rules of work
      </h2>
      <p className="muted">
        Each setting holds from the hub's default, then the workspace, a project, you, and a single conversation — the
        most specific one wins.
      </p>
      <div className="field">
        <label htmlFor={scopeId}>Change the settings of</label>
        <select id={scopeId} value={`${scope.level}:${scope.scopeId}`} onChange={(e) => setChosen(e.target.value)}>
          {scopes.map((s) => (
            <option key={`${s.level}:${s.scopeId}`} value={`${s.level}:${s.scopeId}`}>
              {s.label}
            </option>
          ))}
        </select>
      </div>
      <ul className="layered-settings" aria-label="Settings">
        {place.settings.map((setting) => {
          const settable = setting.levels.includes(scope.level);
          const isSet = setting.key in here;
          const isProject = setting.key === "conversations.defaultProjectId";
          const schema = setting.schema as { minimum?: number; maximum?: number };
          const draft = drafts[setting.key] ?? (isSet ? String(here[setting.key]) : "");
          const inputId = `${titleId}-${setting.key}`;
          return (
            <li key={setting.key} className="layered-setting">
              <div>
                <label htmlFor={inputId} className="layered-setting-name">
                  {TITLES[setting.key] ?? setting.key}
                </label>
                <p className="field-hint">{setting.description}</p>
                <p>
                  Now <strong>{shown(setting, projects)}</strong>{" "}
                  <span className="muted">(from {LEVEL_LABEL[setting.level].toLowerCase()})</span>
                </p>
              </div>
              {settable ? (
                <form
                  className="inline-form"
                  onSubmit={(e) => {
                    e.preventDefault();
                    if (draft === "") void save(setting.key, null);
                    else void save(setting.key, isProject ? draft : Number(draft));
                  }}
                >
                  {isProject ? (
                    <select
                      id={inputId}
                      value={draft}
                      onChange={(e) => setDrafts({ ...drafts, [setting.key]: e.target.value })}
                    >
                      <option value="">Not set here</option>
                      {projects.map((p) => (
                        <option key={p.id} value={p.id}>
                          {p.name}
                        </option>
                      ))}
                    </select>
                  ) : (
                    <input
                      id={inputId}
                      type="number"
                      inputMode="numeric"
                      min={schema.minimum}
                      max={schema.maximum}
                      step={1}
                      placeholder="Not set here"
                      value={draft}
                      onChange={(e) => setDrafts({ ...drafts, [setting.key]: e.target.value })}
                    />
                  )}
                  <Button type="submit" size="sm" busy={busy === setting.key}>
                    Save
                  </Button>
                  {isSet ? (
                    <Button size="sm" variant="ghost" onClick={() => void save(setting.key, null)}>
                      Clear
                    </Button>
                  ) : null}
                </form>
              ) : (
                <p className="field-hint">Not set for {scope.label.toLowerCase()}.</p>
              )}
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
