import type { InteractionOption, InteractionResolvedPayload } from "./generated/protocol.js";

export const APPROVE = "approve";
export const REJECT = "reject";
export const REQUEST_CHANGES = "request_changes";

/** Who answered an interaction, and when (the hub's milliseconds, as a Date). */
export interface Answered {
  interactionId: string;
  by: string;
  byName: string | null;
  at: Date;
}

export interface Approval extends Answered {
  approved: boolean;
  note: string | null;
}

export interface Choice extends Answered {
  /** The chosen options' ids (one unless `multiple`); empty when the person wrote their own. */
  optionIds: string[];
  labels: string[];
  /** The person's own answer, when the request allowed one. */
  other: string | null;
  /** The (first) chosen option's label, or else the person's own text. */
  label: string | null;
}

export interface InputAnswer extends Answered {
  text: string;
}

export interface Review extends Answered {
  approved: boolean;
  changesRequested: boolean;
  comment: string | null;
}

const IDENTIFIER = /^[A-Za-z0-9_.:-]{1,128}$/;

/** Options as the card shows them; plain labels get ids (the label itself when it can). */
export function choiceOptions(options: (string | [string, string])[], recommended?: string): InteractionOption[] {
  if (options.length < 2 || options.length > 5) throw new RangeError("A choice offers 2 to 5 options.");
  const seen = new Set<string>();
  const built: InteractionOption[] = options.map((option, position) => {
    const number = position + 1;
    let [id, label] = typeof option === "string" ? [IDENTIFIER.test(option) ? option : `option-${number}`, option] : option;
    if (seen.has(id)) id = `option-${number}`;
    if (seen.has(id)) throw new RangeError(`Option id ${id} is used twice.`);
    seen.add(id);
    return { id, label };
  });
  if (recommended !== undefined) {
    const match = built.find((o) => o.id === recommended || o.label === recommended);
    if (!match) throw new RangeError(`The recommended option ${recommended} is not one of the options.`);
    match.recommended = true;
  }
  return built;
}

function answered(resolved: InteractionResolvedPayload): Answered {
  return {
    interactionId: resolved.interactionId,
    by: resolved.respondedBy,
    byName: resolved.respondedByName ?? null,
    at: new Date(resolved.respondedAt),
  };
}

function picked(resolved: InteractionResolvedPayload): string[] {
  const response = resolved.response;
  if (response.optionIds && response.optionIds.length > 0) return [...response.optionIds];
  return response.optionId ? [response.optionId] : [];
}

export function approvalFrom(resolved: InteractionResolvedPayload): Approval {
  return { ...answered(resolved), approved: picked(resolved).includes(APPROVE), note: resolved.response.text || null };
}

export function reviewFrom(resolved: InteractionResolvedPayload): Review {
  const approved = picked(resolved).includes(APPROVE);
  return { ...answered(resolved), approved, changesRequested: !approved, comment: resolved.response.text || null };
}

export function inputFrom(resolved: InteractionResolvedPayload): InputAnswer {
  return { ...answered(resolved), text: resolved.response.text ?? "" };
}

export function choiceFrom(resolved: InteractionResolvedPayload, options: InteractionOption[]): Choice {
  const ids = picked(resolved).filter((id) => id !== "other" || options.some((o) => o.id === "other"));
  const labels = ids.map((id) => options.find((o) => o.id === id)?.label ?? id);
  const other = ids.length === 0 ? (resolved.response.text ?? null) : null;
  return { ...answered(resolved), optionIds: ids, labels, other, label: labels[0] ?? other };
}
