// Who sees what: signing in, creating a first workspace, or the workspace itself.

// The app's frame is styled before any screen in it: a screen's own sheet may refine it.
import "./frame.css";
import { Suspense, lazy, useCallback, useEffect, useState } from "react";
import { CreateWorkspace, SignIn, SignUp } from "../features/auth/AuthScreens";
import { SessionProvider, useSession } from "../features/auth/session";
import { TokenScreen } from "../features/direct/TokenScreen";
import { RelaySignIn } from "../features/relay/RelaySignIn";
import {
  forgetRelaySession,
  loadRelaySession,
  saveRelaySession,
  takeRelayTarget,
  type RelaySession,
} from "../features/relay/relaySession";
import { navigate, useLocation } from "../lib/router";
import { Banner, Button, Loading } from "../ui";
import { WorkspaceApp } from "./Shell";

// The WuKongIM SDK comes with relay mode only: a hub's users do not download it.
const RelayHub = lazy(() => import("../features/relay/RelayHub").then((m) => ({ default: m.RelayHub })));

/** Against a hub (or an agent in direct mode) by default; relay mode when this browser keeps a
 * relay session, the address names a relay (`#relay=…`) or the page is `/relay`. */
type Mode =
  | { kind: "hub" }
  | { kind: "relaySignIn"; api: string; agent: string | null; notice?: string }
  | { kind: "relay"; session: RelaySession };

function initialMode(): Mode {
  const target = takeRelayTarget();
  const stored = loadRelaySession();
  if (target) {
    if (stored && stored.api === target.api && (target.agent === null || target.agent === stored.agent)) {
      return { kind: "relay", session: stored };
    }
    return { kind: "relaySignIn", api: target.api, agent: target.agent };
  }
  if (stored) return { kind: "relay", session: stored };
  if (window.location.pathname === "/relay") return { kind: "relaySignIn", api: "", agent: null };
  return { kind: "hub" };
}

export function App() {
  const [mode, setMode] = useState<Mode>(initialMode);
  const signedIn = useCallback((session: RelaySession) => {
    saveRelaySession(session);
    if (window.location.pathname === "/relay") navigate("/inbox", { replace: true });
    setMode({ kind: "relay", session });
  }, []);
  const session = mode.kind === "relay" ? mode.session : null;
  const signOut = useCallback(() => {
    forgetRelaySession();
    setMode({ kind: "relaySignIn", api: session?.api ?? "", agent: session?.agent ?? null });
  }, [session]);
  const refused = useCallback(() => {
    forgetRelaySession();
    setMode({
      kind: "relaySignIn",
      api: session?.api ?? "",
      agent: session?.agent ?? null,
      notice: "The IM server ended this session (the token expired, or the account signed in elsewhere).",
    });
  }, [session]);

  if (mode.kind === "relaySignIn") {
    return <RelaySignIn initialApi={mode.api} initialAgent={mode.agent} notice={mode.notice} onSignedIn={signedIn} />;
  }
  if (mode.kind === "relay") {
    return (
      <Suspense
        fallback={
          <div className="splash">
            <Loading what="the relay" />
          </div>
        }
      >
        <RelayHub key={`${mode.session.uid}@${mode.session.agent}`} session={mode.session} onSignOut={signOut} onRefused={refused}>
          <Gate />
        </RelayHub>
      </Suspense>
    );
  }
  return (
    <SessionProvider>
      <Gate />
    </SessionProvider>
  );
}

const PUBLIC = new Set(["/signin", "/signup"]);

function Gate() {
  const session = useSession();
  const loc = useLocation();
  const { state } = session;

  // A notification's link names its workspace (?workspace=…): open that one.
  const linkedWorkspace = loc.search.get("workspace");
  useEffect(() => {
    if (state.status !== "signedIn" || !linkedWorkspace || linkedWorkspace === state.workspaceId) return;
    if (state.workspaces.some((w) => w.id === linkedWorkspace)) session.selectWorkspace(linkedWorkspace);
  }, [state, linkedWorkspace, session]);

  useEffect(() => {
    if (state.status === "signedOut" && !PUBLIC.has(loc.path) && !session.direct && !session.relay) {
      const next = loc.path === "/" ? "" : `?next=${encodeURIComponent(loc.path + (loc.search.toString() ? `?${loc.search}` : ""))}`;
      // a new hub opens on Create account: nobody could sign in yet
      const firstVisit = session.options?.hasAccounts === false && session.options.signup !== "closed";
      navigate(firstVisit ? "/signup" : `/signin${next}`, { replace: true });
    }
    if (state.status === "signedIn" && PUBLIC.has(loc.path)) navigate("/inbox", { replace: true });
  }, [state.status, loc.path, loc.search, session.direct, session.options]);

  if (state.status === "loading") {
    return (
      <div className="splash">
        <Loading what="LineUp" />
      </div>
    );
  }
  if (state.status === "error") {
    return (
      <div className="splash">
        <Banner
          tone="danger"
          title={session.relay ? `Cannot reach ${session.relay.agentName}` : "Cannot reach the hub"}
          action={
            <>
              <Button size="sm" onClick={() => void session.refresh()}>Try again</Button>
              {session.relay ? (
                <Button size="sm" onClick={() => void session.signOut()}>Sign out</Button>
              ) : (
                <Button size="sm" onClick={() => window.location.assign("/relay")}>Sign in through a relay</Button>
              )}
            </>
          }
        >
          {state.error.message}
        </Banner>
      </div>
    );
  }
  if (state.status === "signedOut") {
    if (session.relay) {
      // the agent's relay host did not take this account
      return (
        <div className="splash">
          <Banner tone="danger" title={`${session.relay.agentName} did not let this account in`} action={<Button size="sm" onClick={() => void session.signOut()}>Sign out</Button>}>
            The agent's relay host accepts only the people it is configured with.
          </Banner>
        </div>
      );
    }
    if (session.direct) {
      // the pre-shared token instead of accounts
      return (
        <TokenScreen
          agentName={session.direct.agentName}
          onToken={session.signInWithToken}
          launchError={state.launchError}
          expired={state.reason === "expired"}
        />
      );
    }
    if (loc.path === "/signup") return <SignUp />;
    return <SignIn next={loc.search.get("next")} expired={state.reason === "expired"} />;
  }
  const workspace = state.workspaces.find((w) => w.id === state.workspaceId);
  if (!workspace) return <CreateWorkspace />;
  if (PUBLIC.has(loc.path)) return null;
  return <WorkspaceApp key={workspace.id} workspace={workspace} user={state.user} />;
}
