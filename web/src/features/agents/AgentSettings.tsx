// The agent's settings as a form, drawn from the JSON Schema its adapter declared.

import { useEffect, useId, useMemo, useState, type FormEvent } from "react";
import { ApiError, newIdempotencyKey } from "../../api/client";
import type { Agent } from "../../api/types";
import { useWorkspace } from "../../app/workspace";
import { Button } from "../../ui";
import { formValues, settingFields, toText, type SettingField } from "./settingsForm";

type Entries = Record<string, string | boolean>;

function entriesOf(fields: SettingField[], settings: Record<string, unknown>): Entries {
  const entries: Entries = {};
  for (const f of fields) entries[f.name] = f.kind === "boolean" ? settings[f.name] === true : toText(settings[f.name]);
  return entries;
}

export function AgentSettings({ agent }: { agent: Agent }) {
  const { api, agents } = useWorkspace();
  // by content: the agents list is read again on every agent event, with new objects
  const schemaKey = JSON.stringify(agent.settingsSchema ?? null);
  const savedKey = JSON.stringify(agent.settings);
  const fields = useMemo(() => settingFields(agent.settingsSchema), [schemaKey]);
  const [entries, setEntries] = useState<Entries>(() => entriesOf(fields, agent.settings));
  const [state, setState] = useState<
    { kind: "idle" | "saving" | "saved" } | { kind: "error"; message: string; field?: string }
  >({ kind: "idle" });
  const formId = useId();
  // what was saved (here or elsewhere) replaces the form; a mere re-read keeps the edits
  useEffect(() => setEntries(entriesOf(fields, agent.settings)), [fields, savedKey]);

  if (fields.length === 0) return <p className="muted small">This agent declares no settings.</p>;

  async function save(e: FormEvent) {
    e.preventDefault();
    setState({ kind: "saving" });
    try {
      await api.saveAgentSettings(agent.id, formValues(fields, entries), newIdempotencyKey());
      setState({ kind: "saved" });
      agents.reload();
    } catch (err) {
      const error = err as ApiError;
      const field = typeof error.details.field === "string" ? error.details.field : undefined;
      setState({ kind: "error", message: error.message, field });
    }
  }

  return (
    <form className="settings-form" onSubmit={save} noValidate aria-label="Agent settings">
      {fields.map((f) => {
        const id = `${formId}-${f.name}`;
        const hint = f.description ? `${id}-hint` : undefined;
        const wrong = state.kind === "error" && state.field === f.name;
        const error = wrong ? `${id}-error` : undefined;
        const described = [hint, error].filter(Boolean).join(" ") || undefined;
        const value = entries[f.name];
        const set = (v: string | boolean) => setEntries((old) => ({ ...old, [f.name]: v }));
        let control;
        if (f.kind === "boolean")
          control = (
            <input id={id} type="checkbox" checked={value === true} aria-describedby={described} aria-invalid={wrong || undefined} onChange={(e) => set(e.target.checked)} />
          );
        else if (f.options)
          control = (
            <select id={id} value={toText(value)} aria-describedby={described} aria-invalid={wrong || undefined} onChange={(e) => set(e.target.value)}>
              {f.hasDefault ? null : <option value="">—</option>}
              {f.options.map((o) => (
                <option key={String(o)} value={String(o)}>
                  {String(o)}
                </option>
              ))}
            </select>
          );
        else
          control = (
            <input
              id={id}
              type="text"
              inputMode={f.kind === "integer" ? "numeric" : f.kind === "number" ? "decimal" : undefined}
              value={toText(value)}
              aria-describedby={described}
              aria-invalid={wrong || undefined}
              onChange={(e) => set(e.target.value)}
            />
          );
        return (
          <div key={f.name} className={`field${f.kind === "boolean" ? " field-check" : ""}`}>
            <label htmlFor={id}>
              {f.label}
              {f.required ? " (required)" : ""}
            </label>
            {control}
            {f.description ? (
              <p id={hint} className="field-hint">
                {f.description}
              </p>
            ) : null}
            {wrong ? (
              <p id={error} className="field-error" role="alert">
                {state.message}
              </p>
            ) : null}
          </div>
        );
      })}
      <div className="button-row">
        <Button type="submit" variant="primary" busy={state.kind === "saving"}>
          {state.kind === "saving" ? "Saving…" : "Save settings"}
        </Button>
        <span role="status" className="form-note">
          {state.kind === "saved" ? "Saved — the agent has them." : ""}
        </span>
      </div>
      {state.kind === "error" && !state.field ? (
        <p className="field-error" role="alert">
          {state.message}
        </p>
      ) : null}
    </form>
  );
}
