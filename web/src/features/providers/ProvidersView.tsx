// The provider console (seed 003 §2.4): the installed providers on the left, the chosen one on
// the right — or installing one, or a waiting install's approval card. On a narrow screen the
// two panes become two steps: the list, then what was picked, with a way back.
//
// Where the console is lives in the address: /providers/<id>?tab=… for a provider,
// /providers?install=1 to install, /providers?change=<id> for a change not tied to an
// installed provider yet.

import { useEffect, useRef, type ReactNode } from "react";
import type { ProviderChange } from "../../api/types";
import { useWorkspace } from "../../app/workspace";
import { Link, navigate, useLocation } from "../../lib/router";
import { useResource } from "../../lib/useResource";
import { useTitle } from "../../lib/useTitle";
import { WIDE, useMediaQuery } from "../../lib/useMediaQuery";
import { EmptyState, ErrorBanner, Icon, Loading } from "../../ui";
import { ChangeCard } from "./ChangeCard";
import { InstallPane } from "./InstallPane";
import { ProviderDetail } from "./ProviderDetail";
import { ProviderList } from "./ProviderList";
import { touchesProviders } from "./facts";
import "./providers.css";

type Pane = { kind: "none" } | { kind: "provider"; id: string } | { kind: "install" } | { kind: "change"; id: string };

export function ProvidersView({ providerId }: { providerId?: string }) {
  const loc = useLocation();
  const wide = useMediaQuery(WIDE);
  const { api, workspace } = useWorkspace();
  const owner = workspace.role === "owner";
  const providers = useResource(() => api.providers().then((r) => r.providers), [api], { refreshOn: touchesProviders });
  const pending = useResource(() => api.providerChanges("pending").then((r) => r.changes), [api], {
    refreshOn: touchesProviders,
  });
  const changeId = loc.search.get("change");
  const pane: Pane = providerId
    ? { kind: "provider", id: providerId }
    : changeId
      ? { kind: "change", id: changeId }
      : loc.search.has("install")
        ? { kind: "install" }
        : { kind: "none" };

  const installed = new Set((providers.data ?? []).map((p) => p.id));
  const installs = (pending.data ?? []).filter((c) => c.action === "install" && !installed.has(c.providerId));

  function refresh() {
    providers.reload();
    pending.reload();
  }

  function requested(change: ProviderChange) {
    refresh();
    navigate(`/providers?change=${encodeURIComponent(change.id)}`);
  }

  const showList = wide || pane.kind === "none";
  const showPane = wide || pane.kind !== "none";
  const level = wide ? 2 : 1;
  const selected = pane.kind === "provider" || pane.kind === "change" ? pane.id : null;

  return (
    <div className={`providers${wide ? " providers-split" : ""}`}>
      {!showPane ? <PageTitle title="Providers" /> : null}
      {showList ? (
        <section className="providers-list-pane" aria-label="Providers">
          <ProviderList
            providers={providers}
            installs={installs}
            selected={selected}
            canInstall={owner}
            installing={pane.kind === "install"}
          />
        </section>
      ) : null}
      {showPane ? (
        <section className="providers-pane" aria-label={pane.kind === "none" ? "No provider selected" : "Provider"}>
          {!wide ? (
            <Link to="/providers" className="back-link">
              <Icon name="back" size={16} /> Providers
            </Link>
          ) : null}
          <PaneFocus pane={pane}>
            {pane.kind === "provider" ? (
              <ProviderDetail key={pane.id} providerId={pane.id} canChange={owner} headingLevel={level} onChanged={refresh} />
            ) : null}
            {pane.kind === "install" ? <InstallPane headingLevel={level} canInstall={owner} onRequested={requested} /> : null}
            {pane.kind === "change" ? (
              <ChangePane key={pane.id} changeId={pane.id} canDecide={owner} headingLevel={level} onDecided={refresh} />
            ) : null}
            {pane.kind === "none" ? <PageTitle title="Providers" /> : null}
            {pane.kind === "none" ? (
              <EmptyState icon="package" title="No provider selected">
                Pick a provider to see its version, capabilities, health, contract, logs and changes here.
              </EmptyState>
            ) : null}
          </PaneFocus>
        </section>
      ) : null}
    </div>
  );
}

/** The page's title while no pane names it. */
function PageTitle({ title }: { title: string }) {
  useTitle(title);
  return null;
}

/** Moving to another pane moves the reading position to its top. */
function PaneFocus({ pane, children }: { pane: Pane; children: ReactNode }) {
  const ref = useRef<HTMLDivElement>(null);
  const key = pane.kind === "provider" || pane.kind === "change" ? `${pane.kind}:${pane.id}` : pane.kind;
  const first = useRef(true);
  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    ref.current?.closest(".providers-pane")?.scrollTo?.({ top: 0 });
  }, [key]);
  return <div ref={ref}>{children}</div>;
}

/** A change looked up by id — a waiting install has no provider page yet. */
function ChangePane({
  changeId,
  canDecide,
  headingLevel,
  onDecided,
}: {
  changeId: string;
  canDecide: boolean;
  headingLevel: 1 | 2;
  onDecided: () => void;
}) {
  const { api } = useWorkspace();
  const changes = useResource(() => api.providerChanges("all").then((r) => r.changes), [api], {
    refreshOn: touchesProviders,
  });
  useTitle("Provider change");
  const change = changes.data?.find((c) => c.id === changeId);
  if (changes.error && !changes.data) return <ErrorBanner error={changes.error} onRetry={changes.reload} />;
  if (!changes.data) return <Loading what="the change" />;
  if (!change) {
    return (
      <EmptyState icon="package" title="There is no such change">
        <Link to="/providers">See the installed providers</Link>
      </EmptyState>
    );
  }
  return (
    <div className="stack">
      <ChangeCard
        change={change}
        api={api}
        canDecide={canDecide}
        headingLevel={headingLevel}
        onDecided={(c) => {
          changes.setData((list) => list?.map((x) => (x.id === c.id ? c : x)));
          changes.reload();
          onDecided();
        }}
      />
      {change.status === "applied" && change.action !== "uninstall" ? (
        <Link to={`/providers/${encodeURIComponent(change.providerId)}`} className="pane-next">
          Open {change.providerId} <Icon name="chevron" size={14} />
        </Link>
      ) : null}
    </div>
  );
}
