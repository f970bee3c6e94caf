import type { ReactNode } from "react";
import { Icon, type IconName } from "./Icon";

const icons: Record<string, IconName> = {
  info: "info",
  warning: "alert",
  danger: "xCircle",
  success: "checkCircle",
  offline: "wifiOff",
};

/** A line of news about the page: offline, an error, a requested cancel. */
export function Banner({
  tone = "info",
  icon,
  title,
  children,
  action,
  live = "polite",
}: {
  tone?: "info" | "warning" | "danger" | "success" | "offline";
  icon?: IconName;
  title?: ReactNode;
  children?: ReactNode;
  action?: ReactNode;
  live?: "polite" | "assertive" | "off";
}) {
  return (
    <div className={`banner banner-${tone}`} role={live === "assertive" ? "alert" : "status"} aria-live={live === "off" ? undefined : live}>
      <Icon name={icon ?? icons[tone] ?? "info"} size={18} className="banner-icon" />
      <div className="banner-body">
        {title ? <strong className="banner-title">{title}</strong> : null}
        {children ? <span className="banner-text">{children}</span> : null}
      </div>
      {action ? <div className="banner-action">{action}</div> : null}
    </div>
  );
}

export function ErrorBanner({ error, onRetry }: { error: { message: string } | null; onRetry?: () => void }) {
  if (!error) return null;
  return (
    <Banner
      tone="danger"
      live="assertive"
      title="Something went wrong"
      action={
        onRetry ? (
          <button type="button" className="btn btn-secondary btn-sm" onClick={onRetry}>
            Try again
          </button>
        ) : undefined
      }
    >
      {error.message}
    </Banner>
  );
}
