import { useId, useRef, useState } from "react";
import { Button, type ButtonProps } from "../../ui";
import type { ActionProps } from "./InteractionCard";
import { optionsOf } from "./validation";

export function variantOf(style: string | null | undefined): ButtonProps["variant"] {
  if (style === "primary") return "primary";
  if (style === "danger") return "danger";
  return "secondary";
}

/** Approve / Reject (or the agent's own options), with an optional note. */
export function ApprovalActions({ interaction, busy, pending, submit }: ActionProps) {
  const [noteOpen, setNoteOpen] = useState(false);
  const [note, setNote] = useState("");
  const noteId = useId();
  const noteRef = useRef<HTMLTextAreaElement>(null);
  const options = optionsOf(interaction.request);
  function answer(optionId: string) {
    const text = note.trim();
    submit(text ? { optionId, text } : { optionId });
  }
  return (
    <div className="actions-block">
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
            placeholder="Anything the agent should know about your decision"
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
            {option.label}
          </Button>
        ))}
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
