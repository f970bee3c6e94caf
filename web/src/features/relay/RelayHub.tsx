// Relay mode's frame around the app: the WuKongIM connection (the official JS SDK) and the
// tunnel, the app's Transport and realtime socket routed through it, hub file links opened
// through TangSengDaoDao, and the same screens as against a hub.

import { useEffect, useMemo, useState, type ReactNode } from "react";
import WKSDK from "wukongimjssdk";
import { Transport } from "../../api/client";
import { SocketRouteProvider, type SocketRoute } from "../../realtime/RealtimeProvider";
import { registeredDefinitions } from "../../tools/registry";
import { Banner } from "../../ui";
import { SessionProvider, type RelayMode } from "../auth/session";
import { interceptFileLinks } from "./fileLinks";
import type { RelaySession } from "./relaySession";
import { TsddApi } from "./tsdd";
import { RelayTunnel, type LinkState, type RelaySdk } from "./tunnel";

/** The tunnel for a session, on the SDK's one shared instance (it is a singleton). */
export function connectRelay(session: RelaySession, sdk: RelaySdk = WKSDK.shared()): RelayTunnel {
  sdk.config.uid = session.uid;
  sdk.config.token = session.token;
  sdk.config.addr = session.ws;
  const tsdd = new TsddApi(session.api, session.token);
  return new RelayTunnel({
    sdk,
    agentUid: session.agent,
    agentName: session.agentName,
    sync: (start) => tsdd.sync(session.agent, start),
    tools: () => registeredDefinitions(),
    upload: (body) => tsdd.upload(body, body instanceof File ? body.name : "upload", session.agent),
  });
}

export function RelayHub({
  session,
  onSignOut,
  onRefused,
  children,
  tunnel: given,
}: {
  session: RelaySession;
  onSignOut: () => void;
  /** The IM server refused the token or ended the session. */
  onRefused: () => void;
  children: ReactNode;
  tunnel?: RelayTunnel;
}) {
  const tunnel = useMemo(() => given ?? connectRelay(session), [given, session]);
  const transport = useMemo(() => new Transport(tunnel.fetch, () => ""), [tunnel]);
  const route = useMemo<SocketRoute>(
    () => ({
      socket: tunnel.socket,
      url: (workspaceId) => `relay://${session.agent}/ws/client?workspaceId=${encodeURIComponent(workspaceId)}`,
    }),
    [tunnel, session.agent],
  );
  const relay = useMemo<RelayMode>(() => ({ agentName: session.agentName, signOut: onSignOut }), [session.agentName, onSignOut]);
  const [link, setLink] = useState<LinkState>(tunnel.state);

  useEffect(() => {
    const off = tunnel.onState((state) => {
      setLink(state);
      if (state === "refused") onRefused();
    });
    tunnel.start();
    const stopLinks = interceptFileLinks(document, tunnel);
    return () => {
      off();
      stopLinks();
      tunnel.stop();
    };
  }, [tunnel, onRefused]);

  return (
    <SocketRouteProvider value={route}>
      {link === "offline" ? (
        <div className="relay-offline" data-testid="relay-offline">
          <Banner tone="offline" title="The relay is offline">
            Reconnecting to the IM server; what the agent sends meanwhile arrives once it is back.
          </Banner>
        </div>
      ) : null}
      <SessionProvider transport={transport} relay={relay}>
        {children}
      </SessionProvider>
    </SocketRouteProvider>
  );
}
