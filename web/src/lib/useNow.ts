import { useEffect, useState } from "react";

/** The time, refreshed every `ms` (for "2 min ago" and countdowns). */
export function useNow(ms = 15_000): Date {
  const [now, setNow] = useState(() => new Date());
  useEffect(() => {
    const t = setInterval(() => setNow(new Date()), ms);
    return () => clearInterval(t);
  }, [ms]);
  return now;
}
