// What a workspace owner can ask of an installed provider: enable or disable it, upgrade it to
// a newer package of the same provider, roll it back to the kept previous version, uninstall
// it. Each asks for a change that waits for approval; nothing changes on the click itself.
// While one change waits, no other can be asked for.

import { useId, useState, type FormEvent } from "react";
import { ApiError } from "../../api/client";
import type { Provider, ProviderChange, ProviderChangeRequest } from "../../api/types";
import { useWorkspace } from "../../app/workspace";
import { useResource } from "../../lib/useResource";
import { Badge, Banner, Button, Icon, Loading } from "../../ui";
import { upgradesFor } from "./look";

type Busy = ProviderChangeRequest["action"] | null;

export function ProviderActions({
  provider,
  onRequested,
}: {
  provider: Provider;
  onRequested: (change: ProviderChange) => void;
}) {
  const { api } = useWorkspace();
  const [upgrading, setUpgrading] = useState(false);
  const [busy, setBusy] = useState<Busy>(null);
  const [error, setError] = useState<string | null>(null);
  const waiting = provider.pendingChange !== null;

  async function request(body: ProviderChangeRequest) {
    setBusy(body.action);
    setError(null);
    try {
      const change = await api.requestProviderChange(body);
      setUpgrading(false);
      onRequested(change);
    } catch (err) {
      setError(err instanceof ApiError ? err.message : String(err));
    } finally {
      setBusy(null);
    }
  }

  const id = provider.id;
  const off = waiting || busy !== null;
  return (
    <div className="pactions">
      <div className="button-row" role="group" aria-label="Change this provider">
        {provider.state === "enabled" ? (
          <Button icon="stopCircle" busy={busy === "disable"} disabled={off} onClick={() => void request({ action: "disable", providerId: id })}>
            Disable
          </Button>
        ) : (
          <Button icon="running" busy={busy === "enable"} disabled={off} onClick={() => void request({ action: "enable", providerId: id })}>
            Enable
          </Button>
        )}
        <Button icon="upload" disabled={off || upgrading} aria-expanded={upgrading} onClick={() => setUpgrading(true)}>
          Upgrade…
        </Button>
        {provider.previous ? (
          <Button
            icon="history"
            busy={busy === "rollback"}
            disabled={off}
            onClick={() => void request({ action: "rollback", providerId: id })}
          >
            Roll back to {provider.previous.version}
          </Button>
        ) : null}
        <Button
          variant="danger"
          busy={busy === "uninstall"}
          disabled={off}
          onClick={() => void request({ action: "uninstall", providerId: id })}
        >
          Uninstall
        </Button>
      </div>
      {waiting ? (
        <p className="muted small">
          <Icon name="hand" size={14} /> A change of this provider waits for approval: decide it before asking for another.
        </p>
      ) : null}
      {error ? (
        <Banner tone="danger" live="assertive" title="The change was not requested">
          {error}
        </Banner>
      ) : null}
      {upgrading && !waiting ? (
        <UpgradeForm
          provider={provider}
          busy={busy === "upgrade"}
          onCancel={() => setUpgrading(false)}
          onSubmit={(ref) => void request({ action: "upgrade", providerId: id, package: ref })}
        />
      ) : null}
    </div>
  );
}

function UpgradeForm({
  provider,
  busy,
  onSubmit,
  onCancel,
}: {
  provider: Provider;
  busy: boolean;
  onSubmit: (ref: string) => void;
  onCancel: () => void;
}) {
  const { api } = useWorkspace();
  const packages = useResource(() => api.availablePackages().then((r) => r.packages), [api]);
  const choices = upgradesFor(provider, packages.data ?? []);
  const installable = choices.filter((p) => !p.refused);
  const [chosen, setChosen] = useState<string | null>(null);
  const ref = chosen ?? installable[0]?.ref ?? null;
  const name = useId();

  function send(e: FormEvent) {
    e.preventDefault();
    if (ref) onSubmit(ref);
  }

  return (
    <form className="actions-block pupgrade" aria-label="Upgrade" onSubmit={send} noValidate>
      {packages.error ? <Banner tone="danger" title="Cannot list the packages">{packages.error.message}</Banner> : null}
      {!packages.data && !packages.error ? <Loading what="the available packages" /> : null}
      {packages.data && choices.length === 0 ? (
        <p className="muted">
          No newer package of <code>{provider.id}</code> than {provider.version} is available. Put one in the hub’s
          provider directory, or upload it under Install.
        </p>
      ) : null}
      {choices.length > 0 ? (
        <fieldset className="pchoices">
          <legend>Upgrade {provider.name} from {provider.version} to</legend>
          {choices.map((p) => (
            <label key={p.ref} className={`pchoice${p.refused ? " pchoice-refused" : ""}`}>
              <input
                type="radio"
                name={name}
                value={p.ref}
                checked={ref === p.ref}
                disabled={!!p.refused || busy}
                onChange={() => setChosen(p.ref)}
              />
              <span className="pchoice-body">
                <span>
                  <strong>{p.version}</strong> <span className="muted">by {p.vendor}</span>{" "}
                  {p.development ? <Badge tone="waiting">Development</Badge> : null}
                </span>
                {p.refused ? (
                  <span className="prefused">
                    Cannot be installed: <code>{p.refused.rule}</code> {p.refused.message}
                  </span>
                ) : null}
              </span>
            </label>
          ))}
        </fieldset>
      ) : null}
      <div className="button-row">
        <Button type="submit" variant="primary" busy={busy} disabled={!ref}>
          Request upgrade
        </Button>
        <Button variant="ghost" disabled={busy} onClick={onCancel}>
          Cancel
        </Button>
      </div>
    </form>
  );
}
