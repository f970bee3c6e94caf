/** A quiet spinner; pair it with text that says what is loading. */
export function Spinner({ size = 16, label }: { size?: number; label?: string }) {
  return (
    <span className="spinner-wrap" role={label ? "status" : undefined}>
      <svg className="spinner" width={size} height={size} viewBox="0 0 24 24" aria-hidden="true">
        <circle cx="12" cy="12" r="9" fill="none" stroke="currentColor" strokeWidth="3" opacity="0.2" />
        <path d="M21 12a9 9 0 0 0-9-9" fill="none" stroke="currentColor" strokeWidth="3" strokeLinecap="round" />
      </svg>
      {label ? <span className="spinner-label">{label}</span> : null}
    </span>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <div className="loading">
      <Spinner label={`Loading ${what}…`} />
    </div>
  );
}
