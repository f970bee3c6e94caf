import { useSyncExternalStore } from "react";
import { clockNow, subscribeClock } from "../lib/clock";
import { fullTime, relativeTime } from "../lib/time";

/** "18 s ago" that keeps counting; re-renders only when the words change. */
export function RelativeTime({ iso, className }: { iso: string | null | undefined; className?: string }) {
  const text = useSyncExternalStore(subscribeClock, () => relativeTime(iso, new Date(clockNow())));
  if (!iso) return <span className={className}>{text}</span>;
  return (
    <time className={className} dateTime={iso} title={fullTime(iso)}>
      {text}
    </time>
  );
}
