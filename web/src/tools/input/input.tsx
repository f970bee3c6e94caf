// input (an action tool): a question, an optional format; the answer is the typed text,
// checked here with the hub's rules (protocol/builtin_tools.py input_problem) before it goes.

import { useId, useRef, useState, type FormEvent } from "react";
import { Button } from "../../ui";
import { builtinDefinition } from "../definitions";
import { result, type ToolModule, type ToolRenderProps } from "../types";

export type InputFormat = "text" | "email" | "url" | "number" | "integer";

const EMAIL = /^[^@\s]+@[^@\s]+\.[^@\s]+$/;
const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
const INTEGER = /^[+-]?\d+$/;
const INPUT_MODE = { email: "email", url: "url", number: "decimal", integer: "numeric" } as const;

/** Why `text` is not an answer in `format` (a sentence for the person), or null. */
export function inputProblem(format: string | null | undefined, text: string): string | null {
  if (!text.trim()) return "An answer is required.";
  switch (format) {
    case "email":
      return EMAIL.test(text) ? null : "Enter an email address, like name@example.com.";
    case "url": {
      let ok = false;
      try {
        const url = new URL(text);
        ok = (url.protocol === "http:" || url.protocol === "https:") && !!url.host && !/\s/.test(text);
      } catch {
        ok = false;
      }
      return ok ? null : "Enter a web address starting with http:// or https://.";
    }
    case "number":
      return NUMBER.test(text.trim()) && Number.isFinite(Number(text)) ? null : "Enter a number, like 3 or 2.5.";
    case "integer":
      return INTEGER.test(text.trim()) ? null : "Enter a whole number, like 3.";
    default:
      return null;
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

function InputRenderer({ call, busy, submit }: ToolRenderProps) {
  const format = typeof call.arguments.format === "string" ? call.arguments.format : null;
  const placeholder = typeof call.arguments.placeholder === "string" ? call.arguments.placeholder : undefined;
  const [value, setValue] = useState("");
  const [error, setError] = useState<string | null>(null);
  const inputId = useId();
  const hintId = useId();
  const errorId = useId();
  const ref = useRef<HTMLInputElement>(null);
  const hint = formatHint(format);

  function send(e: FormEvent) {
    e.preventDefault();
    const text = value.trim();
    const problem = inputProblem(format, text);
    if (problem) {
      setError(problem);
      ref.current?.focus();
      return;
    }
    setError(null);
    submit(result(text));
  }

  const describedBy = [hint ? hintId : null, error ? errorId : null].filter(Boolean).join(" ") || undefined;
  return (
    <form className="actions-block inline-form" onSubmit={send} noValidate>
      <div className="field">
        <label htmlFor={inputId}>Your answer</label>
        {hint ? (
          <p id={hintId} className="field-hint">
            {hint}
          </p>
        ) : null}
        <input
          id={inputId}
          ref={ref}
          type="text"
          inputMode={format && format in INPUT_MODE ? INPUT_MODE[format as keyof typeof INPUT_MODE] : undefined}
          autoComplete="off"
          placeholder={placeholder}
          value={value}
          disabled={busy}
          onChange={(e) => {
            setValue(e.target.value);
            if (error) setError(null);
          }}
          aria-invalid={error ? true : undefined}
          aria-describedby={describedBy}
        />
        {error ? (
          <p id={errorId} className="field-error" role="alert">
            {error}
          </p>
        ) : null}
      </div>
      <Button type="submit" variant="primary" busy={busy} disabled={busy}>
        {busy ? "Submitting…" : "Send answer"}
      </Button>
    </form>
  );
}

export const input: ToolModule = {
  name: "input",
  definition: builtinDefinition("input"),
  icon: "pencil",
  label: "Question for you",
  doneLabel: "Question",
  title: (call) => String(call.arguments.question ?? "Question"),
  Renderer: InputRenderer,
  describe: (call) => call.result?.message ?? "",
};
