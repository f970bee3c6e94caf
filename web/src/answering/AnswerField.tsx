// The one labelled text field of every answer form (an interaction's answer, an "other"
// choice, a review comment, the input tool): its hint and its error are tied to it for screen
// readers, and the error is announced when it appears.

import { useId, type HTMLAttributes, type RefObject } from "react";

export interface AnswerFieldProps {
  label: string;
  value: string;
  onChange: (value: string) => void;
  /** Why the value cannot be sent, shown under the field; null while there is nothing to say. */
  error: string | null;
  disabled: boolean;
  hint?: string | null;
  /** Rows of a multi-line field; a single line when absent. */
  rows?: number;
  /** Where the caller keeps the control, to put the focus back on it after an error. */
  fieldRef?: RefObject<HTMLInputElement | HTMLTextAreaElement | null>;
  type?: "text";
  inputMode?: HTMLAttributes<HTMLInputElement>["inputMode"];
  autoComplete?: string;
  placeholder?: string;
}

export function AnswerField({
  label,
  value,
  onChange,
  error,
  disabled,
  hint,
  rows,
  fieldRef,
  type,
  inputMode,
  autoComplete,
  placeholder,
}: AnswerFieldProps) {
  const id = useId();
  const hintId = useId();
  const errorId = useId();
  const describedBy = [hint ? hintId : null, error ? errorId : null].filter(Boolean).join(" ") || undefined;
  const keep = (element: HTMLInputElement | HTMLTextAreaElement | null) => {
    if (fieldRef) fieldRef.current = element;
  };
  const shared = {
    id,
    value,
    disabled,
    onChange: (e: { target: { value: string } }) => onChange(e.target.value),
    "aria-invalid": error ? true : undefined,
    "aria-describedby": describedBy,
  };
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {hint ? (
        <p id={hintId} className="field-hint">
          {hint}
        </p>
      ) : null}
      {rows !== undefined ? (
        <textarea ref={keep} rows={rows} {...shared} />
      ) : (
        <input
          ref={keep}
          type={type}
          inputMode={inputMode}
          autoComplete={autoComplete}
          placeholder={placeholder}
          {...shared}
        />
      )}
      {error ? (
        <p id={errorId} className="field-error" role="alert">
          {error}
        </p>
      ) : null}
    </div>
  );
}
