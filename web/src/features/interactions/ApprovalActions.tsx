import { useId, useRef, useState } from "react";
import { Button, type ButtonProps } from "../../ui";
import { AnswerField } from "../../answering/AnswerField";
import type { ActionProps } from "./InteractionCard";
import { CardContent } from "./CardContent";
import { editedInput, optionsOf } from "./validation";

export function variantOf(style: string | null | undefined): ButtonProps["variant"] {
  if (style === "primary") return "primary";
  if (style === "danger") return "danger";
  return "secondary";
}

const APPROVE = "approve";

function pretty(value: unknown): string {
  return JSON.stringify(value, null, 2);
}

/**
 * Approve / Reject (or the agent's own options), with an optional note. The card's content
 * (a command, a diff, a tool's input) shows above the buttons. When the agent offers the input
 * for editing, the person may change it as JSON before allowing; it is checked before it goes.
 */
export function ApprovalActions({ interaction, busy, pending, submit }: ActionProps) {
  const request = interaction.request;
  const proposed = request.editableInput ?? null;
  const [noteOpen, setNoteOpen] = useState(false);
  const [note, setNote] = useState("");
  const [editing, setEditing] = useState(false);
  const [draft, setDraft] = useState(() => (proposed ? pretty(proposed) : ""));
  const [inputError, setInputError] = useState<string | null>(null);
  const noteId = useId();
  const noteRef = useRef<HTMLTextAreaElement>(null);
  const inputRef = useRef<HTMLInputElement | HTMLTextAreaElement>(null);
  const options = optionsOf(request);

  function answer(optionId: string) {
    const text = note.trim();
    const response: { optionId: string; text?: string; input?: Record<string, unknown> } = { optionId };
    if (text) response.text = text;
    if (editing && proposed && optionId === APPROVE) {
      const checked = editedInput(draft, proposed);
      if (checked.error !== null) {
        setInputError(checked.error);
        inputRef.current?.focus();
        return;
      }
      if (checked.input) response.input = checked.input;
    }
    setInputError(null);
    submit(response);
  }

  return (
    <div className="actions-block">
      {request.content && !editing ? <CardContent text={request.content} label="What it will do" /> : null}
      {editing ? (
        <div className="input-editor">
          <AnswerField
            label="Input (JSON)"
            hint="Change the input before allowing it; it must stay a JSON object."
            rows={Math.min(14, Math.max(4, draft.split("\n").length + 1))}
            value={draft}
            onChange={(value) => {
              setDraft(value);
              if (inputError) setInputError(null);
            }}
            error={inputError}
            disabled={busy}
            fieldRef={inputRef}
          />
        </div>
      ) : null}
      {noteOpen ? (
        <div className="field">
          <label htmlFor={noteId}>Note (optional)</label>
          <textarea
            id={noteId}
            ref={noteRef}
            rows={2}
            value={note}
            disabled={busy}
            onChange={(e) => setNote(e.target.value)}
            placeholder="Anything the agent should know about your decision — why not, for a denial"
          />
        </div>
      ) : null}
      <div className="button-row">
        {options.map((option) => (
          <Button
            key={option.id}
            variant={variantOf(option.style)}
            busy={busy && pending?.optionId === option.id}
            disabled={busy}
            onClick={() => answer(option.id)}
          >
            {editing && option.id === APPROVE ? `${option.label} with edits` : option.label}
          </Button>
        ))}
        {proposed && !editing ? (
          <Button
            variant="secondary"
            disabled={busy}
            onClick={() => {
              setEditing(true);
              requestAnimationFrame(() => inputRef.current?.focus());
            }}
          >
            Edit input
          </Button>
        ) : null}
        {!noteOpen ? (
          <Button
            variant="ghost"
            size="sm"
            disabled={busy}
            onClick={() => {
              setNoteOpen(true);
              requestAnimationFrame(() => noteRef.current?.focus());
            }}
          >
            Add a note
          </Button>
        ) : null}
      </div>
    </div>
  );
}
