// Who is signed in, and which workspace is open.

import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from "react";
import { AccountApi, WorkspaceApi } from "../../api/hub";
import { ApiError, Transport } from "../../api/client";
import type { Me, User, Workspace } from "../../api/types";
import { DirectApi } from "../direct/api";
import { takeLaunchToken } from "../direct/launchToken";
import { AuthApi, type AuthOptions } from "./api";

const WORKSPACE_KEY = "lineup.workspace";

export type SessionState =
  | { status: "loading" }
  | { status: "signedOut"; reason?: "expired" | "signedOut"; launchError?: string }
  | { status: "error"; error: ApiError }
  | { status: "signedIn"; user: User; workspaces: Workspace[]; workspaceId: string | null };

export interface Session {
  state: SessionState;
  transport: Transport;
  accounts: AccountApi;
  signIn(email: string, password: string): Promise<void>;
  signUp(body: { email: string; password: string; displayName: string; workspaceName: string; invitationCode?: string }): Promise<void>;
  /** Join another workspace with an invitation code, and open it. */
  acceptInvitation(code: string): Promise<void>;
  /** Who may sign up here and whether anyone has yet; null until known (or if unknown). */
  options: AuthOptions | null;
  auth: AuthApi;
  signOut(): Promise<void>;
  createWorkspace(name: string): Promise<void>;
  selectWorkspace(id: string): void;
  refresh(): Promise<void>;
  /** Direct mode: this LineUp is one agent serving itself; null on a hub. */
  direct: { agentName: string } | null;
  /** Direct mode: sign in with the pre-shared token. */
  signInWithToken(token: string): Promise<void>;
  /** Relay mode: the agent is reached through WuKongIM; null otherwise. */
  relay: RelayMode | null;
}

/** Relay mode's part in the session: signing out forgets the IM session, not a hub's. */
export interface RelayMode {
  agentName: string;
  signOut(): void;
}

const SessionContext = createContext<Session | null>(null);

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error("useSession outside SessionProvider");
  return session;
}

function pickWorkspace(me: Me, preferred?: string | null): string | null {
  const ids = me.workspaces.map((w) => w.id);
  const saved = preferred ?? safeGet(WORKSPACE_KEY);
  if (saved && ids.includes(saved)) return saved;
  return ids[0] ?? null;
}

export function SessionProvider({
  children,
  transport: given,
  relay = null,
}: {
  children: ReactNode;
  transport?: Transport;
  relay?: RelayMode | null;
}) {
  const transport = useMemo(() => given ?? new Transport(), [given]);
  const accounts = useMemo(() => new AccountApi(transport), [transport]);
  const [state, setState] = useState<SessionState>({ status: "loading" });
  const directApi = useMemo(() => new DirectApi(transport), [transport]);
  const auth = useMemo(() => new AuthApi(transport), [transport]);
  const [direct, setDirect] = useState<{ agentName: string } | null>(null);
  const [options, setOptions] = useState<AuthOptions | null>(null);

  const adopt = useCallback((me: Me, preferred?: string | null) => {
    const workspaceId = pickWorkspace(me, preferred);
    if (workspaceId) safeSet(WORKSPACE_KEY, workspaceId);
    setState({ status: "signedIn", user: me.user, workspaces: me.workspaces, workspaceId });
  }, []);

  const refresh = useCallback(async () => {
    // which LineUp this is; the token in the opened address
    const info = await directApi.info().catch(() => null);
    if (info?.csrfCookie) transport.csrfCookie = info.csrfCookie;
    setDirect(info?.mode === "direct" ? { agentName: info.agentName } : null);
    if (info?.mode === "direct") {
      const token = takeLaunchToken();
      if (token) {
        try {
          const me = await directApi.startSession(token);
          adopt(me, me.workspaceId);
          return;
        } catch (err) {
          if (!(err instanceof ApiError) || err.code === "network" || err.code === "unavailable") {
            setState({ status: "error", error: err as ApiError });
          } else {
            setState({ status: "signedOut", launchError: err.message });
          }
          return;
        }
      }
    }
    try {
      adopt(await accounts.me());
    } catch (err) {
      if (err instanceof ApiError && err.code === "unauthenticated") {
        setOptions(await auth.options().catch(() => null));
        setState({ status: "signedOut" });
      } else {
        setState({ status: "error", error: err as ApiError });
      }
    }
  }, [accounts, adopt, auth, directApi, transport]);

  useEffect(() => {
    transport.onUnauthenticated = () =>
      setState((s) => (s.status === "signedIn" ? { status: "signedOut", reason: "expired" } : s));
    void refresh();
    return () => {
      transport.onUnauthenticated = null;
    };
  }, [transport, refresh]);

  const session = useMemo<Session>(
    () => ({
      state,
      transport,
      accounts,
      async signIn(email, password) {
        const me = await accounts.signIn({ email, password });
        adopt(me);
      },
      async signUp(body) {
        const me = await accounts.signUp(body);
        adopt(me, me.workspaceId);
      },
      async signOut() {
        if (relay) {
          relay.signOut();
          return;
        }
        try {
          await accounts.signOut();
        } catch (err) {
          if (!(err instanceof ApiError && err.code === "unauthenticated")) throw err;
        }
        setState({ status: "signedOut", reason: "signedOut" });
      },
      async acceptInvitation(code) {
        const joined = await auth.acceptInvitation(code);
        adopt(await accounts.me(), joined.workspaceId);
      },
      options,
      auth,
      async createWorkspace(name) {
        const created = await accounts.createWorkspace(name);
        adopt(await accounts.me(), created.id);
      },
      selectWorkspace(id) {
        safeSet(WORKSPACE_KEY, id);
        setState((s) => (s.status === "signedIn" ? { ...s, workspaceId: id } : s));
      },
      refresh,
      direct,
      async signInWithToken(token) {
        const me = await directApi.startSession(token);
        adopt(me, me.workspaceId);
      },
      relay,
    }),
    [state, transport, accounts, auth, options, adopt, refresh, direct, directApi, relay],
  );

  return <SessionContext.Provider value={session}>{children}</SessionContext.Provider>;
}

/** The workspace API for the open workspace (stable while it stays open). */
export function useWorkspaceApi(transport: Transport, workspaceId: string): WorkspaceApi {
  return useMemo(() => new WorkspaceApi(transport, workspaceId), [transport, workspaceId]);
}

function safeGet(key: string): string | null {
  try {
    return localStorage.getItem(key);
  } catch {
    return null;
  }
}

function safeSet(key: string, value: string): void {
  try {
    localStorage.setItem(key, value);
  } catch {
    /* private mode */
  }
}
