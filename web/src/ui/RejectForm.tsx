/** A reason asked for before a rejection is sent: the approval and change cards share it. */
import { useId, useState, type FormEvent } from "react";
import { Button } from "./Button";

export function RejectForm({
  busy,
  onSubmit,
  onCancel,
  hint,
}: {
  busy: boolean;
  onSubmit: (reason: string) => void;
  onCancel: () => void;
  /** Why a reason is asked for, shown when none was given. */
  hint: string;
}) {
  const [reason, setReason] = useState("");
  const [error, setError] = useState<string | null>(null);
  const id = useId();
  const errorId = useId();
  function send(e: FormEvent) {
    e.preventDefault();
    if (!reason.trim()) {
      setError(hint);
      return;
    }
    onSubmit(reason.trim());
  }
  return (
    <form className="actions-block" onSubmit={send} noValidate aria-label="Reject">
      <div className="field">
        <label htmlFor={id}>Why are you rejecting it?</label>
        <textarea
          id={id}
          rows={2}
          value={reason}
          autoFocus
          disabled={busy}
          onChange={(e) => setReason(e.target.value)}
          aria-invalid={error ? true : undefined}
          aria-describedby={error ? errorId : undefined}
          maxLength={2000}
        />
        {error ? (
          <p id={errorId} className="field-error" role="alert">
            {error}
          </p>
        ) : null}
      </div>
      <div className="button-row">
        <Button type="submit" variant="danger" busy={busy}>
          Reject
        </Button>
        <Button variant="ghost" disabled={busy} onClick={onCancel}>
          Cancel
        </Button>
      </div>
    </form>
  );
}
