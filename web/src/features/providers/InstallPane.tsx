// Installing a provider: the packages the hub found in its provider directory — each read,
// nothing in it run — and a package uploaded from this computer, which the hub verifies
// (signature, digest, the static check) before listing it. A refused package shows the rule it
// broke and cannot be installed. Installing asks for a change that waits for approval, after
// the contract kit has run on the package.

import { useId, useRef, useState, type ChangeEvent } from "react";
import { ApiError } from "../../api/client";
import type { AvailablePackage, ProviderChange, ProviderChangeRequest } from "../../api/types";
import { useWorkspace } from "../../app/workspace";
import { useResource } from "../../lib/useResource";
import { useTitle } from "../../lib/useTitle";
import { Badge, Banner, Button, EmptyState, ErrorBanner, Icon, Loading } from "../../ui";
import { AUTH_WORDS, compareVersions } from "./look";
import { touchesProviders } from "./facts";

export function InstallPane({
  headingLevel,
  canInstall,
  onRequested,
}: {
  headingLevel: 1 | 2;
  canInstall: boolean;
  onRequested: (change: ProviderChange) => void;
}) {
  const { api } = useWorkspace();
  const packages = useResource(() => api.availablePackages().then((r) => r.packages), [api], {
    refreshOn: touchesProviders,
  });
  const [uploaded, setUploaded] = useState<AvailablePackage[]>([]);
  const [busy, setBusy] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  useTitle("Install a provider");
  const Heading = `h${headingLevel}` as "h2";

  // an uploaded package the listing now shows too is listed once
  const listed = packages.data ?? [];
  const extra = uploaded.filter((u) => !listed.some((p) => p.ref === u.ref));
  const all = [...extra, ...listed];

  async function request(body: ProviderChangeRequest, ref: string) {
    setBusy(ref);
    setError(null);
    try {
      onRequested(await api.requestProviderChange(body));
    } catch (err) {
      setError(err instanceof ApiError ? err.message : String(err));
    } finally {
      setBusy(null);
    }
  }

  return (
    <div className="pinstall stack">
      <header className="page-head">
        <Heading>Install a provider</Heading>
        <p className="page-sub">
          Packages the hub found in its provider directory, and packages you upload. Installing runs the contract kit on
          the package, then waits for a workspace owner’s approval.
        </p>
      </header>
      {canInstall ? <Upload onUploaded={(p) => setUploaded((u) => [p, ...u.filter((x) => x.ref !== p.ref)])} /> : null}
      {error ? (
        <Banner tone="danger" live="assertive" title="The install was not requested">
          {error}
        </Banner>
      ) : null}
      {packages.error && !packages.data ? <ErrorBanner error={packages.error} onRetry={packages.reload} /> : null}
      {!packages.data && !packages.error ? <Loading what="the available packages" /> : null}
      {packages.data && all.length === 0 ? (
        <EmptyState icon="package" title="No package is available">
          Put a signed package in the hub’s provider directory, or upload one.
        </EmptyState>
      ) : null}
      {all.length > 0 ? (
        <ul className="pkg-list" aria-label="Available packages">
          {all.map((p) => (
            <PackageRow key={p.ref} pkg={p} canInstall={canInstall} busy={busy === p.ref} disabled={busy !== null} onRequest={request} />
          ))}
        </ul>
      ) : null}
    </div>
  );
}

function PackageRow({
  pkg,
  canInstall,
  busy,
  disabled,
  onRequest,
}: {
  pkg: AvailablePackage;
  canInstall: boolean;
  busy: boolean;
  disabled: boolean;
  onRequest: (body: ProviderChangeRequest, ref: string) => void;
}) {
  const titleId = useId();
  const installed = pkg.installedVersion;
  const newer = installed !== null && compareVersions(pkg.version ?? "", installed) > 0;
  return (
    <li className={`pkg-row${pkg.refused ? " pkg-refused" : ""}`} data-package-ref={pkg.ref} aria-labelledby={titleId}>
      <div className="pkg-top">
        <span id={titleId} className="pkg-name">
          {pkg.name} {pkg.version}
        </span>
        <span className="prow-marks">
          <code>{pkg.id}</code>
          {pkg.development ? <Badge tone="waiting">Development</Badge> : null}
          {installed ? <Badge tone="brand">Installed: {installed}</Badge> : null}
        </span>
      </div>
      {pkg.description ? <p className="muted small">{pkg.description}</p> : null}
      <p className="pkg-meta small muted">
        <span>by {pkg.vendor}</span>
        <span>
          {pkg.capabilities.length} capabilit{pkg.capabilities.length === 1 ? "y" : "ies"}
        </span>
        {pkg.auth ? <span>accounts: {AUTH_WORDS[pkg.auth.kind] ?? pkg.auth.kind}</span> : null}
        <span>{pkg.signer ? <>signed by <code>{pkg.signer}</code></> : "not signed"}</span>
      </p>
      {pkg.refused ? (
        <p className="prefused" data-testid="package-refused">
          <Icon name="xCircle" size={15} />
          <span>
            <strong>Cannot be installed</strong> — <code>{pkg.refused.rule}</code>: {pkg.refused.message}
          </span>
        </p>
      ) : canInstall ? (
        <div className="button-row">
          {installed === null ? (
            <Button
              variant="primary"
              size="sm"
              busy={busy}
              disabled={disabled}
              aria-describedby={titleId}
              onClick={() => onRequest({ action: "install", package: pkg.ref }, pkg.ref)}
            >
              Install
            </Button>
          ) : newer ? (
            <Button
              size="sm"
              busy={busy}
              disabled={disabled}
              aria-describedby={titleId}
              onClick={() => onRequest({ action: "upgrade", providerId: pkg.id, package: pkg.ref }, pkg.ref)}
            >
              Upgrade to {pkg.version}
            </Button>
          ) : (
            <span className="muted small">
              {pkg.version === installed ? "This version is installed." : "An older version than the installed one."}
            </span>
          )}
        </div>
      ) : null}
    </li>
  );
}

function Upload({ onUploaded }: { onUploaded: (pkg: AvailablePackage) => void }) {
  const { api } = useWorkspace();
  const id = useId();
  const hintId = useId();
  const input = useRef<HTMLInputElement>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState<AvailablePackage | null>(null);

  async function chosen(e: ChangeEvent<HTMLInputElement>) {
    const file = e.target.files?.[0];
    if (!file) return;
    setBusy(true);
    setError(null);
    setDone(null);
    try {
      const pkg = await api.uploadPackage(file);
      setDone(pkg);
      onUploaded(pkg);
    } catch (err) {
      setError(err instanceof ApiError ? err.message : String(err));
    } finally {
      setBusy(false);
      if (input.current) input.current.value = "";
    }
  }

  return (
    <div className="pupload field">
      <label htmlFor={id}>
        <Icon name="upload" size={15} /> Upload a package
      </label>
      <input
        ref={input}
        id={id}
        type="file"
        accept=".lineup-provider,application/gzip,application/octet-stream"
        disabled={busy}
        aria-describedby={hintId}
        onChange={(e) => void chosen(e)}
      />
      <p id={hintId} className="field-hint">
        A <code>.lineup-provider</code> archive. The hub checks its signature, digest and handlers before listing it; nothing
        in it runs.
      </p>
      <div aria-live="polite">
        {busy ? <p className="small muted">Uploading and checking…</p> : null}
        {done ? (
          <p className={done.refused ? "field-error" : "form-note"}>
            {done.refused
              ? `${done.name} ${done.version} was refused: ${done.refused.message}`
              : `${done.name} ${done.version} is checked and listed below.`}
          </p>
        ) : null}
      </div>
      {error ? (
        <p className="field-error" role="alert">
          The package was not accepted: {error}
        </p>
      ) : null}
    </div>
  );
}
