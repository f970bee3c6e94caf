// Check a typed answer before sending it, with the hub's own rules (domain/_interaction_rules.py)
// and a message that says how to fix it.

import type { InteractionRequest, InteractionResponse, InteractionOption, Interaction } from "../../api/types";
import { formatProblem } from "../../answering/formats";

export function validateInput(request: Pick<InteractionRequest, "format" | "pattern">, text: string): string | null {
  const problem = formatProblem(request.format, text);
  if (problem) return problem;
  if (request.pattern) {
    let re: RegExp | null = null;
    try {
      re = new RegExp(`^(?:${request.pattern})$`, "u");
    } catch {
      re = null; // a pattern JavaScript cannot read: the hub still checks it
    }
    if (re && !re.test(text)) return `The answer does not have the expected form (${request.pattern}).`;
  }
  return null;
}

/** The options a card shows; approval and review get their defaults when the agent sent none. */
export function optionsOf(request: InteractionRequest): InteractionOption[] {
  if (request.options && request.options.length > 0) return request.options;
  if (request.type === "approval")
    return [
      { id: "approve", label: "Approve", style: "primary" },
      { id: "reject", label: "Reject", style: "danger" },
    ];
  if (request.type === "review")
    return [
      { id: "approve", label: "Approve", style: "primary" },
      { id: "request_changes", label: "Request changes" },
    ];
  return [];
}

/** The answer in words: "Approve", "Other: eu-west", "A, B", or the typed text. */
export function describeResponse(interaction: Pick<Interaction, "request" | "response">): string {
  const response: InteractionResponse | null = interaction.response;
  if (!response) return "";
  if (interaction.request.type === "input") return response.text ?? "";
  const options = optionsOf(interaction.request);
  const ids = response.optionIds ?? (response.optionId ? [response.optionId] : []);
  const usesOther = ids.includes("other");
  const labels = ids.map((id) =>
    id === "other"
      ? `Other: “${response.text ?? ""}”`
      : (options.find((o) => o.id === id)?.label ?? id),
  );
  let text = labels.join(", ");
  if (response.input) text = `${text} with an edited input`;
  if (response.text && !usesOther) text = text ? `${text} — note: “${response.text}”` : response.text;
  return text;
}

/** Bytes of an edited input the hub takes (compact UTF-8 JSON), as for the proposed one. */
export const MAX_INPUT_BYTES = 64 * 1024;

export type EditedInput = { input: Record<string, unknown> | null; error: null } | { input: null; error: string };

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/**
 * An approval's input as the person edited it, checked as the hub checks it: a JSON object of
 * at most 64 KiB. `input` is null when the text says the same as the proposed input (allow
 * it as it is).
 */
export function editedInput(text: string, proposed: Record<string, unknown>): EditedInput {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    return { input: null, error: `The input is not valid JSON: ${why}` };
  }
  if (!value || typeof value !== "object" || Array.isArray(value)) {
    return { input: null, error: "The input must be a JSON object: { … }." };
  }
  const size = new TextEncoder().encode(JSON.stringify(value)).length;
  if (size > MAX_INPUT_BYTES) {
    return { input: null, error: `The input is ${size.toLocaleString()} bytes; at most ${MAX_INPUT_BYTES.toLocaleString()} are taken.` };
  }
  if (canonical(value) === canonical(proposed)) return { input: null, error: null };
  return { input: value as Record<string, unknown>, error: null };
}
