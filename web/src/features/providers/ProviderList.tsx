// The console's left pane: the installed providers — name, version, state, health, whether a
// change waits, whether a development key signed it — and the installs waiting for approval.

import type { Provider, ProviderChange, ProviderHealth } from "../../api/types";
import { Link } from "../../lib/router";
import { Badge, EmptyState, ErrorBanner, Icon, Loading, StatusPill } from "../../ui";
import type { Resource } from "../../lib/useResource";
import { changeTitle, healthOf, stateLook } from "./look";

const enc = encodeURIComponent;

/** The newest probe as a dot and a word. */
export function HealthMark({ health }: { health: ProviderHealth[] }) {
  const h = healthOf(health);
  return (
    <span className={`hmark hmark-${h.tone}`} data-testid="provider-health" title={h.latest?.detail || undefined}>
      <Icon name={h.tone === "unknown" ? "circle" : "dot"} size={14} />
      {h.label}
    </span>
  );
}

export function ProviderList({
  providers,
  installs,
  selected,
  canInstall,
  installing,
}: {
  providers: Resource<Provider[]>;
  /** Changes waiting for approval that would install a provider not installed yet. */
  installs: ProviderChange[];
  /** The open provider's id, or the open change's id. */
  selected: string | null;
  canInstall: boolean;
  installing: boolean;
}) {
  const list = providers.data;
  return (
    <div className="plist">
      <header className="plist-head">
        <h1>Providers</h1>
        {canInstall ? (
          <Link to="/providers?install=1" className="btn btn-secondary btn-sm" aria-current={installing ? "page" : undefined}>
            <Icon name="plus" size={15} /> Install…
          </Link>
        ) : null}
      </header>
      <p className="page-sub small">The systems agents reach through LineUp, each a checked, signed package.</p>

      {installs.length > 0 ? (
        <section aria-labelledby="plist-installs">
          <h2 id="plist-installs" className="plist-section">
            Waiting installs
          </h2>
          <ul className="plist-rows" aria-label="Waiting installs">
            {installs.map((c) => (
              <li key={c.id} className="prow" data-change-id={c.id}>
                <Link
                  to={`/providers?change=${enc(c.id)}`}
                  className="prow-link"
                  aria-current={selected === c.id ? "page" : undefined}
                >
                  <span className="prow-top">
                    <span className="prow-name">{changeTitle(c)}</span>
                  </span>
                  <span className="prow-marks">
                    <Badge tone="waiting">Waiting for approval</Badge>
                  </span>
                </Link>
              </li>
            ))}
          </ul>
        </section>
      ) : null}

      {providers.error && !list ? <ErrorBanner error={providers.error} onRetry={providers.reload} /> : null}
      {!list && !providers.error ? <Loading what="providers" /> : null}
      {list && list.length === 0 ? (
        <EmptyState
          icon="package"
          title="No provider is installed"
          action={
            canInstall ? (
              <Link to="/providers?install=1" className="btn btn-primary btn-sm">
                Install a provider
              </Link>
            ) : undefined
          }
        >
          {canInstall ? "Install one from the packages the hub found, or upload a package." : "Workspace owners install providers."}
        </EmptyState>
      ) : null}
      {list && list.length > 0 ? (
        <ul className="plist-rows" aria-label="Installed providers">
          {list.map((p) => (
            <li key={p.id} className="prow" data-provider-id={p.id} data-state={p.state}>
              <Link
                to={`/providers/${enc(p.id)}`}
                className="prow-link"
                aria-current={selected === p.id ? "page" : undefined}
              >
                <span className="prow-top">
                  <span className="prow-name">{p.name}</span>
                  <span className="prow-version">{p.version}</span>
                </span>
                <span className="prow-marks">
                  <StatusPill {...stateLook(p.state)} />
                  <HealthMark health={p.health} />
                  {p.pendingChange ? <Badge tone="waiting">Change waiting</Badge> : null}
                  {p.development ? <Badge tone="danger">Development</Badge> : null}
                </span>
              </Link>
            </li>
          ))}
        </ul>
      ) : null}
      {list && list.length > 0 && !canInstall ? (
        <p className="muted small">Workspace owners install and change providers.</p>
      ) : null}
    </div>
  );
}
