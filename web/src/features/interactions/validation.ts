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
  if (response.text && !usesOther) text = text ? `${text} — note: “${response.text}”` : response.text;
  return text;
}
