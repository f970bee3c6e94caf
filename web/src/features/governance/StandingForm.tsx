// "Approve and don't ask again": for N minutes and/or N calls, optionally only while each
// numeric parameter stays within a range (docs/protocol.md §7.15, standing permissions).

import { useId, useState, type FormEvent } from "react";
import type { ParamBound, StandingRequest } from "../../api/types";
import { Button } from "../../ui";

const MAX_MINUTES = 7 * 24 * 60;
const MAX_CALLS = 10_000;

interface Range {
  min: string;
  max: string;
}

function whole(text: string): number | null {
  if (!text.trim()) return null;
  const n = Number(text);
  return Number.isInteger(n) ? n : Number.NaN;
}

function numberOf(text: string): number | null {
  if (!text.trim()) return null;
  const n = Number(text);
  return Number.isFinite(n) ? n : Number.NaN;
}

/** The request, or the problem a person should fix. */
export function standingFrom(minutes: string, calls: string, ranges: Record<string, Range>): StandingRequest | string {
  const m = whole(minutes);
  const c = whole(calls);
  if (m === null && c === null) return "Give a number of minutes, of calls, or both.";
  if (Number.isNaN(m) || (m !== null && (m < 1 || m > MAX_MINUTES))) return `Minutes are a whole number from 1 to ${MAX_MINUTES}.`;
  if (Number.isNaN(c) || (c !== null && (c < 1 || c > MAX_CALLS))) return `Calls are a whole number from 1 to ${MAX_CALLS}.`;
  const bounds: Record<string, ParamBound> = {};
  for (const [name, range] of Object.entries(ranges)) {
    const lo = numberOf(range.min);
    const hi = numberOf(range.max);
    if (Number.isNaN(lo) || Number.isNaN(hi)) return `The range of ${name} takes numbers.`;
    if (lo !== null && hi !== null && lo > hi) return `The lowest ${name} is above the highest.`;
    if (lo !== null || hi !== null) bounds[name] = { ...(lo !== null ? { min: lo } : {}), ...(hi !== null ? { max: hi } : {}) };
  }
  return {
    ...(m !== null ? { minutes: m } : {}),
    ...(c !== null ? { calls: c } : {}),
    ...(Object.keys(bounds).length > 0 ? { bounds } : {}),
  };
}

export function StandingForm({
  params,
  busy,
  onSubmit,
  onCancel,
}: {
  params: Record<string, unknown>;
  busy: boolean;
  onSubmit: (standing: StandingRequest) => void;
  onCancel: () => void;
}) {
  const numeric = Object.entries(params).filter(([, v]) => typeof v === "number");
  const [minutes, setMinutes] = useState("60");
  const [calls, setCalls] = useState("");
  const [ranges, setRanges] = useState<Record<string, Range>>({});
  const [error, setError] = useState<string | null>(null);
  const minutesId = useId();
  const callsId = useId();
  const errorId = useId();
  const base = useId();

  function send(e: FormEvent) {
    e.preventDefault();
    const result = standingFrom(minutes, calls, ranges);
    if (typeof result === "string") {
      setError(result);
      return;
    }
    setError(null);
    onSubmit(result);
  }

  function setRange(name: string, end: keyof Range, value: string) {
    setRanges((r) => ({ ...r, [name]: { min: r[name]?.min ?? "", max: r[name]?.max ?? "", [end]: value } }));
  }

  return (
    <form className="actions-block standing-form" onSubmit={send} noValidate aria-label="Approve and don't ask again">
      <p className="small muted">
        Approve this call, and let later calls of the same action on the same target in this project run without asking
        while these limits hold. You can revoke it in Settings → Projects.
      </p>
      <div className="standing-row">
        <div className="field">
          <label htmlFor={minutesId}>For how many minutes</label>
          <input id={minutesId} type="number" inputMode="numeric" min={1} max={MAX_MINUTES} value={minutes} autoFocus disabled={busy} onChange={(e) => setMinutes(e.target.value)} />
        </div>
        <div className="field">
          <label htmlFor={callsId}>For how many calls</label>
          <input id={callsId} type="number" inputMode="numeric" min={1} max={MAX_CALLS} value={calls} placeholder="any" disabled={busy} onChange={(e) => setCalls(e.target.value)} />
        </div>
      </div>
      {numeric.length > 0 ? (
        <fieldset className="standing-bounds">
          <legend>Only while (optional)</legend>
          {numeric.map(([name, value]) => (
            <div key={name} className="standing-row">
              <div className="field">
                <label htmlFor={`${base}-${name}-min`}>Lowest {name}</label>
                <input
                  id={`${base}-${name}-min`}
                  type="number"
                  value={ranges[name]?.min ?? ""}
                  placeholder={String(value)}
                  disabled={busy}
                  onChange={(e) => setRange(name, "min", e.target.value)}
                />
              </div>
              <div className="field">
                <label htmlFor={`${base}-${name}-max`}>Highest {name}</label>
                <input
                  id={`${base}-${name}-max`}
                  type="number"
                  value={ranges[name]?.max ?? ""}
                  placeholder={String(value)}
                  disabled={busy}
                  onChange={(e) => setRange(name, "max", e.target.value)}
                />
              </div>
            </div>
          ))}
        </fieldset>
      ) : null}
      {error ? (
        <p id={errorId} className="field-error" role="alert">
          {error}
        </p>
      ) : null}
      <div className="button-row">
        <Button type="submit" variant="primary" busy={busy}>
          Approve and allow
        </Button>
        <Button variant="ghost" disabled={busy} onClick={onCancel}>
          Cancel
        </Button>
      </div>
    </form>
  );
}
