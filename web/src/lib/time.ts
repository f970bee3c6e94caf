// Times as people read them: "2 min ago", "14:03", "Mon 3 Jun, 14:03".

export function parseTime(iso: string | null | undefined): Date | null {
  if (!iso) return null;
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? null : d;
}

export function relativeTime(iso: string | null | undefined, now: Date = new Date()): string {
  const d = parseTime(iso);
  if (!d) return "never";
  const seconds = Math.round((now.getTime() - d.getTime()) / 1000);
  if (seconds < 5) return "just now";
  if (seconds < 60) return `${seconds} s ago`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ago`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return `${hours} h ago`;
  const days = Math.floor(hours / 24);
  if (days < 7) return `${days} d ago`;
  return d.toLocaleDateString(undefined, { day: "numeric", month: "short", year: "numeric" });
}

export function clockTime(iso: string | null | undefined): string {
  const d = parseTime(iso);
  if (!d) return "";
  return d.toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit", second: "2-digit" });
}

export function fullTime(iso: string | null | undefined): string {
  const d = parseTime(iso);
  if (!d) return "unknown time";
  return d.toLocaleString(undefined, {
    weekday: "short",
    day: "numeric",
    month: "short",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
  });
}

/** "9:58" for a countdown. */
export function countdown(msLeft: number): string {
  const total = Math.max(0, Math.ceil(msLeft / 1000));
  const m = Math.floor(total / 60);
  const s = total % 60;
  return `${m}:${String(s).padStart(2, "0")}`;
}

/** A time a recorded fact carries (milliseconds since the epoch, or ISO 8601 text) as ISO text. */
export function isoOf(value: unknown): string | null {
  if (typeof value === "number") return new Date(value).toISOString();
  return typeof value === "string" ? value : null;
}
