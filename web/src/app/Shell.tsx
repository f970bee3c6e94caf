// The frame: top bar, navigation, the main pane, and the task detail pane (a drawer on
// narrow screens). Under 640 px the navigation hides behind a menu button.

import { useEffect, useId, useMemo, useState, type ReactNode } from "react";
import type { User, Workspace } from "../api/types";
import { useSession, useWorkspaceApi } from "../features/auth/session";
import { AgentDetail } from "../features/agents/AgentDetail";
import { AgentsView } from "../features/agents/AgentsView";
import { ConversationView } from "../features/conversations/ConversationView";
import { ConversationsView } from "../features/conversations/ConversationsView";
import { ApprovalPage, ApprovalsView, useWaitingApprovals } from "../features/governance/ApprovalsView";
import { ProjectSettings, ProjectsSettings } from "../features/governance/ProjectsSettings";
import { RunRecordView } from "../features/governance/RunRecordView";
import { InboxView } from "../features/inbox/InboxView";
import { ProvidersView } from "../features/providers/ProvidersView";
import { SettingsView } from "../features/settings/SettingsView";
import { TaskDetailView } from "../features/tasks/TaskDetail";
import { TasksView } from "../features/tasks/TasksView";
import { useBrowserNotifications } from "../features/notifications/useBrowserNotifications";
import { useFocusCard } from "../features/notifications/useFocusCard";
import { Link, matchPath, navigate, useLocation, withQuery } from "../lib/router";
import { PHONE, WIDE, useMediaQuery } from "../lib/useMediaQuery";
import { RealtimeProvider, useConnectionState } from "../realtime/RealtimeProvider";
import { Badge, Banner, CountBadge, Drawer, EmptyState, Icon, type IconName } from "../ui";
import { WorkspaceProvider, useWorkspace } from "./workspace";

export function WorkspaceApp({ workspace, user }: { workspace: Workspace; user: User }) {
  const session = useSession();
  const api = useWorkspaceApi(session.transport, workspace.id);
  return (
    <RealtimeProvider workspaceId={workspace.id} api={api}>
      <WorkspaceProvider api={api} workspace={workspace} user={user}>
        <Shell />
      </WorkspaceProvider>
    </RealtimeProvider>
  );
}

interface Page {
  key: string;
  node: ReactNode;
  /** Pages where an empty detail pane invites picking a task. */
  taskPane?: boolean;
}

function route(path: string): Page | null {
  if (path === "/" || path === "/signin" || path === "/signup") return null;
  if (path === "/inbox") return { key: "inbox", node: <InboxView />, taskPane: true };
  if (path === "/conversations") return { key: "conversations", node: <ConversationsView /> };
  let m = matchPath("/conversations/:id", path);
  if (m) return { key: "conversation", node: <ConversationView key={m.id} conversationId={m.id!} /> };
  if (path === "/tasks") return { key: "tasks", node: <TasksView />, taskPane: true };
  m = matchPath("/tasks/:id", path);
  if (m) return { key: "task", node: <TaskPage taskId={m.id!} /> };
  if (path === "/agents") return { key: "agents", node: <AgentsView /> };
  m = matchPath("/agents/:id", path);
  if (m) return { key: "agent", node: <AgentDetail key={m.id} agentId={m.id!} /> };
  if (path === "/approvals") return { key: "approvals", node: <ApprovalsView /> };
  m = matchPath("/approvals/:id", path);
  if (m) return { key: "approval", node: <ApprovalPage key={m.id} approvalId={m.id!} /> };
  m = matchPath("/runs/:id", path);
  if (m) return { key: "run", node: <RunRecordView key={m.id} executionId={m.id!} /> };
  // one page for the list and any provider in it: picking another keeps the list in place
  if (path === "/providers") return { key: "providers", node: <ProvidersView /> };
  m = matchPath("/providers/:id", path);
  if (m) return { key: "providers", node: <ProvidersView providerId={m.id!} /> };
  if (path === "/settings") return { key: "settings", node: <SettingsView /> };
  if (path === "/settings/projects") return { key: "projects", node: <ProjectsSettings /> };
  m = matchPath("/settings/projects/:id", path);
  if (m) return { key: "project", node: <ProjectSettings key={m.id} projectId={m.id!} /> };
  return { key: "missing", node: <NotFound /> };
}

const NAV: Array<{ to: string; label: string; icon: IconName; match: string }> = [
  { to: "/inbox", label: "Inbox", icon: "inbox", match: "/inbox" },
  { to: "/conversations", label: "Conversations", icon: "chat", match: "/conversations" },
  { to: "/tasks", label: "Tasks", icon: "tasks", match: "/tasks" },
  { to: "/approvals", label: "Approvals", icon: "shield", match: "/approvals" },
  { to: "/agents", label: "Agents", icon: "agent", match: "/agents" },
  { to: "/providers", label: "Providers", icon: "package", match: "/providers" },
  { to: "/settings", label: "Settings", icon: "settings", match: "/settings" },
];

function Shell() {
  const loc = useLocation();
  const wide = useMediaQuery(WIDE);
  const phone = useMediaQuery(PHONE);
  const [menuOpen, setMenuOpen] = useState(false);
  const taskId = loc.search.get("task");
  const page = useMemo(() => route(loc.path), [loc.path]);
  const detailTitleId = useId();
  useBrowserNotifications();
  useFocusCard(); // a notification's link opens its card

  useEffect(() => {
    if (!page) navigate("/inbox", { replace: true });
  }, [page]);
  useEffect(() => setMenuOpen(false), [loc.href]);
  useEffect(() => {
    if (!phone) setMenuOpen(false);
  }, [phone]);

  const closeTask = () => navigate(withQuery(loc, { task: null }));
  const showPane = wide && (taskId || page?.taskPane);

  return (
    <div className={`app${showPane ? " has-detail" : ""}`}>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <TopBar phone={phone} menuOpen={menuOpen} onMenu={() => setMenuOpen(true)} />
      <ConnectionBanner />
      <div className="layout">
        {!phone ? (
          <nav className="sidebar" aria-label="Main">
            <NavList />
          </nav>
        ) : null}
        <main id="main" className={`main main-${page?.key ?? "none"}`} tabIndex={-1}>
          {page?.node}
        </main>
        {showPane ? (
          <aside className="detail" aria-labelledby={taskId ? detailTitleId : undefined} aria-label={taskId ? undefined : "Task detail"}>
            {taskId ? (
              <>
                <div className="detail-bar">
                  <span className="detail-kicker">Task detail</span>
                  <button type="button" className="icon-btn" onClick={closeTask} aria-label="Close task detail">
                    <Icon name="close" />
                  </button>
                </div>
                <TaskDetailView key={taskId} taskId={taskId} headingId={detailTitleId} />
              </>
            ) : (
              <EmptyState icon="tasks" title="No task selected">
                Pick a task to see its progress, child tasks, artifacts and timeline here.
              </EmptyState>
            )}
          </aside>
        ) : null}
      </div>
      {!wide && taskId ? (
        <Drawer open title="Task detail" onClose={closeTask}>
          <TaskDetailView key={taskId} taskId={taskId} />
        </Drawer>
      ) : null}
      {phone ? (
        <Drawer open={menuOpen} title="Menu" onClose={() => setMenuOpen(false)} side="left">
          <nav aria-label="Main">
            <NavList />
          </nav>
        </Drawer>
      ) : null}
    </div>
  );
}

function NavList() {
  const loc = useLocation();
  const { inbox, workspace, user } = useWorkspace();
  const unread = inbox.data?.counts.unread ?? 0;
  const waiting = inbox.data?.counts.waitingForMe ?? 0;
  const approvals = useWaitingApprovals();
  return (
    <>
      <ul className="nav">
        {NAV.map((item) => {
          const current = loc.path === item.match || loc.path.startsWith(`${item.match}/`);
          return (
            <li key={item.to}>
              <Link to={item.to} className="nav-link" aria-current={current ? "page" : undefined}>
                <Icon name={item.icon} size={18} />
                <span className="nav-label">{item.label}</span>
                {item.to === "/inbox" ? <CountBadge count={unread} label="unread" /> : null}
                {item.to === "/tasks" && waiting > 0 ? <CountBadge count={waiting} label="waiting for you" /> : null}
                {item.to === "/approvals" ? <CountBadge count={approvals} label="waiting for your decision" /> : null}
              </Link>
            </li>
          );
        })}
      </ul>
      <div className="sidebar-foot">
        <span className="sidebar-ws">{workspace.name}</span>
        <span className="sidebar-user">{user.displayName || user.email}</span>
      </div>
    </>
  );
}

function TopBar({ phone, menuOpen, onMenu }: { phone: boolean; menuOpen: boolean; onMenu: () => void }) {
  const { inbox, workspace } = useWorkspace();
  const { direct, relay } = useSession();
  const unread = inbox.data?.counts.unread ?? 0;
  return (
    <header className={`topbar${direct ? " topbar-direct" : ""}`}>
      {phone ? (
        <button type="button" className="icon-btn" onClick={onMenu} aria-label="Open menu" aria-expanded={menuOpen} aria-haspopup="dialog">
          <Icon name="menu" />
        </button>
      ) : null}
      <Link to="/inbox" className="brand" aria-label="LineUp home">
        <img src="/icon.svg" alt="" width={24} height={24} />
        <span className="brand-word">LineUp</span>
      </Link>
      {!phone ? <span className="topbar-ws">{workspace.name}</span> : null}
      {relay ? (
        <span data-testid="relay-badge" title="This agent serves LineUp itself, reached through your IM server; it keeps its history.">
          <Badge tone="brand">Relay mode</Badge>
        </span>
      ) : direct ? (
        <span data-testid="direct-badge" title="This agent serves LineUp itself; nothing is kept after it stops.">
          <Badge tone="brand">Direct mode</Badge>
        </span>
      ) : null}
      <div className="topbar-right">
        <AgentsOnline compact={phone} />
        <Link
          to="/inbox"
          className="inbox-link"
          aria-label={unread > 0 ? `Inbox, ${unread} unread` : "Inbox, nothing unread"}
          data-testid="topbar-inbox"
        >
          <Icon name="inbox" size={20} />
          {unread > 0 ? <span className="count-badge" aria-hidden="true">{unread > 99 ? "99+" : unread}</span> : null}
        </Link>
      </div>
    </header>
  );
}

function AgentsOnline({ compact }: { compact: boolean }) {
  const { agents } = useWorkspace();
  if (!agents.data) return null;
  const active = agents.data.filter((a) => a.status !== "revoked");
  const online = active.filter((a) => a.online).length;
  const text = active.length === 0 ? "No agents" : `${online} of ${active.length} agent${active.length === 1 ? "" : "s"} online`;
  const tone = active.length === 0 ? "neutral" : online === active.length ? "success" : online === 0 ? "danger" : "waiting";
  return (
    <Link
      to="/agents"
      className={`online-indicator online-${tone}`}
      data-testid="agents-online"
      aria-label={compact ? text : undefined}
      data-short={compact && active.length > 0 ? `${online}/${active.length}` : undefined}
    >
      <Icon name={online > 0 ? "dot" : "plugOff"} size={14} />
      <span className={compact && active.length > 0 ? "online-text-compact" : undefined}>{text}</span>
    </Link>
  );
}

function ConnectionBanner() {
  const state = useConnectionState();
  const [offlineNet, setOfflineNet] = useState(typeof navigator !== "undefined" && navigator.onLine === false);
  useEffect(() => {
    const on = () => setOfflineNet(false);
    const off = () => setOfflineNet(true);
    window.addEventListener("online", on);
    window.addEventListener("offline", off);
    return () => {
      window.removeEventListener("online", on);
      window.removeEventListener("offline", off);
    };
  }, []);
  if (state === "denied") {
    return (
      <div className="conn-banner">
        <Banner tone="warning" title="Live updates stopped">
          The hub no longer accepts this session. <Link to="/signin">Sign in again</Link>.
        </Banner>
      </div>
    );
  }
  if (state === "offline" || offlineNet) {
    return (
      <div className="conn-banner" data-testid="offline-banner">
        <Banner tone="offline" title={offlineNet ? "You are offline" : "Reconnecting to the hub…"}>
          What you see may be out of date; it catches up by itself when the connection is back.
        </Banner>
      </div>
    );
  }
  return null;
}

function TaskPage({ taskId }: { taskId: string }) {
  return (
    <div className="page">
      <Link to="/tasks" className="back-link">
        <Icon name="back" size={16} /> Tasks
      </Link>
      <TaskDetailView taskId={taskId} />
    </div>
  );
}

function NotFound() {
  return (
    <div className="page">
      <EmptyState icon="info" title="There is nothing at this address">
        <Link to="/inbox">Go to your inbox</Link>
      </EmptyState>
    </div>
  );
}
