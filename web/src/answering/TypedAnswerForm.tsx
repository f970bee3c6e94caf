import { useRef, useState, type FormEvent } from "react";
import { Button } from "../ui";
import { AnswerField } from "./AnswerField";
import { inputModeOf } from "./formats";

interface TypedAnswerFormProps {
  /** The requested format (`email`, `number`, …), for the keyboard a phone shows. */
  format: string | null | undefined;
  hint: string | null;
  placeholder?: string;
  busy: boolean;
  /** What is wrong with the trimmed text, or null when it may be sent. */
  problem: (text: string) => string | null;
  onAnswer: (text: string) => void;
}

/** A typed answer — an input card's or the input tool's — checked before it is sent, so the
 * person learns what is wrong beside the field instead of from a refused request. */
export function TypedAnswerForm({ format, hint, placeholder, busy, problem, onAnswer }: TypedAnswerFormProps) {
  const [value, setValue] = useState("");
  const [error, setError] = useState<string | null>(null);
  const ref = useRef<HTMLInputElement | HTMLTextAreaElement>(null);

  function send(e: FormEvent) {
    e.preventDefault();
    const text = value.trim();
    const found = problem(text);
    if (found) {
      setError(found);
      ref.current?.focus();
      return;
    }
    setError(null);
    onAnswer(text);
  }

  return (
    <form className="actions-block inline-form" onSubmit={send} noValidate>
      <AnswerField
        label="Your answer"
        hint={hint}
        type="text"
        inputMode={inputModeOf(format)}
        autoComplete="off"
        placeholder={placeholder}
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
