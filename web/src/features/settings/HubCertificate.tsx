// Settings → This hub: the address agents use and the TLS certificate the hub serves, with its
// SHA-256 fingerprint for a person to compare with what their browser shows and to pin in agents.

import { useEffect, useId, useState } from "react";
import { ApiError } from "../../api/client";
import type { HubInfo } from "../../api/types";
import { useWorkspace } from "../../app/workspace";
import { Banner, Card, CopyButton, Spinner } from "../../ui";
import "./settings.css";

const MODE: Record<HubInfo["tlsMode"], string> = {
  off: "Not served by the hub (plain HTTP, or TLS ended by a proxy in front of it)",
  certificate: "A certificate you gave the hub",
  self_signed: "Self-signed by the hub",
};

export function HubCertificate() {
  const { api } = useWorkspace();
  const titleId = useId();
  const [info, setInfo] = useState<HubInfo | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    let live = true;
    api.hubInfo().then(
      (answer) => live && setInfo(answer),
      (err: unknown) => live && setError((err as ApiError).message),
    );
    return () => {
      live = false;
    };
  }, [api]);

  return (
    <Card aria-labelledby={titleId} data-testid="hub-certificate">
      <h2 className="card-title" id={titleId}>
        This hub
      </h2>
      {error ? (
        <Banner tone="danger" title="Could not read the hub's details">
          {error}
        </Banner>
      ) : !info ? (
        <Spinner label="Loading the hub's details…" />
      ) : (
        <>
          <dl className="kv">
            <div className="kv-row">
              <dt>Agents connect to</dt>
              <dd>
                <code className="inline-code">{info.websocketUrl}</code>
              </dd>
            </div>
            <div className="kv-row">
              <dt>TLS certificate</dt>
              <dd>{MODE[info.tlsMode]}</dd>
            </div>
          </dl>
          {info.tlsFingerprint ? (
            <div className="field">
              <p className="fingerprint-label">SHA-256 fingerprint</p>
              <div className="fingerprint-row">
                <code className="fingerprint" data-testid="hub-fingerprint">
                  {info.tlsFingerprint}
                </code>
                <CopyButton text={info.tlsFingerprint} what="fingerprint" />
              </div>
              <p className="muted small">
                {info.tlsMode === "self_signed"
                  ? "Compare it with the fingerprint your browser shows for this page. Agents pin it: the Connect my agent command carries it, or set LINEUP_TLS_FINGERPRINT on the agent's machine."
                  : "Compare it with the fingerprint your browser shows for this page."}
              </p>
            </div>
          ) : info.websocketUrl.startsWith("ws://") ? (
            <p className="muted small">
              Agents on other machines refuse plain ws:// addresses. Serve TLS with lineup serve --tls-self-signed (or your own certificate), or put the hub behind an https proxy.
            </p>
          ) : null}
        </>
      )}
    </Card>
  );
}
