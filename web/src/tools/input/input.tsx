// input (an action tool): a question, an optional format; the answer is the typed text,
// checked here with the hub's rules (protocol/builtin_tools.py input_problem) before it goes.

import { TypedAnswerForm } from "../../answering/TypedAnswerForm";
import { formatHint, formatProblem } from "../../answering/formats";
import { builtinDefinition } from "../definitions";
import { result, type ToolModule, type ToolRenderProps } from "../types";

function InputRenderer({ call, busy, submit }: ToolRenderProps) {
  const format = typeof call.arguments.format === "string" ? call.arguments.format : null;
  const placeholder = typeof call.arguments.placeholder === "string" ? call.arguments.placeholder : undefined;
  return (
    <TypedAnswerForm
      format={format}
      hint={formatHint(format)}
      placeholder={placeholder}
      busy={busy}
      problem={(text) => formatProblem(format, text)}
      onAnswer={(text) => submit(result(text))}
    />
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
