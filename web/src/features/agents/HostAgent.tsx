// "Host an agent": the hub runs a coding agent itself — an engine on the hub's machine, in a
// working directory under the allowed roots, talking to a model endpoint the person gives.
// Then it appears like any agent: online once its host connects it, ready for a conversation.

import { useEffect, useId, useRef, useState, type FormEvent, type ReactNode } from "react";
import { ApiError } from "../../api/client";
import type { Engine, HostedAgent, Project } from "../../api/types";
import { useWorkspace } from "../../app/workspace";
import { navigate } from "../../lib/router";
import { useResource } from "../../lib/useResource";
import { AgentStatusPill, Banner, Button, Card, CopyButton, ErrorBanner, Icon, Loading, Spinner } from "../../ui";
import {
  MODEL_APIS,
  emptyDraft,
  engineState,
  engineTitle,
  firstError,
  refusedField,
  suggestedCwd,
  toBody,
  validate,
  type FieldErrors,
  type HostDraft,
  type HostField,
} from "./hostForm";

export function HostAgent({ onClose }: { onClose: () => void }) {
  const { api } = useWorkspace();
  const catalog = useResource(() => api.engines(), [api]);
  const projects = useResource(() => api.projects().then((r) => r.projects), [api]);
  const [created, setCreated] = useState<{ hosted: HostedAgent; name: string } | null>(null);
  const headingRef = useRef<HTMLHeadingElement>(null);
  useEffect(() => headingRef.current?.focus(), []);

  let body: ReactNode;
  if (created) body = <Created hosted={created.hosted} name={created.name} onClose={onClose} />;
  else if (catalog.error && !catalog.data) body = <ErrorBanner error={catalog.error} onRetry={catalog.reload} />;
  else if (!catalog.data || (!projects.data && !projects.error)) body = <Loading what="engines" />;
  else if (!catalog.data.hosting)
    body = (
      <Banner tone="warning" title="This hub runs no engines">
        Its operator started it without them (<code className="inline-code">--no-engines</code>). Start it with{" "}
        <code className="inline-code">lineup serve</code> to host agents here.
      </Banner>
    );
  else
    body = (
      <HostForm
        engines={catalog.data.engines}
        roots={catalog.data.roots}
        projects={(projects.data ?? []).filter((p) => p.role === "owner" || p.role === "editor")}
        onCancel={onClose}
        onCreated={(hosted, name) => setCreated({ hosted, name })}
      />
    );

  return (
    <Card className="connect host" aria-labelledby="host-title">
      <div className="card-head">
        <h2 id="host-title" className="card-title" tabIndex={-1} ref={headingRef}>
          Host an agent
        </h2>
        <button type="button" className="icon-btn" onClick={onClose} aria-label="Close host an agent">
          <Icon name="close" />
        </button>
      </div>
      <p className="muted">
        This hub runs the agent on its own machine: a coding engine working in a directory there, with the model you
        choose. It connects to the hub like any agent.
      </p>
      {body}
    </Card>
  );
}

function HostForm({
  engines,
  roots,
  projects,
  onCancel,
  onCreated,
}: {
  engines: Engine[];
  roots: string[];
  projects: Project[];
  onCancel: () => void;
  onCreated: (hosted: HostedAgent, name: string) => void;
}) {
  const { api, agents } = useWorkspace();
  const [draft, setDraft] = useState<HostDraft>(() => emptyDraft(engines));
  const [errors, setErrors] = useState<FieldErrors>({});
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const suggestion = useRef<string | null>(null);
  const formId = useId();
  const idOf = (field: HostField) => `${formId}-${field.replace(".", "-")}`;
  const controls = useRef(new Map<HostField, HTMLElement | null>());
  const bind = (field: HostField) => (el: HTMLElement | null) => {
    controls.current.set(field, el);
  };

  function set<K extends keyof HostDraft>(key: K, value: HostDraft[K]) {
    setDraft((d) => ({ ...d, [key]: value }));
  }

  function chooseProject(projectId: string) {
    const project = projects.find((p) => p.id === projectId);
    setDraft((d) => {
      const cwd = suggestedCwd(d.cwd, suggestion.current, project?.workingDirectory);
      suggestion.current = project?.workingDirectory ?? null;
      return { ...d, projectId, cwd };
    });
  }

  function focus(field: HostField) {
    const el = controls.current.get(field);
    el?.focus();
  }

  async function submit(e: FormEvent) {
    e.preventDefault();
    setProblem(null);
    const found = validate(draft, engines);
    setErrors(found);
    const first = firstError(found);
    if (first) {
      focus(first);
      return;
    }
    setBusy(true);
    try {
      const hosted = await api.createHostedAgent(toBody(draft));
      agents.reload();
      onCreated(hosted, draft.name.trim());
    } catch (err) {
      const error = err as ApiError;
      const field = refusedField(error);
      if (field) {
        setErrors({ [field]: error.message });
        focus(field);
      } else setProblem(error.message);
      setBusy(false);
    }
  }

  // each field's label, hint and error, tied to its control
  const described = (field: HostField, hint = false) =>
    [hint ? `${idOf(field)}-hint` : null, errors[field] ? `${idOf(field)}-error` : null].filter(Boolean).join(" ") ||
    undefined;
  const error = (field: HostField) =>
    errors[field] ? (
      <p id={`${idOf(field)}-error`} className="field-error">
        {errors[field]}
      </p>
    ) : null;
  const invalid = (field: HostField) => (errors[field] ? true : undefined);
  const chosenApi = MODEL_APIS.find((a) => a.value === draft.api) ?? MODEL_APIS[0]!;

  return (
    <form className="host-form" onSubmit={submit} noValidate aria-label="Host an agent">
      <fieldset className="checks" aria-describedby={errors.engine ? `${idOf("engine")}-error` : undefined}>
        <legend>Engine</legend>
        {engines.map((engine, index) => {
          const state = engineState(engine);
          const id = `${idOf("engine")}-${engine.name}`;
          const ready = state.kind === "ready";
          return (
            <div key={engine.name} className={`engine-option${ready ? "" : " is-unavailable"}`} data-engine={engine.name}>
              <label className="check" htmlFor={id}>
                <input
                  id={id}
                  ref={index === engines.findIndex((e) => engineState(e).kind === "ready") ? bind("engine") : undefined}
                  type="radio"
                  name={`${formId}-engine`}
                  value={engine.name}
                  checked={draft.engine === engine.name}
                  disabled={!ready}
                  aria-describedby={`${id}-state`}
                  aria-invalid={invalid("engine")}
                  onChange={() => set("engine", engine.name)}
                />
                <span className="choice-text">{engineTitle(engine.name)}</span>
                <span id={`${id}-state`} className="engine-state">
                  <Icon name={ready ? "checkCircle" : state.kind === "not_installed" ? "package" : "info"} size={14} />
                  {state.label}
                </span>
              </label>
              {state.kind === "not_installed" ? (
                <div className="engine-install">
                  <span className="muted small">The hub's operator adds it with</span>
                  <div className="command">
                    <code>{state.installHint}</code>
                    <CopyButton text={state.installHint} what={`the command that installs ${engineTitle(engine.name)}`} />
                  </div>
                </div>
              ) : null}
            </div>
          );
        })}
        {engines.length === 0 ? <p className="muted">This hub knows no engines.</p> : null}
        {error("engine")}
      </fieldset>

      <div className="field">
        <label htmlFor={idOf("name")}>Agent name</label>
        <input
          id={idOf("name")}
          ref={bind("name")}
          value={draft.name}
          maxLength={100}
          placeholder="Site builder"
          autoComplete="off"
          aria-invalid={invalid("name")}
          aria-describedby={described("name")}
          onChange={(e) => set("name", e.target.value)}
        />
        {error("name")}
      </div>

      <div className="field">
        <label htmlFor={idOf("projectId")}>Project</label>
        <select
          id={idOf("projectId")}
          ref={bind("projectId")}
          value={draft.projectId}
          aria-invalid={invalid("projectId")}
          aria-describedby={described("projectId", true)}
          onChange={(e) => chooseProject(e.target.value)}
        >
          <option value="">None — it works in any conversation</option>
          {projects.map((p) => (
            <option key={p.id} value={p.id}>
              {p.name}
            </option>
          ))}
        </select>
        <p id={`${idOf("projectId")}-hint`} className="field-hint">
          With a project, its conversations start in that project: its rules, approvers and audit apply.
        </p>
        {error("projectId")}
      </div>

      <div className="field">
        <label htmlFor={idOf("cwd")}>Working directory</label>
        <input
          id={idOf("cwd")}
          ref={bind("cwd")}
          value={draft.cwd}
          maxLength={1000}
          placeholder={roots[0] ? `${roots[0].replace(/\/$/, "")}/my-project` : "/home/me/my-project"}
          autoComplete="off"
          spellCheck={false}
          aria-invalid={invalid("cwd")}
          aria-describedby={described("cwd", true)}
          onChange={(e) => set("cwd", e.target.value)}
        />
        <div id={`${idOf("cwd")}-hint`} className="field-hint">
          A directory on the hub's machine, inside{" "}
          {roots.length === 1 ? "the allowed root" : `one of the ${roots.length} allowed roots`}:
          <ul className="roots" aria-label="Allowed roots">
            {roots.map((r) => (
              <li key={r}>
                <code className="inline-code">{r}</code>
              </li>
            ))}
          </ul>
        </div>
        {error("cwd")}
      </div>

      <fieldset className="model-fields">
        <legend>Model provider</legend>
        <div className="field">
          <label htmlFor={idOf("model.api")}>API</label>
          <select
            id={idOf("model.api")}
            ref={bind("model.api")}
            value={draft.api}
            aria-invalid={invalid("model.api")}
            aria-describedby={described("model.api")}
            onChange={(e) => set("api", e.target.value as HostDraft["api"])}
          >
            {MODEL_APIS.map((a) => (
              <option key={a.value} value={a.value}>
                {a.label}
              </option>
            ))}
          </select>
          {error("model.api")}
        </div>
        <div className="field">
          <label htmlFor={idOf("model.baseUrl")}>Base URL</label>
          <input
            id={idOf("model.baseUrl")}
            ref={bind("model.baseUrl")}
            value={draft.baseUrl}
            maxLength={500}
            inputMode="url"
            placeholder={chosenApi.example}
            autoComplete="off"
            spellCheck={false}
            aria-invalid={invalid("model.baseUrl")}
            aria-describedby={described("model.baseUrl")}
            onChange={(e) => set("baseUrl", e.target.value)}
          />
          {error("model.baseUrl")}
        </div>
        <div className="field">
          <label htmlFor={idOf("model.model")}>Model name</label>
          <input
            id={idOf("model.model")}
            ref={bind("model.model")}
            value={draft.model}
            maxLength={200}
            placeholder="gpt-5-codex"
            autoComplete="off"
            spellCheck={false}
            aria-invalid={invalid("model.model")}
            aria-describedby={described("model.model")}
            onChange={(e) => set("model", e.target.value)}
          />
          {error("model.model")}
        </div>
        <div className="field">
          <label htmlFor={idOf("model.apiKey")}>API key (optional)</label>
          <input
            id={idOf("model.apiKey")}
            ref={bind("model.apiKey")}
            type="password"
            value={draft.apiKey}
            maxLength={1000}
            autoComplete="new-password"
            spellCheck={false}
            aria-invalid={invalid("model.apiKey")}
            aria-describedby={described("model.apiKey", true)}
            onChange={(e) => set("apiKey", e.target.value)}
          />
          <p id={`${idOf("model.apiKey")}-hint`} className="field-hint">
            Kept sealed on the hub and handed only to the engine; never shown again — the agent's page says only
            whether one is set.
          </p>
          {error("model.apiKey")}
        </div>
      </fieldset>

      {problem ? (
        <p className="field-error" role="alert">
          {problem}
        </p>
      ) : null}
      <span className="sr-only" role="status">
        {Object.keys(errors).length > 0 ? `${Object.keys(errors).length} field(s) to fix` : ""}
      </span>
      <div className="button-row">
        <Button type="submit" variant="primary" busy={busy}>
          {busy ? "Creating…" : "Host this agent"}
        </Button>
        <Button variant="ghost" onClick={onCancel} disabled={busy}>
          Cancel
        </Button>
      </div>
    </form>
  );
}

function Created({ hosted, name, onClose }: { hosted: HostedAgent; name: string; onClose: () => void }) {
  const { agents } = useWorkspace();
  const agent = agents.data?.find((a) => a.id === hosted.agentId);
  const online = agent?.online === true;
  return (
    <>
      <Banner tone="success" title={online ? `${name} is online` : `${name} is hosted`}>
        {online ? (
          "It is ready for a conversation. Its engine starts with the first message."
        ) : (
          <>
            <Spinner size={14} /> Waiting for the hub to connect it…
          </>
        )}
      </Banner>
      {agent ? (
        <p className="host-status">
          Status: <AgentStatusPill agent={agent} />
        </p>
      ) : null}
      <div className="button-row">
        <Button
          variant="primary"
          icon="chat"
          onClick={() => navigate(`/conversations?new=1&agent=${encodeURIComponent(hosted.agentId)}`)}
        >
          Start a conversation
        </Button>
        <Button onClick={() => navigate(`/agents/${encodeURIComponent(hosted.agentId)}`)}>Open its page</Button>
        <Button variant="ghost" onClick={onClose}>
          Done
        </Button>
      </div>
    </>
  );
}
