// One installed provider: who made it and what it is signed with, what agents can call through
// it, its health history, the contract kit's report, its recent log lines, how many accounts
// are bound to it, and its change history; above them, the change waiting for approval and —
// for workspace owners — what they can ask for next.

import { useState } from "react";
import { ApiError } from "../../api/client";
import type { ProviderChange, ProviderDetail as Detail } from "../../api/types";
import { useWorkspace } from "../../app/workspace";
import { Link, navigate, useLocation, withQuery } from "../../lib/router";
import { fullTime } from "../../lib/time";
import { useResource } from "../../lib/useResource";
import { useTitle } from "../../lib/useTitle";
import { Badge, Banner, Button, EmptyState, ErrorBanner, Icon, Loading, RelativeTime, StatusPill, Tabs } from "../../ui";
import { shortDigest } from "../governance/status";
import { ChangeCard } from "./ChangeCard";
import { ContractResults } from "./ContractResults";
import { AUTH_WORDS, changeLook, changeTitle, failedChecks, stateLook } from "./look";
import { HealthMark } from "./ProviderList";
import { ProviderActions } from "./ProviderActions";
import { touchesProviders } from "./facts";

type Tab = "overview" | "capabilities" | "health" | "contract" | "logs" | "bindings" | "changes";

const TABS: Array<{ id: Tab; label: string }> = [
  { id: "overview", label: "Overview" },
  { id: "capabilities", label: "Capabilities" },
  { id: "health", label: "Health" },
  { id: "contract", label: "Contract" },
  { id: "logs", label: "Logs" },
  { id: "bindings", label: "Bindings" },
  { id: "changes", label: "Changes" },
];

export function ProviderDetail({
  providerId,
  canChange,
  headingLevel,
  onChanged,
}: {
  providerId: string;
  /** A workspace owner: asks for changes and decides them. */
  canChange: boolean;
  headingLevel: 1 | 2;
  /** Something about the provider changed here (the list shows it too). */
  onChanged: () => void;
}) {
  const loc = useLocation();
  const { api } = useWorkspace();
  const detail = useResource(() => api.provider(providerId), [api, providerId], { refreshOn: touchesProviders });
  // a decided change stays on screen with its outcome until the person moves on
  const [decided, setDecided] = useState<ProviderChange | null>(null);
  const p = detail.data;
  useTitle(p ? p.name : "Provider");
  const current = TABS.find((t) => t.id === loc.search.get("tab"))?.id ?? "overview";
  const Heading = `h${headingLevel}` as "h2";

  if (detail.error && !p) {
    if (detail.error.code === "not_found") {
      return (
        <EmptyState icon="package" title="There is no such provider">
          It may have been uninstalled. <Link to="/providers">See the installed providers</Link>.
        </EmptyState>
      );
    }
    return <ErrorBanner error={detail.error} onRetry={detail.reload} />;
  }
  if (!p) return <Loading what="the provider" />;

  function requested(change: ProviderChange) {
    setDecided(null);
    detail.setData((d) => (d ? { ...d, pendingChange: change } : d));
    detail.reload();
    onChanged();
  }

  function decidedHere(change: ProviderChange) {
    setDecided(change);
    detail.reload();
    onChanged();
  }

  const card = p.pendingChange ?? (decided && decided.providerId === p.id ? decided : null);
  const look = stateLook(p.state);
  return (
    <div className="pdetail" data-provider-id={p.id} data-state={p.state}>
      <header className="pdetail-head">
        <Heading className="pdetail-title">{p.name}</Heading>
        <p className="pdetail-sub">
          <code>{p.id}</code>
          <span data-testid="provider-version">{p.version}</span>
          <span data-testid="provider-state">
            <StatusPill {...look} />
          </span>
          <HealthMark health={p.health} />
          {p.development ? <Badge tone="waiting">Development</Badge> : null}
          {p.source === "bundled" ? <Badge>Bundled</Badge> : null}
        </p>
        {p.description ? <p className="muted">{p.description}</p> : null}
        {canChange ? (
          <ProviderActions provider={p} onRequested={requested} />
        ) : (
          <p className="gcard-readonly">
            <Icon name="info" size={14} /> You can see this provider; workspace owners install and change providers.
          </p>
        )}
      </header>

      {card ? (
        <ChangeCard
          key={card.id}
          change={card}
          api={api}
          providerName={p.name}
          canDecide={canChange}
          headingLevel={headingLevel === 1 ? 2 : 3}
          onDecided={decidedHere}
        />
      ) : null}

      <Tabs
        tabs={TABS}
        current={current}
        onSelect={(t) => navigate(withQuery(loc, { tab: t === "overview" ? null : t }), { replace: true })}
        label={`About ${p.name}`}
        idPrefix="provider"
      >
        {current === "overview" ? <Overview p={p} /> : null}
        {current === "capabilities" ? <Capabilities p={p} /> : null}
        {current === "health" ? <Health p={p} canCheck={canChange} onChecked={detail.reload} /> : null}
        {current === "contract" ? <Contract p={p} /> : null}
        {current === "logs" ? <Logs p={p} /> : null}
        {current === "bindings" ? <Bindings p={p} /> : null}
        {current === "changes" ? <Changes p={p} /> : null}
      </Tabs>
    </div>
  );
}

function Overview({ p }: { p: Detail }) {
  return (
    <dl className="kv" aria-label="Overview">
      <div className="kv-row">
        <dt>Vendor</dt>
        <dd>{p.vendor}</dd>
      </div>
      <div className="kv-row">
        <dt>Version</dt>
        <dd>{p.version}</dd>
      </div>
      <div className="kv-row">
        <dt>Digest</dt>
        <dd title={p.digest}>
          <code data-testid="provider-digest">{shortDigest(p.digest)}</code>
        </dd>
      </div>
      <div className="kv-row">
        <dt>Signed by</dt>
        <dd>
          {p.signer ? <code>{p.signer}</code> : p.source === "bundled" ? "Bundled with LineUp (not signed)" : "Not signed"}
          {p.development ? " — a development key the operator allows" : null}
        </dd>
      </div>
      <div className="kv-row">
        <dt>Source</dt>
        <dd>{p.source === "bundled" ? "Bundled with LineUp" : "Installed package"}</dd>
      </div>
      <div className="kv-row">
        <dt>Accounts</dt>
        <dd>{AUTH_WORDS[p.auth.kind] ?? p.auth.kind}</dd>
      </div>
      <div className="kv-row">
        <dt>Previous version</dt>
        <dd data-testid="provider-previous">
          {p.previous ? (
            <>
              {p.previous.version} <code title={p.previous.digest}>{shortDigest(p.previous.digest)}</code>
            </>
          ) : (
            "None kept"
          )}
        </dd>
      </div>
      <div className="kv-row">
        <dt>Installed</dt>
        <dd>
          {p.installedAt ? <time dateTime={p.installedAt}>{fullTime(p.installedAt)}</time> : "Shipped with the hub"}
        </dd>
      </div>
    </dl>
  );
}

function Capabilities({ p }: { p: Detail }) {
  if (p.capabilities.length === 0) return <p className="quiet-empty muted">This provider offers no capabilities.</p>;
  return (
    <ul className="pcap-list" aria-label="Capabilities">
      {p.capabilities.map((c) => (
        <li key={c.id} className="pcap-row">
          <span className="pcap-main">
            <code>{c.id}</code>
            <Badge tone={c.effect === "write" ? "waiting" : "neutral"}>{c.effect === "write" ? "Write" : "Read"}</Badge>
            <Badge>{c.mode === "async" ? "Async" : "Sync"}</Badge>
          </span>
          {c.description ? <span className="pcap-desc muted">{c.description}</span> : null}
        </li>
      ))}
    </ul>
  );
}

function Health({ p, canCheck, onChecked }: { p: Detail; canCheck: boolean; onChecked: () => void }) {
  const { api } = useWorkspace();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  async function check() {
    setBusy(true);
    setError(null);
    try {
      await api.checkProviderHealth(p.id);
      onChecked();
    } catch (err) {
      setError(err instanceof ApiError ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  }
  return (
    <div className="stack">
      {canCheck ? (
        <div className="button-row">
          <Button icon="running" busy={busy} onClick={() => void check()}>
            Check now
          </Button>
          <span className="muted small">The hub also checks on a schedule and keeps the last 20 results.</span>
        </div>
      ) : null}
      {error ? (
        <Banner tone="danger" live="assertive" title="The check did not run">
          {error}
        </Banner>
      ) : null}
      {p.health.length === 0 ? (
        <p className="quiet-empty muted">Not checked yet.</p>
      ) : (
        <ol className="phealth-list" aria-label="Health history">
          {p.health.map((h, i) => (
            <li key={`${h.checkedAt}-${i}`} className={`phealth-row ${h.ok ? "phealth-ok" : "phealth-failing"}`}>
              <Icon name={h.ok ? "checkCircle" : "xCircle"} size={16} className="phealth-icon" />
              <strong>{h.ok ? "Healthy" : "Unhealthy"}</strong>
              {h.detail ? <span className="phealth-detail">{h.detail}</span> : null}
              <RelativeTime iso={h.checkedAt} className="muted small" />
            </li>
          ))}
        </ol>
      )}
    </div>
  );
}

function Contract({ p }: { p: Detail }) {
  if (!p.contract) return <p className="quiet-empty muted">No contract report for this version.</p>;
  const failed = failedChecks(p.contract);
  return (
    <div className="stack">
      {failed > 0 ? (
        <Banner tone="danger" title="This version does not meet the contract">
          Failed checks come first, with the rule each broke.
        </Banner>
      ) : null}
      <ContractResults report={p.contract} />
    </div>
  );
}

function Logs({ p }: { p: Detail }) {
  if (p.logs.length === 0) return <p className="quiet-empty muted">Nothing logged yet.</p>;
  return (
    <ol className="plogs" aria-label="Log lines">
      {p.logs.map((line, i) => (
        <li key={`${line.at}-${i}`} className={`plog plog-${line.level.toLowerCase()}`}>
          <time dateTime={line.at} className="plog-at">
            {fullTime(line.at)}
          </time>
          <span className="plog-level">{line.level}</span>
          <span className="plog-message">{line.message}</span>
        </li>
      ))}
    </ol>
  );
}

function Bindings({ p }: { p: Detail }) {
  const perPerson = p.auth.kind === "oauth" || p.auth.kind === "password-exchange";
  return (
    <div className="stack">
      <dl className="kv" aria-label="Bindings">
        <div className="kv-row">
          <dt>Bound accounts</dt>
          <dd data-testid="bindings-bound">{p.bindings.bound}</dd>
        </div>
        <div className="kv-row">
          <dt>Expired</dt>
          <dd data-testid="bindings-expired">{p.bindings.expired}</dd>
        </div>
      </dl>
      <p className="muted small">
        {perPerson ? (
          <>
            Each person binds their own account on this system. <Link to="/settings">Bind yours in Settings</Link>.
          </>
        ) : p.auth.kind === "apikey" ? (
          "The operator’s API key serves everyone: nobody binds an account."
        ) : (
          "This system needs no account."
        )}
      </p>
    </div>
  );
}

function Changes({ p }: { p: Detail }) {
  if (p.changes.length === 0) return <p className="quiet-empty muted">No changes yet.</p>;
  return (
    <ol className="pchange-list" aria-label="Change history">
      {p.changes.map((c) => (
        <li key={c.id} className="pchange-row" data-change-id={c.id}>
          <span className="pchange-top">
            <span className="pchange-title">{changeTitle(c, p.name)}</span>
            <StatusPill {...changeLook(c.status)} />
          </span>
          <span className="approval-row-meta">
            <span>
              asked by {c.requestedBy.name} <RelativeTime iso={c.requestedAt} />
            </span>
            {c.decidedBy ? (
              <span>
                decided by {c.decidedBy.name} <RelativeTime iso={c.decidedAt} />
              </span>
            ) : null}
            {c.reason ? <span>“{c.reason}”</span> : null}
          </span>
        </li>
      ))}
    </ol>
  );
}
