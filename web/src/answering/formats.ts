// The formats a typed answer may be asked in, checked with the hub's rules before it is sent
// (the same for an interaction's answer and the input tool's), with a sentence on how to fix it.

export type AnswerFormat = "text" | "email" | "url" | "number" | "integer";

const EMAIL = /^[^@\s]+@[^@\s]+\.[^@\s]+$/;
const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
const INTEGER = /^[+-]?\d+$/;
const INPUT_MODE: Readonly<Record<string, "email" | "url" | "decimal" | "numeric">> = {
  email: "email",
  url: "url",
  number: "decimal",
  integer: "numeric",
};

/** Why `text` is not an answer in `format` (a sentence for the person), or null. */
export function formatProblem(format: string | null | undefined, text: string): string | null {
  if (!text.trim()) return "An answer is required.";
  switch (format) {
    case "email":
      return EMAIL.test(text) ? null : "Enter an email address, like name@example.com.";
    case "url":
      return isWebUrl(text) ? null : "Enter a web address starting with http:// or https://.";
    case "number":
      return NUMBER.test(text.trim()) && Number.isFinite(Number(text)) ? null : "Enter a number, like 3 or 2.5.";
    case "integer":
      return INTEGER.test(text.trim()) ? null : "Enter a whole number, like 3.";
    default:
      return null;
  }
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

export function formatHint(format: string | null | undefined): string | null {
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

/** The on-screen keyboard that suits `format` on a phone. */
export function inputModeOf(format: string | null | undefined): "email" | "url" | "decimal" | "numeric" | undefined {
  return format && Object.hasOwn(INPUT_MODE, format) ? INPUT_MODE[format] : undefined;
}
