// The approval center: what waits for me, what my agents raised, what is over; each row opens
// its confirm card. Kept fresh by the governance facts on the socket.

import type { Approval, ApprovalView } from "../../api/types";
import { useWorkspace } from "../../app/workspace";
import { Link, navigate, useLocation, withQuery } from "../../lib/router";
import { useResource } from "../../lib/useResource";
import { useTitle } from "../../lib/useTitle";
import { EmptyState, ErrorBanner, Icon, Loading, RelativeTime, StatusPill, Tabs } from "../../ui";
import { ApprovalCard } from "./ApprovalCard";
import { approvalLook, touchesGovernance } from "./status";
import "./governance.css";

type Tab = Exclude<ApprovalView, "all">;

const TABS: Array<{ id: Tab; label: string; empty: string }> = [
  { id: "waiting", label: "Waiting for me", empty: "Nothing waits for your decision." },
  { id: "raised", label: "Raised by me", empty: "No agent in your conversations has asked for a change yet." },
  { id: "done", label: "Done", empty: "No decided, expired or voided approvals yet." },
];

/** How many approvals wait for the signed-in person (for the navigation's badge). */
export function useWaitingApprovals(): number {
  const { api } = useWorkspace();
  const waiting = useResource(() => api.approvals("waiting").then((r) => r.approvals.length), [api], {
    refreshOn: (e) => e.type.startsWith("approval.") || e.type.startsWith("project."),
  });
  return waiting.data ?? 0;
}

export function ApprovalsView() {
  const loc = useLocation();
  const { api, agentName } = useWorkspace();
  const current = TABS.find((t) => t.id === loc.search.get("view"))?.id ?? "waiting";
  useTitle("Approvals");
  const list = useResource(() => api.approvals(current).then((r) => r.approvals), [api, current], {
    refreshOn: touchesGovernance,
  });
  const projects = useResource(() => api.projects().then((r) => r.projects), [api], {
    refreshOn: (e) => e.type.startsWith("project."),
  });
  const projectName = (id: string) => projects.data?.find((p) => p.id === id)?.name ?? "a project";

  function select(id: Tab) {
    navigate(withQuery(loc, { view: id === "waiting" ? null : id }), { replace: true });
  }

  const tab = TABS.find((t) => t.id === current)!;
  return (
    <div className="page">
      <header className="page-head">
        <h1>Approvals</h1>
      </header>
      <Tabs tabs={TABS} current={current} onSelect={select} label="Approvals" idPrefix="approvals">
        {list.error && !list.data ? <ErrorBanner error={list.error} onRetry={list.reload} /> : null}
        {!list.data && !list.error ? <Loading what="approvals" /> : null}
        {list.data && list.data.length === 0 ? <EmptyState icon="shield" title={tab.empty} /> : null}
        {list.data && list.data.length > 0 ? (
          <ul className="approval-list" aria-label={tab.label}>
            {list.data.map((a) => (
              <ApprovalRow key={a.id} approval={a} agent={agentName(a.agentId)} project={projectName(a.projectId)} />
            ))}
          </ul>
        ) : null}
      </Tabs>
    </div>
  );
}

function ApprovalRow({ approval, agent, project }: { approval: Approval; agent: string; project: string }) {
  return (
    <li className="approval-row" data-approval-id={approval.id}>
      <Link to={`/approvals/${encodeURIComponent(approval.id)}`} className="approval-row-link">
        <span className="approval-row-top">
          <span className="approval-row-title">{approval.summary || approval.capability}</span>
          <StatusPill {...approvalLook(approval.status)} />
        </span>
        <span className="approval-row-meta">
          <code>{approval.capability}</code>
          <span>on {approval.instance}</span>
          <span>{project}</span>
          <span>from {agent}</span>
          <RelativeTime iso={approval.decidedAt ?? approval.createdAt} />
        </span>
      </Link>
    </li>
  );
}

/** One approval's page: its card, and where it came from. */
export function ApprovalPage({ approvalId }: { approvalId: string }) {
  const { api, agentName, user } = useWorkspace();
  const approval = useResource(() => api.approval(approvalId), [api, approvalId], {
    refreshOn: (e) =>
      (e.type.startsWith("approval.") && (e.payload as { approvalId?: string }).approvalId === approvalId) ||
      e.type === "execution.started",
  });
  useTitle("Approval");
  const a = approval.data;
  return (
    <div className="page">
      <Link to="/approvals" className="back-link">
        <Icon name="back" size={16} /> Approvals
      </Link>
      {approval.error && !a ? <ErrorBanner error={approval.error} onRetry={approval.reload} /> : null}
      {!a && !approval.error ? <Loading what="the approval" /> : null}
      {a ? (
        <ApprovalCard
          key={a.id}
          approval={a}
          api={api}
          agentName={agentName(a.agentId)}
          meId={user.id}
          headingLevel={2}
          onDecided={approval.reload}
          context={
            a.conversationId ? (
              <Link to={`/conversations/${encodeURIComponent(a.conversationId)}`}>
                <Icon name="chat" size={14} /> Open the conversation
              </Link>
            ) : null
          }
        />
      ) : null}
    </div>
  );
}
