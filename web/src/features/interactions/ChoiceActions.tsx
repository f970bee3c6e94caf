import { useId, useRef, useState, type FormEvent } from "react";
import { Badge, Button } from "../../ui";
import type { ActionProps } from "./InteractionCard";
import { optionsOf } from "./validation";
import { variantOf } from "./ApprovalActions";
import { AnswerField } from "../../answering/AnswerField";

/** 2–5 options; the recommended one is marked; "Other" takes free text; `multiple` → checkboxes. */
export function ChoiceActions(props: ActionProps) {
  return props.interaction.request.multiple ? <MultipleChoice {...props} /> : <SingleChoice {...props} />;
}

function SingleChoice({ interaction, busy, pending, submit }: ActionProps) {
  const request = interaction.request;
  const options = optionsOf(request);
  const [otherOpen, setOtherOpen] = useState(false);
  const [other, setOther] = useState("");
  const [error, setError] = useState<string | null>(null);
  const otherRef = useRef<HTMLInputElement | HTMLTextAreaElement>(null);

  function sendOther(e: FormEvent) {
    e.preventDefault();
    if (!other.trim()) {
      setError("Say what your answer is, or pick one of the options.");
      otherRef.current?.focus();
      return;
    }
    setError(null);
    submit({ optionId: "other", text: other.trim() });
  }

  return (
    <div className="actions-block">
      <div className="choice-list" role="group" aria-label="Options">
        {options.map((option) => (
          <Button
            key={option.id}
            className={`choice-option${option.recommended ? " is-recommended" : ""}`}
            variant={variantOf(option.style) === "danger" ? "danger" : "secondary"}
            busy={busy && pending?.optionId === option.id}
            disabled={busy}
            onClick={() => submit({ optionId: option.id })}
          >
            <span className="choice-text">
              <span className="choice-label">{option.label}</span>
              {option.description ? <span className="choice-desc">{option.description}</span> : null}
            </span>
            {option.recommended ? <Badge tone="brand">Recommended</Badge> : null}
          </Button>
        ))}
        {request.allowOther && !otherOpen ? (
          <Button
            className="choice-option"
            variant="ghost"
            disabled={busy}
            onClick={() => {
              setOtherOpen(true);
              requestAnimationFrame(() => otherRef.current?.focus());
            }}
          >
            <span className="choice-label">Other…</span>
          </Button>
        ) : null}
      </div>
      {request.allowOther && otherOpen ? (
        <form className="inline-form" onSubmit={sendOther} noValidate>
          <AnswerField
            label="Other answer"
            value={other}
            onChange={setOther}
            error={error}
            disabled={busy}
            fieldRef={otherRef}
          />
          <Button type="submit" variant="primary" busy={busy && pending?.optionId === "other"} disabled={busy}>
            Send “Other”
          </Button>
        </form>
      ) : null}
    </div>
  );
}

function MultipleChoice({ interaction, busy, submit }: ActionProps) {
  const request = interaction.request;
  const options = optionsOf(request);
  const [picked, setPicked] = useState<string[]>([]);
  const [other, setOther] = useState("");
  const [error, setError] = useState<string | null>(null);
  const legendId = useId();
  const errorId = useId();
  const otherRef = useRef<HTMLInputElement>(null);

  function toggle(id: string, on: boolean) {
    setPicked((p) => (on ? [...p, id] : p.filter((x) => x !== id)));
  }

  function send(e: FormEvent) {
    e.preventDefault();
    if (picked.length === 0) {
      setError("Pick at least one option.");
      return;
    }
    const order = [...options.map((o) => o.id), "other"];
    const optionIds = order.filter((id) => picked.includes(id));
    if (optionIds.includes("other")) {
      if (!other.trim()) {
        setError("Say what “Other” is, or untick it.");
        otherRef.current?.focus();
        return;
      }
      setError(null);
      submit({ optionIds, text: other.trim() });
      return;
    }
    setError(null);
    submit({ optionIds });
  }

  return (
    <form className="actions-block" onSubmit={send} noValidate>
      <fieldset className="checks" aria-describedby={error ? errorId : undefined}>
        <legend id={legendId}>Pick one or more</legend>
        {options.map((option) => (
          <label key={option.id} className="check">
            <input
              type="checkbox"
              checked={picked.includes(option.id)}
              disabled={busy}
              onChange={(e) => toggle(option.id, e.target.checked)}
            />
            <span className="choice-text">
              <span className="choice-label">{option.label}</span>
              {option.description ? <span className="choice-desc">{option.description}</span> : null}
            </span>
            {option.recommended ? <Badge tone="brand">Recommended</Badge> : null}
          </label>
        ))}
        {request.allowOther ? (
          <div className="check check-other">
            <label className="check-inline">
              <input
                type="checkbox"
                checked={picked.includes("other")}
                disabled={busy}
                onChange={(e) => {
                  toggle("other", e.target.checked);
                  if (e.target.checked) requestAnimationFrame(() => otherRef.current?.focus());
                }}
              />
              <span className="choice-label">Other</span>
            </label>
            {picked.includes("other") ? (
              <input
                ref={otherRef}
                aria-label="Other answer"
                value={other}
                disabled={busy}
                onChange={(e) => setOther(e.target.value)}
              />
            ) : null}
          </div>
        ) : null}
      </fieldset>
      {error ? (
        <p id={errorId} className="field-error" role="alert">
          {error}
        </p>
      ) : null}
      <div className="button-row">
        <Button type="submit" variant="primary" busy={busy} disabled={busy}>
          {busy ? "Submitting…" : "Send answer"}
        </Button>
      </div>
    </form>
  );
}
