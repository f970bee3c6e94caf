import { useRef, useState, type FormEvent } from "react";
import { Button } from "../../ui";
import { AnswerField } from "../../answering/AnswerField";
import { formatHint, inputModeOf } from "../../answering/formats";
import type { ActionProps } from "./InteractionCard";
import { validateInput } from "./validation";

/** A typed answer, checked against the requested format and pattern before it is sent. */
export function InputActions({ interaction, busy, submit }: ActionProps) {
  const request = interaction.request;
  const [value, setValue] = useState("");
  const [error, setError] = useState<string | null>(null);
  const ref = useRef<HTMLInputElement | HTMLTextAreaElement>(null);
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

  return (
    <form className="actions-block inline-form" onSubmit={send} noValidate>
      <AnswerField
        label="Your answer"
        hint={hint}
        type="text"
        inputMode={inputModeOf(request.format)}
        autoComplete="off"
        placeholder={request.placeholder ?? undefined}
        value={value}
        onChange={(next) => {
          setValue(next);
          if (error) setError(null);
        }}
        error={error}
        disabled={busy}
        fieldRef={ref}
      />
      <Button type="submit" variant="primary" busy={busy} disabled={busy}>
        {busy ? "Submitting…" : "Send answer"}
      </Button>
    </form>
  );
}
