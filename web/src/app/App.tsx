// Who sees what: signing in, creating a first workspace, or the workspace itself.

// The app's frame is styled before any screen in it: a screen's own sheet may refine it.
import "./frame.css";
import { useEffect } from "react";
import { CreateWorkspace, SignIn, SignUp } from "../features/auth/AuthScreens";
import { SessionProvider, useSession } from "../features/auth/session";
import { TokenScreen } from "../features/direct/TokenScreen";
import { navigate, useLocation } from "../lib/router";
import { Banner, Button, Loading } from "../ui";
import { WorkspaceApp } from "./Shell";

export function App() {
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
    if (state.status === "signedOut" && !PUBLIC.has(loc.path) && !session.direct) {
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
        <Banner tone="danger" title="Cannot reach the hub" action={<Button size="sm" onClick={() => void session.refresh()}>Try again</Button>}>
          {state.error.message}
        </Banner>
      </div>
    );
  }
  if (state.status === "signedOut") {
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
