// A task's detail: status, progress, summary, children, decisions, artifacts and timeline.

import { useMemo, useState } from "react";
import { ApiError, newIdempotencyKey } from "../../api/client";
import type { HubEvent, InteractionRequest, TaskDetail as Detail } from "../../api/types";
import { useWorkspace } from "../../app/workspace";
import { failureText } from "./failure";
import { CancelBanner } from "./CancelBanner";
import { useResource } from "../../lib/useResource";
import { fullTime, clockTime } from "../../lib/time";
import { useNow } from "../../lib/useNow";
import { Link, useLocation, withQuery } from "../../lib/router";
import {
  AgentStatusPill,
  Banner,
  Button,
  ErrorBanner,
  Icon,
  Loading,
  ProgressBar,
  StatusPill,
  TaskStatusPill,
  TASK_STATUS,
  RelativeTime,
} from "../../ui";
import { InteractionCard } from "../interactions/InteractionCard";
import { RawEvents } from "../events/RawEvents";
import { describeEvent, describeTaskEvent, type TimelineContext } from "./timeline";
import { linkAttributes } from "../../lib/links";
import { Transcript, useActivityEvents } from "../transcript/Transcript";
import { isActivityEvent } from "../transcript/transcript";
import "./tasks.css";

const ACTIVE = new Set(["queued", "running", "waiting_for_human"]);

export function TaskDetailView({ taskId, headingId }: { taskId: string; headingId?: string }) {
  const { api, agents, actorName } = useWorkspace();
  const [childIds, setChildIds] = useState<string[]>([]);
  const detail = useResource<Detail>(
    () =>
      api.task(taskId).then((d) => {
        setChildIds(d.children.map((c) => c.id));
        return d;
      }),
    [api, taskId],
    {
      // transcript entries arrive many a second: the transcript follows them itself
      refreshOn: (e: HubEvent) =>
        (e.taskId === taskId && !isActivityEvent(e)) ||
        (e.taskId != null && childIds.includes(e.taskId)) ||
        e.payload.parentTaskId === taskId ||
        e.type === "agent.status_changed" ||
        e.type === "agent.connected" ||
        e.type === "agent.revoked",
    },
  );
  const activity = useActivityEvents(api, `task:${taskId}`, (e) => e.taskId === taskId);
  useNow(30_000);

  if (!detail.data) {
    if (detail.error)
      return (
        <div className="detail-pad">
          <ErrorBanner error={detail.error} onRetry={detail.reload} />
        </div>
      );
    return <Loading what="task" />;
  }
  const { task, children, interactions, artifacts, timeline } = detail.data;
  const agent = agents.data?.find((a) => a.id === task.targetAgentId);
  const active = ACTIVE.has(task.status);
  const waiting = interactions.filter((i) => i.status === "requested");
  const decided = interactions.filter((i) => i.status !== "requested");

  return (
    <div className="task-detail" data-task-id={task.id} data-status={task.status}>
      <header className="td-head">
        <h2 id={headingId} className="td-title">
          {task.title}
        </h2>
        <div className="td-status">
          <TaskStatusPill task={task} />
          {/* The pill shows a lost connection first; a pending cancel must not hide behind it. */}
          {active && task.agentConnectionLost && task.cancelRequested ? (
            <StatusPill tone="waiting" icon="stopCircle" label="Cancel requested" />
          ) : null}
        </div>
        <ProgressBar value={task.progress} label="Task progress" />
        {task.summary ? <p className="td-summary">{task.summary}</p> : null}
      </header>

      {task.agentConnectionLost && active ? (
        <Banner tone="danger" icon="plugOff" title="Agent connection lost" live="polite">
          {task.connectionLostAt ? (
            <>
              Lost at <time dateTime={task.connectionLostAt}>{clockTime(task.connectionLostAt)}</time> (
              <RelativeTime iso={task.connectionLostAt} />); last heartbeat{" "}
              {task.lastHeartbeatAt ? clockTime(task.lastHeartbeatAt) : "unknown"}.
            </>
          ) : (
            <>
              Last heartbeat{" "}
              {task.lastHeartbeatAt ? (
                <>
                  {clockTime(task.lastHeartbeatAt)} (<RelativeTime iso={task.lastHeartbeatAt} />)
                </>
              ) : (
                "unknown"
              )}
              .
            </>
          )}{" "}
          The task waits for the agent to reconnect; if it does not come back in time, the task fails.
        </Banner>
      ) : null}
      <CancelBanner task={task} />
      {task.status === "failed" ? (
        <Banner tone="danger" title="This task failed">
          {task.error === "agent_unreachable"
            ? "The agent did not come back within the grace period."
            : (failureText(task) ?? "The agent reported a failure.")}
        </Banner>
      ) : null}

      <dl className="td-facts">
        <div>
          <dt>Agent</dt>
          <dd>
            {agent ? (
              <>
                <Link to={`/agents/${agent.id}`}>{agent.name}</Link> <AgentStatusPill agent={agent} />
              </>
            ) : (
              "—"
            )}
          </dd>
        </div>
        <div>
          <dt>Started</dt>
          <dd>{fullTime(task.createdAt)}</dd>
        </div>
        <div>
          <dt>Updated</dt>
          <dd>
            <RelativeTime iso={task.updatedAt} />
          </dd>
        </div>
        {task.parentTaskId ? (
          <div>
            <dt>Part of</dt>
            <dd>
              <ParentLink id={task.parentTaskId} />
            </dd>
          </div>
        ) : null}
      </dl>

      {active ? <CancelTask taskId={task.id} requested={task.cancelRequested} onDone={detail.reload} /> : null}

      {waiting.length > 0 ? (
        <section className="td-section" aria-labelledby={`${task.id}-waiting`}>
          <h3 id={`${task.id}-waiting`} className="td-h">
            Waiting for you
          </h3>
          <div className="stack">
            {waiting.map((i) => (
              <InteractionCard key={i.id} interaction={i} api={api} agentName={agent?.name} agent={agent} headingLevel={4} onAnswered={detail.reload} />
            ))}
          </div>
        </section>
      ) : null}

      <section className="td-section" aria-labelledby={`${task.id}-transcript`}>
        <h3 id={`${task.id}-transcript`} className="td-h">
          What the agent is doing
        </h3>
        <Transcript events={activity.data ?? []} emptyText="Nothing reported yet." />
      </section>

      <section className="td-section" aria-labelledby={`${task.id}-children`}>
        <h3 id={`${task.id}-children`} className="td-h">
          Child tasks
        </h3>
        {children.length === 0 ? (
          <p className="muted">No child tasks.</p>
        ) : (
          <ul className="child-list">
            {children.map((c) => {
              const s = TASK_STATUS[c.status];
              return (
                <li key={c.id} className={`child child-${s.tone}`} data-task-id={c.id}>
                  <ChildLink id={c.id} title={c.title} />
                  <TaskStatusPill task={c} />
                </li>
              );
            })}
          </ul>
        )}
      </section>

      <section className="td-section" aria-labelledby={`${task.id}-artifacts`}>
        <h3 id={`${task.id}-artifacts`} className="td-h">
          Artifacts
        </h3>
        {artifacts.length === 0 ? (
          <p className="muted">Nothing produced yet.</p>
        ) : (
          <ul className="artifact-list">
            {artifacts.map((a) => (
              <li key={a.id}>
                <a className="artifact" {...linkAttributes(a.url)}>
                  <Icon name="file" size={16} />
                  <span className="artifact-name">{a.name}</span>
                  {a.summary ? <span className="artifact-summary">{a.summary}</span> : null}
                </a>
              </li>
            ))}
          </ul>
        )}
      </section>

      {decided.length > 0 ? (
        <section className="td-section" aria-labelledby={`${task.id}-decisions`}>
          <h3 id={`${task.id}-decisions`} className="td-h">
            Decisions
          </h3>
          <div className="stack">
            {decided.map((i) => (
              <InteractionCard key={i.id} interaction={i} api={api} agentName={agent?.name} agent={agent} headingLevel={4} />
            ))}
          </div>
        </section>
      ) : null}

      <section className="td-section" aria-labelledby={`${task.id}-timeline`}>
        <h3 id={`${task.id}-timeline`} className="td-h">
          Timeline
        </h3>
        <Timeline
          events={timeline.filter((e) => !isActivityEvent(e))}
          actorName={actorName}
          requests={interactions.map((i) => i.request)}
          context={{ taskId: task.id, childTitles: new Map(children.map((c) => [c.id, c.title])) }}
        />
        <RawEvents api={api} subject={`task:${task.id}`} what="task" />
      </section>
    </div>
  );
}

export function Timeline({
  events,
  actorName,
  requests = [],
  context,
}: {
  events: HubEvent[];
  actorName: (actor: string | null | undefined) => string;
  requests?: InteractionRequest[];
  /** Set for a task's timeline; an agent's history has none. */
  context?: TimelineContext;
}) {
  const byId = useMemo(() => new Map(requests.map((r) => [r.id, r])), [requests]);
  if (events.length === 0) return <p className="muted">No events yet.</p>;
  return (
    <ol className="timeline">
      {events.map((e) => {
        const line = context ? describeTaskEvent(e, actorName, byId, context) : describeEvent(e, actorName, byId);
        return (
          <li key={e.id} className={`tl tl-${line.tone}`} data-event-type={e.type}>
            <span className="tl-icon">
              <Icon name={line.icon} size={14} />
            </span>
            <span className="tl-text">{line.text}</span>
            <time className="tl-time" dateTime={e.occurredAt} title={fullTime(e.occurredAt)}>
              {clockTime(e.occurredAt)}
            </time>
          </li>
        );
      })}
    </ol>
  );
}

function ChildLink({ id, title }: { id: string; title: string }) {
  const loc = useLocation();
  return (
    <Link className="child-title" to={withQuery(loc, { task: id })}>
      {title}
    </Link>
  );
}

function ParentLink({ id }: { id: string }) {
  const loc = useLocation();
  return <Link to={withQuery(loc, { task: id })}>the parent task</Link>;
}

function CancelTask({ taskId, requested, onDone }: { taskId: string; requested: boolean; onDone: () => void }) {
  const { api } = useWorkspace();
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);
  const [key] = useState(newIdempotencyKey);
  if (requested) return null;
  async function cancel() {
    setBusy(true);
    setError(null);
    try {
      await api.cancelTask(taskId, undefined, key);
      setConfirming(false);
      onDone();
    } catch (err) {
      setError(err as ApiError);
    } finally {
      setBusy(false);
    }
  }
  return (
    <div className="td-cancel">
      {!confirming ? (
        <Button icon="stopCircle" onClick={() => setConfirming(true)}>
          Cancel task
        </Button>
      ) : (
        <div className="confirm" role="group" aria-label="Confirm cancel">
          <p>Ask the agent to stop this task? It ends when the agent confirms, or when LineUp stops waiting for it.</p>
          <div className="button-row">
            <Button variant="danger" busy={busy} onClick={cancel}>
              {busy ? "Requesting…" : "Yes, cancel task"}
            </Button>
            <Button variant="ghost" disabled={busy} onClick={() => setConfirming(false)}>
              Keep it running
            </Button>
          </div>
        </div>
      )}
      {error ? (
        <p className="field-error" role="alert">
          {error.message}
        </p>
      ) : null}
    </div>
  );
}
