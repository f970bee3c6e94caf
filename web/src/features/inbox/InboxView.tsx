// The inbox: what waits for me, what needs attention, what was recently done.

import { useEffect, useRef, useState } from "react";
import type { Interaction, Task } from "../../api/types";
import { useWorkspace } from "../../app/workspace";
import { Link, useLocation, withQuery } from "../../lib/router";
import { useResource } from "../../lib/useResource";
import { useTitle } from "../../lib/useTitle";
import { useNow } from "../../lib/useNow";
import { useHubEvents } from "../../realtime/RealtimeProvider";
import { clockTime, relativeTime } from "../../lib/time";
import { EmptyState, ErrorBanner, Icon, Loading } from "../../ui";
import { InteractionCard } from "../interactions/InteractionCard";
import { InboxTools, countToolCards, useToolRunner } from "../../tools";
import { TaskRow } from "../tasks/TaskRow";
import { useWaitingApprovals } from "../governance/ApprovalsView";
import "./inbox.css";

export function InboxView() {
  const { api, inbox, agents, agentName } = useWorkspace();
  const counts = inbox.data?.counts;
  useTitle(counts && counts.unread > 0 ? `Inbox (${counts.unread})` : "Inbox");
  useNow(30_000);
  // Titles of the tasks the cards block, so a card can say what it is about.
  const waitingTasks = useResource(() => api.tasks("waiting").then((r) => r.tasks), [api], {
    refreshOn: (e) => e.type.startsWith("task.") || e.type === "interaction.requested",
  });
  // this app answers calculator and canvas calls while the inbox is open.
  useToolRunner(api);
  const approvals = useWaitingApprovals();

  // Cards answered during this visit stay in place, read-only, showing who answered what;
  // they leave the inbox next time it is opened. A withdrawn card (its task was cancelled,
  // or the agent took it back) leaves at once: there is nothing left to read or do on it.
  const seen = useRef(new Map<string, Interaction>());
  const [withdrawn, setWithdrawn] = useState<ReadonlySet<string>>(() => new Set());
  useHubEvents((event) => {
    const id = event.payload.interactionId;
    if (event.type === "interaction.cancelled" && typeof id === "string") setWithdrawn((w) => new Set(w).add(id));
  });
  const toolsSeen = useRef(false); // tool cards shown during this visit
  const [settled, setSettled] = useState<Record<string, Interaction>>({});
  const waitingNow = inbox.data?.waitingForMe;
  if (waitingNow) for (const i of waitingNow) seen.current.set(i.id, i);
  useEffect(() => {
    if (!waitingNow) return;
    const open = new Set(waitingNow.map((i) => i.id));
    for (const [id, last] of seen.current) {
      if (open.has(id) || settled[id]) continue;
      setSettled((s) => ({ ...s, [id]: last }));
      api.interaction(id).then(
        (latest) => setSettled((s) => ({ ...s, [id]: latest })),
        () => undefined,
      );
    }
  }, [waitingNow, api, settled]);

  if (!inbox.data) {
    return (
      <div className="page">
        <header className="page-head">
          <h1>Inbox</h1>
        </header>
        {inbox.error ? <ErrorBanner error={inbox.error} onRetry={inbox.reload} /> : <Loading what="your inbox" />}
      </div>
    );
  }
  const { waitingForMe, needsAttention, recentlyDone } = inbox.data;
  const waitingTools = inbox.data.waitingTools ?? [];
  const waitingCount = waitingForMe.length + countToolCards(waitingTools) + approvals;
  if (waitingTools.length > 0) toolsSeen.current = true;
  const cards = [...seen.current.values()]
    .map((i) => waitingForMe.find((w) => w.id === i.id) ?? settled[i.id] ?? i)
    .filter((i) => i.status !== "cancelled" && !withdrawn.has(i.id));
  const noAgents = agents.data !== undefined && agents.data.filter((a) => a.status !== "revoked").length === 0;

  return (
    <div className="page inbox">
      <header className="page-head">
        <h1>Inbox</h1>
        <p className="page-sub">
          {waitingCount === 0
            ? "Nothing needs you right now."
            : `${waitingCount} ${waitingCount === 1 ? "request needs" : "requests need"} your decision.`}
        </p>
      </header>

      {noAgents ? (
        <div className="callout">
          <EmptyState
            icon="agent"
            title="No agents yet — Connect my agent to pair one"
            action={
              <Link className="btn btn-primary" to="/agents?connect=1">
                <Icon name="plus" size={17} />
                Connect my agent
              </Link>
            }
          >
            Agents connect out to this hub, so nothing needs to be opened on their machine.
          </EmptyState>
        </div>
      ) : null}

      <section className="inbox-section" aria-labelledby="inbox-waiting">
        <h2 id="inbox-waiting" className="section-title">
          <Icon name="hand" size={18} /> Waiting for you
          <span className="section-count">{waitingCount}</span>
        </h2>
        {approvals > 0 ? (
          <Link to="/approvals" className="inbox-approvals" data-testid="inbox-approvals">
            <Icon name="shield" size={16} />
            {approvals === 1 ? "1 change waits for your approval" : `${approvals} changes wait for your approval`}
            <Icon name="chevron" size={14} />
          </Link>
        ) : null}
        {cards.length === 0 && !toolsSeen.current && approvals === 0 ? (
          <EmptyState icon="inbox" title="You're all caught up">
            When an agent needs an approval, a choice or an answer, it shows up here.
          </EmptyState>
        ) : cards.length === 0 && !toolsSeen.current ? null : (
          <div className="stack">
            {cards.map((i) => (
              <InteractionCard
                key={i.id}
                interaction={i}
                api={api}
                agentName={agentName(i.agentId)}
                agent={agents.data?.find((a) => a.id === i.agentId)}
                context={<CardContext interaction={i} tasks={waitingTasks.data} />}
                onAnswered={inbox.reload}
              />
            ))}
            <InboxTools calls={waitingTools} api={api} agentName={agentName} onAnswered={inbox.reload} />
          </div>
        )}
      </section>

      <section className="inbox-section" aria-labelledby="inbox-attention">
        <h2 id="inbox-attention" className="section-title">
          <Icon name="alert" size={18} /> Needs attention
          <span className="section-count">{needsAttention.length}</span>
        </h2>
        {needsAttention.length === 0 ? (
          <p className="muted quiet-empty">No failed tasks and no lost agents.</p>
        ) : (
          <ul className="task-list">
            {needsAttention.map((t) => (
              <TaskRow key={t.id} task={t} note={attentionNote(t)} />
            ))}
          </ul>
        )}
      </section>

      <section className="inbox-section" aria-labelledby="inbox-done">
        <h2 id="inbox-done" className="section-title">
          <Icon name="checkCircle" size={18} /> Recently done
          <span className="section-count">{recentlyDone.length}</span>
        </h2>
        {recentlyDone.length === 0 ? (
          <p className="muted quiet-empty">Finished tasks will show up here.</p>
        ) : (
          <ul className="task-list">
            {recentlyDone.map((t) => (
              <TaskRow key={t.id} task={t} />
            ))}
          </ul>
        )}
      </section>
    </div>
  );
}

export function attentionNote(task: Task): string | undefined {
  if (task.agentConnectionLost) {
    const lost = task.connectionLostAt ?? task.lastHeartbeatAt;
    const when = lost ? ` at ${clockTime(lost)} (${relativeTime(lost)})` : "";
    const beat = task.lastHeartbeatAt ? ` — last heartbeat ${clockTime(task.lastHeartbeatAt)}` : "";
    return `Agent connection lost${when}${beat}`;
  }
  if (task.status === "failed") {
    return task.error === "agent_unreachable"
      ? "Failed: the agent did not come back in time"
      : `Failed${task.error ? `: ${task.error}` : ""}`;
  }
  return undefined;
}

function CardContext({ interaction, tasks }: { interaction: Interaction; tasks: Task[] | undefined }) {
  const loc = useLocation();
  if (!interaction.taskId) {
    return interaction.conversationId ? (
      <Link to={`/conversations/${interaction.conversationId}`}>Open the conversation</Link>
    ) : null;
  }
  const title = interaction.taskTitle || tasks?.find((t) => t.id === interaction.taskId)?.title;
  const link = withQuery(loc, { task: interaction.taskId });
  return (
    <span className="icard-task">
      <Icon name="tasks" size={14} />{" "}
      {title ? (
        <>
          Task: <Link to={link}>{title}</Link>
        </>
      ) : (
        <Link to={link}>Show its task</Link>
      )}
    </span>
  );
}

