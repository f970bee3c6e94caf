/** A progress bar with its number as text too (role=progressbar for assistive tech). */
export function ProgressBar({ value, label, compact = false }: { value: number | null; label: string; compact?: boolean }) {
  const v = value == null ? null : Math.max(0, Math.min(100, Math.round(value)));
  return (
    <div className={compact ? "progress progress-compact" : "progress"}>
      <div
        className="progress-track"
        role="progressbar"
        aria-label={label}
        aria-valuemin={0}
        aria-valuemax={100}
        aria-valuenow={v ?? undefined}
        aria-valuetext={v == null ? "No progress reported yet" : `${v}%`}
      >
        <div className="progress-fill" style={{ width: `${v ?? 0}%` }} />
      </div>
      {!compact ? <span className="progress-value">{v == null ? "—" : `${v}%`}</span> : null}
    </div>
  );
}
