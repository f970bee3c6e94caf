import { useId, useRef, useState, type FormEvent } from "react";
import { Button } from "../../ui";
import type { ActionProps } from "./InteractionCard";
import { formatHint, validateInput } from "./validation";

const INPUT_MODE = { email: "email", url: "url", number: "decimal", integer: "numeric" } as const;

/** A typed answer, checked against the requested format and pattern before it is sent. */
export function InputActions({ interaction, busy, submit }: ActionProps) {
  const request = interaction.request;
  const [value, setValue] = useState("");
  const [error, setError] = useState<string | null>(null);
  const inputId = useId();
  const hintId = useId();
  const errorId = useId();
  const ref = useRef<HTMLInputElement>(null);
  const hint = [formatHint(request.format), request.pattern ? `must match ${request.pattern}` : null]
    .filter(Boolean)
    .join(", ");

  function send(e: FormEvent) {
    e.preventDefault();
    const problem = validateInput(request, value);
    if (problem) {
      setError(problem);
      ref.current?.focus();
      return;
    }
    setError(null);
    submit({ text: value.trim() });
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
          inputMode={request.format && request.format !== "text" ? INPUT_MODE[request.format] : undefined}
          autoComplete="off"
          placeholder={request.placeholder ?? undefined}
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
