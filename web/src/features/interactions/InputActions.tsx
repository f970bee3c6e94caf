import { TypedAnswerForm } from "../../answering/TypedAnswerForm";
import { formatHint } from "../../answering/formats";
import type { ActionProps } from "./InteractionCard";
import { validateInput } from "./validation";

/** A typed answer, checked against the requested format and pattern before it is sent. */
export function InputActions({ interaction, busy, submit }: ActionProps) {
  const request = interaction.request;
  const hint = [formatHint(request.format), request.pattern ? `must match ${request.pattern}` : null]
    .filter(Boolean)
    .join(", ");
  return (
    <TypedAnswerForm
      format={request.format}
      hint={hint}
      placeholder={request.placeholder ?? undefined}
      busy={busy}
      problem={(text) => validateInput(request, text)}
      onAnswer={(text) => submit({ text })}
    />
  );
}
