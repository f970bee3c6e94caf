import { useRef, useState } from "react";
import { Button, Icon } from "../../ui";
import type { ActionProps } from "./InteractionCard";
import { DiffView } from "./CardContent";
import { looksLikeDiff } from "./diff";
import { linkAttributes } from "../../lib/links";
import { AnswerField } from "../../answering/AnswerField";

/** The content to check, its attachments, then Approve / Request changes (needs a comment). */
export function ReviewActions({ interaction, busy, pending, submit }: ActionProps) {
  const request = interaction.request;
  const [comment, setComment] = useState("");
  const [error, setError] = useState<string | null>(null);
  const ref = useRef<HTMLInputElement | HTMLTextAreaElement>(null);

  function approve() {
    setError(null);
    const text = comment.trim();
    submit(text ? { optionId: "approve", text } : { optionId: "approve" });
  }

  function requestChanges() {
    const text = comment.trim();
    if (!text) {
      setError("Say what should change: requesting changes needs a comment.");
      ref.current?.focus();
      return;
    }
    setError(null);
    submit({ optionId: "request_changes", text });
  }

  return (
    <div className="actions-block">
      {request.content ? (
        <div className="review-content" tabIndex={0} role="region" aria-label="Content to review">
          {looksLikeDiff(request.content) ? <DiffView text={request.content} /> : request.content}
        </div>
      ) : null}
      {request.attachments && request.attachments.length > 0 ? (
        <ul className="attachment-list">
          {request.attachments.map((a) => (
            <li key={a.url}>
              <a {...linkAttributes(a.url)}>
                <Icon name="file" size={15} /> {a.name}
              </a>
            </li>
          ))}
        </ul>
      ) : null}
      <AnswerField
        label="Comment (required to request changes)"
        rows={2}
        value={comment}
        onChange={(value) => {
          setComment(value);
          if (error) setError(null);
        }}
        error={error}
        disabled={busy}
        fieldRef={ref}
      />
      <div className="button-row">
        <Button variant="primary" busy={busy && pending?.optionId === "approve"} disabled={busy} onClick={approve}>
          Approve
        </Button>
        <Button busy={busy && pending?.optionId === "request_changes"} disabled={busy} onClick={requestChanges}>
          Request changes
        </Button>
      </div>
    </div>
  );
}
