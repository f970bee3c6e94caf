// choice (an action tool): a question and its options; the answer is the option chosen.

import { useState } from "react";
import type { ToolCall } from "../../api/types";
import { Button } from "../../ui";
import { builtinDefinition } from "../definitions";
import { result, type ToolModule, type ToolOutcome, type ToolRenderProps } from "../types";

export function optionsOf(call: ToolCall): string[] {
  const options = call.arguments.options;
  return Array.isArray(options) ? options.map(String) : [];
}

/** `{"message": <the option>, "index"}` — what the hub accepts for a choice. */
export function choiceAnswer(options: string[], picked: string): ToolOutcome {
  return result(picked, { index: options.indexOf(picked) });
}

function ChoiceRenderer({ call, busy, submit }: ToolRenderProps) {
  const options = optionsOf(call);
  const [picked, setPicked] = useState<string | null>(null);
  return (
    <div className="choice-list" role="group" aria-label="Options">
      {options.map((option) => (
        <Button
          key={option}
          className="choice-option"
          busy={busy && picked === option}
          disabled={busy}
          onClick={() => {
            setPicked(option);
            submit(choiceAnswer(options, option));
          }}
        >
          <span className="choice-label">{option}</span>
        </Button>
      ))}
    </div>
  );
}

export const choice: ToolModule = {
  name: "choice",
  definition: builtinDefinition("choice"),
  icon: "tasks",
  label: "Choose an option",
  doneLabel: "Choice",
  title: (call) => String(call.arguments.question ?? "Choose an option"),
  Renderer: ChoiceRenderer,
  describe: (call) => call.result?.message ?? "",
};
