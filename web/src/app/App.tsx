// Who sees what: signing in, creating a first workspace, or the workspace itself.

import { useEffect } from "react";
import { CreateWorkspace, SignIn, SignUp } from "../features/auth/AuthScreens";
import { SessionProvider, useSession } from "../features/auth/session";
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

  useEffect(() => {
    if (state.status === "signedOut" && !PUBLIC.has(loc.path)) {
      const next = loc.path === "/" ? "" : `?next=${encodeURIComponent(loc.path + (loc.search.toString() ? `?${loc.search}` : ""))}`;
      navigate(`/signin${next}`, { replace: true });
    }
    if (state.status === "signedIn" && PUBLIC.has(loc.path)) navigate("/inbox", { replace: true });
  }, [state.status, loc.path, loc.search]);

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
    if (loc.path === "/signup") return <SignUp />;
    return <SignIn next={loc.search.get("next")} expired={state.reason === "expired"} />;
  }
  const workspace = state.workspaces.find((w) => w.id === state.workspaceId);
  if (!workspace) return <CreateWorkspace />;
  if (PUBLIC.has(loc.path)) return null;
  return <WorkspaceApp key={workspace.id} workspace={workspace} user={state.user} />;
}
