// "Host an agent": the form's fields, what each engine offers, the checks made before the hub
// is asked, and the hub's refusal put back on the field it names (`details.field`).

import { ApiError } from "../../api/client";
import type { Engine, ModelApi, NewHostedAgent } from "../../api/types";

/** The form's fields, named as the hub names them in `details.field`, in the form's order. */
export const FIELDS = ["engine", "name", "projectId", "cwd", "model.api", "model.baseUrl", "model.model", "model.apiKey"] as const;
export type HostField = (typeof FIELDS)[number];
export type FieldErrors = Partial<Record<HostField, string>>;

export interface HostDraft {
  engine: string;
  name: string;
  /** "" for none: the agent then works in any conversation. */
  projectId: string;
  cwd: string;
  api: ModelApi;
  baseUrl: string;
  model: string;
  /** Write-only: sent once, kept sealed by the hub, never read back. */
  apiKey: string;
}

export const MODEL_APIS: { value: ModelApi; label: string; example: string }[] = [
  { value: "openai-responses", label: "OpenAI Responses", example: "https://api.openai.com/v1" },
  { value: "openai-chat", label: "OpenAI Chat Completions", example: "http://127.0.0.1:8080/v1" },
  { value: "anthropic-messages", label: "Anthropic Messages", example: "https://api.anthropic.com" },
];

export function emptyDraft(engines: Engine[] = []): HostDraft {
  const ready = engines.filter((e) => engineState(e).kind === "ready");
  return {
    engine: ready.length === 1 ? ready[0]!.name : "",
    name: "",
    projectId: "",
    cwd: "",
    api: "openai-responses",
    baseUrl: "",
    model: "",
    apiKey: "",
  };
}

export type EngineState =
  | { kind: "ready"; label: string }
  | { kind: "not_installed"; label: string; installHint: string }
  | { kind: "no_driver"; label: string };

/** What a person can do with an engine here, in words (never by colour alone). */
export function engineState(engine: Engine): EngineState {
  if (!engine.installed)
    return { kind: "not_installed", label: "Not installed on this hub", installHint: engine.installHint };
  if (!engine.runnable) return { kind: "no_driver", label: "Installed, but this LineUp cannot drive it yet" };
  return { kind: "ready", label: engine.version ? `Installed · ${engine.version}` : "Installed" };
}

const ENGINE_NAMES: Record<string, string> = {
  fake: "Fake engine (for trying LineUp out)",
  codex: "Codex",
  pi: "Pi",
  "claude-code": "Claude Code",
};

export function engineTitle(name: string): string {
  return ENGINE_NAMES[name] ?? name;
}

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return (url.protocol === "http:" || url.protocol === "https:") && url.hostname !== "";
  } catch {
    return false;
  }
}

/** What is wrong before the hub is asked: each problem on its field. The hub checks again, and
 * decides what only it can (is the directory there, inside the allowed roots?). */
export function validate(draft: HostDraft, engines: Engine[]): FieldErrors {
  const errors: FieldErrors = {};
  const engine = engines.find((e) => e.name === draft.engine);
  if (!engine) errors.engine = "Choose the engine that runs the agent.";
  else if (engineState(engine).kind !== "ready") errors.engine = `${engineTitle(engine.name)} cannot host agents on this hub.`;
  if (!draft.name.trim()) errors.name = "Give the agent a name, like “Site builder”.";
  else if (draft.name.trim().length > 100) errors.name = "A name has at most 100 characters.";
  const cwd = draft.cwd.trim();
  if (!cwd) errors.cwd = "Give the directory the agent works in.";
  else if (!cwd.startsWith("/")) errors.cwd = "Give the full path, starting with /.";
  else if (cwd.length > 1000) errors.cwd = "A path has at most 1000 characters.";
  if (!MODEL_APIS.some((a) => a.value === draft.api)) errors["model.api"] = "Choose the kind of API the model speaks.";
  const baseUrl = draft.baseUrl.trim();
  if (!baseUrl) errors["model.baseUrl"] = "Give the endpoint's address.";
  else if (!isHttpUrl(baseUrl)) errors["model.baseUrl"] = "Give an http:// or https:// address.";
  else if (baseUrl.length > 500) errors["model.baseUrl"] = "An address has at most 500 characters.";
  if (!draft.model.trim()) errors["model.model"] = "Name the model, as the endpoint knows it.";
  else if (draft.model.trim().length > 200) errors["model.model"] = "A model name has at most 200 characters.";
  if (draft.apiKey.length > 1000) errors["model.apiKey"] = "A key has at most 1000 characters.";
  return errors;
}

export function firstError(errors: FieldErrors): HostField | null {
  return FIELDS.find((f) => errors[f]) ?? null;
}

/** What the hub is sent: trimmed, an empty key or project left out. */
export function toBody(draft: HostDraft): NewHostedAgent {
  const body: NewHostedAgent = {
    name: draft.name.trim(),
    engine: draft.engine,
    cwd: draft.cwd.trim(),
    model: { api: draft.api, baseUrl: draft.baseUrl.trim(), model: draft.model.trim() },
  };
  if (draft.projectId) body.projectId = draft.projectId;
  if (draft.apiKey) body.model.apiKey = draft.apiKey;
  return body;
}

/** The field the hub's refusal names, when it is one of the form's. */
export function refusedField(error: unknown): HostField | null {
  if (!(error instanceof ApiError)) return null;
  const field = error.details.field;
  return typeof field === "string" && (FIELDS as readonly string[]).includes(field) ? (field as HostField) : null;
}

/** The directory a project names, offered for the working directory when the person has not
 * typed one of their own. */
export function suggestedCwd(current: string, previousSuggestion: string | null, projectDirectory: string | null | undefined): string {
  if (current.trim() && current !== previousSuggestion) return current;
  return projectDirectory ?? (current === previousSuggestion ? "" : current);
}
