// confirm (an action tool): a yes/no question; the answer is "yes" or "no".

import { useState } from "react";
import { Button } from "../../ui";
import { builtinDefinition } from "../definitions";
import { result, type ToolModule, type ToolOutcome, type ToolRenderProps } from "../types";

export function confirmAnswer(confirmed: boolean): ToolOutcome {
  return result(confirmed ? "yes" : "no", { confirmed });
}

function ConfirmRenderer({ busy, submit }: ToolRenderProps) {
  const [pressed, setPressed] = useState<boolean | null>(null);
  const answer = (confirmed: boolean) => {
    setPressed(confirmed);
    submit(confirmAnswer(confirmed));
  };
  return (
    <div className="button-row" role="group" aria-label="Your answer">
      <Button variant="primary" icon="check" busy={busy && pressed === true} disabled={busy} onClick={() => answer(true)}>
        Yes
      </Button>
      <Button icon="close" busy={busy && pressed === false} disabled={busy} onClick={() => answer(false)}>
        No
      </Button>
    </div>
  );
}

export const confirm: ToolModule = {
  name: "confirm",
  definition: builtinDefinition("confirm"),
  icon: "shield",
  label: "Confirm",
  doneLabel: "Confirmation",
  title: (call) => String(call.arguments.message ?? "Confirm?"),
  Renderer: ConfirmRenderer,
  describe: (call) => (call.result?.message === "yes" ? "Yes" : call.result ? "No" : ""),
};
