// "Connect my agent": a one-time pairing code, its countdown, and the command to run; then
// "Waiting for your agent…", then the agent's details for the person to confirm (or reject).

import { useCallback, useEffect, useRef, useState } from "react";
import { ApiError } from "../../api/client";
import type { PairingCode } from "../../api/types";
import { useWorkspace } from "../../app/workspace";
import { useHubEvents } from "../../realtime/RealtimeProvider";
import { countdown } from "../../lib/time";
import { useNow } from "../../lib/useNow";
import { navigate } from "../../lib/router";
import { Banner, Button, Card, CopyButton, Icon, Spinner } from "../../ui";
import { ConfirmAgent } from "./ConfirmAgent";

type Phase =
  | { kind: "loading" }
  | { kind: "error"; error: ApiError }
  | { kind: "ready"; code: PairingCode; issuedAt: number };

export function ConnectAgent({ onClose }: { onClose: () => void }) {
  const { api, agents } = useWorkspace();
  const [phase, setPhase] = useState<Phase>({ kind: "loading" });
  const [paired, setPaired] = useState<{ id: string; name: string; connected: boolean } | null>(null);
  const [rejected, setRejected] = useState(false);
  const headingRef = useRef<HTMLHeadingElement>(null);
  const now = useNow(1000);

  const issue = useCallback(async () => {
    setPhase({ kind: "loading" });
    setPaired(null);
    setRejected(false);
    try {
      const code = await api.createPairingCode();
      setPhase({ kind: "ready", code, issuedAt: Date.now() });
    } catch (err) {
      setPhase({ kind: "error", error: err as ApiError });
    }
  }, [api]);

  useEffect(() => {
    void issue();
    headingRef.current?.focus();
  }, [issue]);

  useHubEvents((event) => {
    if (event.type === "agent.paired" && event.payload.agentId && !paired)
      setPaired({ id: event.payload.agentId, name: event.payload.name ?? "Your agent", connected: false });
    if (event.type === "agent.connected" && paired && event.payload.agentId === paired.id) setPaired({ ...paired, connected: true });
  });
  // what the hub knows of it now: its details, whether it is confirmed (the list follows events)
  const agent = paired ? agents.data?.find((a) => a.id === paired.id) : undefined;
  const confirmed = agent?.confirmed === true;
  const name = agent?.name ?? paired?.name ?? "Your agent";
  const connected = Boolean(agent?.online || paired?.connected);

  let body;
  if (phase.kind === "loading") body = <Spinner label="Making a pairing code…" />;
  else if (phase.kind === "error")
    body = (
      <Banner tone="danger" title="Could not make a pairing code" action={<Button size="sm" onClick={issue}>Try again</Button>}>
        {phase.error.message}
      </Banner>
    );
  else {
    const { code } = phase;
    // The hub's expiresAt, measured against our clock via the time-to-live it also sends.
    const deadline = phase.issuedAt + code.expiresInSeconds * 1000;
    const left = deadline - now.getTime();
    const expired = left <= 0 && !paired;
    body = (
      <>
        <ol className="steps">
          <li>
            <p className="step-title">Run this on the machine where your agent runs</p>
            <div className="command">
              <code data-testid="pairing-command">{code.command}</code>
              <CopyButton text={code.command} what="command" />
            </div>
            <p className="muted small">
              Using the Python SDK instead? <code className="inline-code">{code.sdkCommand}</code>
            </p>
            {code.tlsFingerprint ? (
              <p className="muted small" data-testid="pairing-fingerprint">
                The command pins this hub's self-signed certificate, SHA-256{" "}
                <code className="inline-code">{code.tlsFingerprint}</code> — the same as Settings → This hub shows.
              </p>
            ) : null}
          </li>
          <li>
            <p className="step-title">Or enter this one-time code in your adapter</p>
            <div className="pair-code-row">
              <code className={`pair-code${expired ? " is-expired" : ""}`} data-testid="pairing-code" aria-label={`Pairing code ${code.code.split("").join(" ")}`}>
                {code.code}
              </code>
              <CopyButton text={code.code} what="pairing code" />
            </div>
            {paired ? (
              <p className="countdown" data-testid="pairing-used">
                <Icon name="check" size={15} />
                <span>Used by {name} — this code no longer works.</span>
              </p>
            ) : (
              <>
                <p className="countdown" aria-live="off">
                  <Icon name="clock" size={15} />
                  {expired ? (
                    <span>This code has expired.</span>
                  ) : (
                    <span>
                      Expires in <strong data-testid="pairing-countdown">{countdown(left)}</strong> — single use
                    </span>
                  )}
                </p>
                <span className="sr-only" aria-live="polite">
                  {expired ? "The pairing code expired." : left < 60_000 ? "Less than a minute left on the pairing code." : ""}
                </span>
              </>
            )}
          </li>
        </ol>
        {rejected ? (
          <Banner tone="warning" title="Agent rejected" action={<Button size="sm" onClick={issue}>New code</Button>}>
            Its credential no longer works and it is gone from your agents.
          </Banner>
        ) : paired && !confirmed ? (
          agent ? (
            <ConfirmAgent agent={agent} onDone={(outcome) => outcome === "rejected" && setRejected(true)} />
          ) : (
            <p className="waiting-line" role="status">
              <Spinner size={14} /> {paired.name} paired — loading its details…
            </p>
          )
        ) : paired ? (
          <Banner tone="success" title={connected ? `${name} is connected` : `${name} is confirmed`}>
            {connected
              ? "It can take tasks now. Next: start a conversation with it, write what you need, and tick Track as task to follow the work."
              : "Waiting for it to connect…"}
          </Banner>
        ) : expired ? (
          <Banner tone="warning" title="The code expired" action={<Button size="sm" onClick={issue}>New code</Button>}>
            Codes last {Math.round(code.expiresInSeconds / 60)} minutes and work once.
          </Banner>
        ) : (
          <p className="waiting-line" role="status">
            <Spinner size={14} /> Waiting for your agent…
          </p>
        )}
      </>
    );
  }

  return (
    <Card className="connect" aria-labelledby="connect-title">
      <div className="card-head">
        <h2 id="connect-title" className="card-title" tabIndex={-1} ref={headingRef}>
          Connect my agent
        </h2>
        <button type="button" className="icon-btn" onClick={onClose} aria-label="Close connect my agent">
          <Icon name="close" />
        </button>
      </div>
      <p className="muted">
        Adapter: <strong>Generic SDK</strong>. Your agent connects out to this hub — no port to open on its machine.
      </p>
      {body}
      {paired && confirmed && connected ? (
        <div className="button-row">
          <Button variant="primary" icon="chat" onClick={() => navigate("/conversations?new=1")}>
            Start a conversation
          </Button>
          <Button onClick={onClose}>Done</Button>
        </div>
      ) : null}
    </Card>
  );
}
