import type { ReactNode } from "react";

/** A small count or label next to something; `label` is what a screen reader hears. */
export function Badge({
  children,
  tone = "neutral",
  label,
}: {
  children: ReactNode;
  tone?: "neutral" | "brand" | "waiting" | "danger" | "success";
  label?: string;
}) {
  return (
    <span className={`badge badge-${tone}`} aria-label={label}>
      {children}
    </span>
  );
}

export function CountBadge({ count, label }: { count: number; label: string }) {
  if (count <= 0) return null;
  return (
    <span className="count-badge" aria-label={`${count} ${label}`}>
      {count > 99 ? "99+" : count}
    </span>
  );
}
