// input (an action tool): a question, an optional format; the answer is the typed text,
// checked here with the hub's rules (protocol/builtin_tools.py input_problem) before it goes.

import { useRef, useState, type FormEvent } from "react";
import { AnswerField } from "../../answering/AnswerField";
import { formatHint, formatProblem, inputModeOf } from "../../answering/formats";
import { Button } from "../../ui";
import { builtinDefinition } from "../definitions";
import { result, type ToolModule, type ToolRenderProps } from "../types";

function InputRenderer({ call, busy, submit }: ToolRenderProps) {
  const format = typeof call.arguments.format === "string" ? call.arguments.format : null;
  const placeholder = typeof call.arguments.placeholder === "string" ? call.arguments.placeholder : undefined;
  const [value, setValue] = useState("");
  const [error, setError] = useState<string | null>(null);
  const ref = useRef<HTMLInputElement | HTMLTextAreaElement>(null);
  const hint = formatHint(format);

  function send(e: FormEvent) {
    e.preventDefault();
    const text = value.trim();
    const problem = formatProblem(format, text);
    if (problem) {
      setError(problem);
      ref.current?.focus();
      return;
    }
    setError(null);
    submit(result(text));
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
