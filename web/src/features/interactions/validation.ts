// Check a typed answer before sending it, with the hub's own rules (domain/_interaction_rules.py)
// and a message that says how to fix it.

import type { InteractionRequest, InteractionResponse, InteractionOption, Interaction } from "../../api/types";

const EMAIL = /^[^@\s]+@[^@\s]+\.[^@\s]+$/;
const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
const INTEGER = /^[+-]?\d+$/;

export function validateInput(request: Pick<InteractionRequest, "format" | "pattern">, text: string): string | null {
  const value = text;
  if (!value.trim()) return "An answer is required.";
  switch (request.format) {
    case "email":
      if (!EMAIL.test(value)) return "Enter an email address, like name@example.com.";
      break;
    case "url":
      if (!isWebUrl(value)) return "Enter a web address starting with http:// or https://.";
      break;
    case "number":
      if (!NUMBER.test(value.trim()) || !Number.isFinite(Number(value))) return "Enter a number, like 3 or 2.5.";
      break;
    case "integer":
      if (!INTEGER.test(value.trim())) return "Enter a whole number, like 3.";
      break;
    default:
      break;
  }
  if (request.pattern) {
    let re: RegExp | null = null;
    try {
      re = new RegExp(`^(?:${request.pattern})$`, "u");
    } catch {
      re = null; // a pattern JavaScript cannot read: the hub still checks it
    }
    if (re && !re.test(value)) return `The answer does not have the expected form (${request.pattern}).`;
  }
  return null;
}

function isWebUrl(text: string): boolean {
  if (/\s/.test(text)) return false;
  try {
    const url = new URL(text);
    return (url.protocol === "http:" || url.protocol === "https:") && !!url.hostname;
  } catch {
    return false;
  }
}

export function formatHint(format: InteractionRequest["format"]): string | null {
  switch (format) {
    case "email":
      return "An email address";
    case "url":
      return "A web address (http:// or https://)";
    case "number":
      return "A number";
    case "integer":
      return "A whole number";
    default:
      return null;
  }
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
  if (response.text && !usesOther) text = text ? `${text} — note: “${response.text}”` : response.text;
  return text;
}
