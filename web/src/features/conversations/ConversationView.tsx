// One conversation: messages, streamed agent text, inline task progress, decisions and
// artifacts, and the compose box ("Track as task", target agent).

import { useCallback, useId, useLayoutEffect, useMemo, useRef, useState, type FormEvent, type KeyboardEvent } from "react";
import { ApiError, newIdempotencyKey } from "../../api/client";
import type { Artifact, HubEvent, Interaction, Message, MessagesPage, Task } from "../../api/types";
import { useWorkspace } from "../../app/workspace";
import { linkAttributes } from "../../lib/links";
import { Link, useLocation, withQuery } from "../../lib/router";
import { useResource } from "../../lib/useResource";
import { useTitle } from "../../lib/useTitle";
import { PHONE, TOUCH, useMediaQuery } from "../../lib/useMediaQuery";
import { useNow } from "../../lib/useNow";
import { clockTime, fullTime } from "../../lib/time";
import { useHubEvents, useStreams } from "../../realtime/RealtimeProvider";
import { TokenUsage, TranscriptItem, useActivityEvents } from "../transcript/Transcript";
import { buildTranscript, isActivityEvent, type TranscriptEntry } from "../transcript/transcript";
import type { StreamingMessage } from "../../realtime/streams";
import { AgentStatusPill, Button, ErrorBanner, Icon, Loading, ProgressBar, TaskStatusPill } from "../../ui";
import { InteractionCard } from "../interactions/InteractionCard";
import { DeliveryNote } from "../agents/DeliveryNote";
import { RawEvents } from "../events/RawEvents";
import type { Approval, Execution, ToolCall } from "../../api/types";
import { ApprovalCard } from "../governance/ApprovalCard";
import { RunRow } from "../governance/RunRow";
import { CanvasCard, ToolCallCard, inboxEntries, useToolRunner } from "../../tools";
import { DownloadSession } from "./SessionFiles";
import "./conversations.css";

type Item =
  | { kind: "message"; at: string; seq: number; message: Message }
  | { kind: "interaction"; at: string; seq: number; interaction: Interaction }
  | { kind: "artifact"; at: string; seq: number; artifact: Artifact }
  // a tool call's card, or one card per canvas the agent opened here
  | { kind: "tool"; at: string; seq: number; call: ToolCall }
  | { kind: "canvas"; at: string; seq: number; instanceId: string; openCall?: ToolCall; pending: number }
  // a governed write's confirm card, and a governed execution's run
  | { kind: "approval"; at: string; seq: number; approval: Approval }
  | { kind: "run"; at: string; seq: number; execution: Execution }
  // what an agent did: a tool call, a command, a diff, a reasoning summary
  | { kind: "activity"; at: string; seq: number; entry: TranscriptEntry };

interface Pending {
  key: string;
  content: string;
  targetAgentId: string | null;
  trackAsTask: boolean;
  steer?: boolean;
  state: "sending" | "failed";
  error?: string;
}

/** A recorded message.created as the messages endpoint would show it. */
export function messageFromEvent(event: HubEvent): Message | null {
  if (event.type !== "message.created" || !event.conversationId) return null;
  const p = event.payload;
  if (!p.messageId || !p.author) return null;
  return {
    id: p.messageId,
    conversationId: event.conversationId,
    author: { ...p.author, id: p.author.id ?? null },
    content: p.content ?? "",
    blocks: p.blocks ?? null,
    attachments: p.attachments ?? null,
    targetAgentId: p.targetAgentId ?? null,
    taskId: p.taskId ?? event.taskId ?? null,
    createdAt: event.occurredAt,
    sequence: event.sequence ?? null,
  };
}

export function ConversationView({ conversationId }: { conversationId: string }) {
  const { api, agents, agentName, user } = useWorkspace();
  const conversation = useResource(() => api.conversation(conversationId), [api, conversationId], {
    refreshOn: (e) => e.conversationId === conversationId && e.type === "conversation.agent_joined",
  });
  const page = useResource<MessagesPage>(() => api.messages(conversationId), [api, conversationId], {
    // transcript entries arrive many a second and follow themselves (useActivityEvents)
    refreshOn: (e) =>
      (e.conversationId === conversationId && !isActivityEvent(e)) ||
      e.type === "agent.status_changed" ||
      e.type === "agent.connected",
  });
  // the agent's tool calls here; this app answers calculator and canvas calls
  useToolRunner(api);
  const toolCalls = useResource(() => api.toolCalls({ conversationId }).then((r) => r.toolCalls), [api, conversationId], {
    refreshOn: (e) => e.conversationId === conversationId && e.type.startsWith("tool."),
    debounceMs: 60,
  });
  const approvals = useResource(() => api.approvals("all", conversationId).then((r) => r.approvals), [api, conversationId], {
    refreshOn: (e) => e.conversationId === conversationId && e.type.startsWith("approval."),
    debounceMs: 60,
  });
  const executions = useResource(() => api.executions(conversationId).then((r) => r.executions), [api, conversationId], {
    refreshOn: (e) => e.conversationId === conversationId && e.type.startsWith("execution."),
    debounceMs: 60,
  });
  const projectId = conversation.data?.projectId ?? null;
  const project = useResource(() => (projectId ? api.project(projectId) : Promise.resolve(null)), [api, projectId]);
  const streams = useStreams();
  const activity = useActivityEvents(api, `conversation:${conversationId}`, (e) => e.conversationId === conversationId);
  const transcript = useMemo(() => buildTranscript(activity.data ?? []), [activity.data]);
  const [pending, setPending] = useState<Pending[]>([]);
  useTitle(conversation.data?.title ?? "Conversation");
  useNow(30_000);

  // A recorded message appears at once; the debounced refetch then brings tasks and the rest.
  const { setData, reload } = page;
  const addMessage = useCallback(
    (m: Message) =>
      setData((current) =>
        current && !current.messages.some((x) => x.id === m.id)
          ? { ...current, messages: [...current.messages, m] }
          : current,
      ),
    [setData],
  );
  useHubEvents((event) => {
    if (event.conversationId !== conversationId) return;
    const m = messageFromEvent(event);
    if (!m) return;
    addMessage(m);
    // Our own message recorded: its pending bubble has done its job (the POST may answer later).
    if (m.author.kind === "user" && m.author.id === user.id) {
      setPending((list) => {
        const i = list.findIndex((p) => p.state === "sending" && p.content === m.content);
        return i < 0 ? list : [...list.slice(0, i), ...list.slice(i + 1)];
      });
    }
  });

  // Sending is optimistic: a pending bubble, then the recorded message; a failure keeps the
  // text with Retry, which reuses the same Idempotency-Key so the hub never records it twice.
  const send = useCallback(
    (p: Pending) => {
      setPending((list) => [...list.filter((x) => x.key !== p.key), { ...p, state: "sending", error: undefined }]);
      api
        .postMessage(
          conversationId,
          { content: p.content, targetAgentId: p.targetAgentId, trackAsTask: p.trackAsTask, steer: p.steer },
          p.key,
        )
        .then((posted) => {
          setPending((list) => list.filter((x) => x.key !== p.key));
          addMessage(posted.message);
          reload();
        })
        .catch((err: unknown) => {
          const message = err instanceof ApiError ? err.message : String(err);
          setPending((list) => list.map((x) => (x.key === p.key ? { ...x, state: "failed", error: message } : x)));
        });
    },
    [api, conversationId, addMessage, reload],
  );

  const taskIds = useMemo(() => new Set((page.data?.tasks ?? []).map((t) => t.id)), [page.data]);
  const items = useMemo<Item[]>(() => {
    if (!page.data) return [];
    const out: Item[] = [
      ...page.data.messages.map((m) => ({ kind: "message" as const, at: m.createdAt ?? "", seq: m.sequence ?? 0, message: m })),
      ...page.data.interactions.map((i) => ({ kind: "interaction" as const, at: i.createdAt ?? "", seq: i.sequence ?? 0, interaction: i })),
      ...page.data.artifacts.map((a) => ({ kind: "artifact" as const, at: a.createdAt ?? "", seq: 0, artifact: a })),
      ...inboxEntries(toolCalls.data ?? []).map((entry): Item =>
        entry.kind === "call"
          ? { kind: "tool", at: entry.call.createdAt ?? "", seq: entry.sequence, call: entry.call }
          : { kind: "canvas", at: entry.openCall?.createdAt ?? "", seq: entry.sequence, instanceId: entry.instanceId, openCall: entry.openCall, pending: entry.pending },
      ),
      ...(approvals.data ?? []).map((a) => ({ kind: "approval" as const, at: a.createdAt, seq: a.sequence, approval: a })),
      ...(executions.data ?? []).map((x) => ({ kind: "run" as const, at: x.startedAt, seq: 0, execution: x })),
      ...transcript.entries.map((entry) => ({ kind: "activity" as const, at: entry.startedAt, seq: entry.sequence, entry })),
    ];
    out.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : a.seq - b.seq));
    return out;
  }, [page.data, toolCalls.data, approvals.data, executions.data, transcript]);
  const known = useMemo(() => new Set((page.data?.messages ?? []).map((m) => m.id)), [page.data]);
  const live = streams.filter(
    (s) => !known.has(s.messageId) && (s.conversationId === conversationId || (s.taskId != null && taskIds.has(s.taskId))),
  );

  const scroller = useRef<HTMLDivElement>(null);
  const stick = useRef(true);
  const lastText = live.map((s) => s.text.length).join(",");
  useLayoutEffect(() => {
    const el = scroller.current;
    if (el && stick.current) el.scrollTop = el.scrollHeight;
  }, [items.length, pending.length, lastText]);

  const convAgents = conversation.data?.agentIds ?? [];
  const tasksById = useMemo(() => new Map((page.data?.tasks ?? []).map((t) => [t.id, t])), [page.data]);
  // A task's progress shows once, under the message that started it.
  const firstMessageOfTask = useMemo(() => {
    const first = new Map<string, string>();
    for (const item of items) {
      if (item.kind === "message" && item.message.taskId && !first.has(item.message.taskId)) {
        first.set(item.message.taskId, item.message.id);
      }
    }
    return first;
  }, [items]);

  if (conversation.error && !conversation.data) {
    return (
      <div className="page">
        <BackLink />
        <ErrorBanner error={conversation.error} onRetry={conversation.reload} />
      </div>
    );
  }

  return (
    <div className="conversation">
      <header className="conv-head">
        <BackLink />
        <div className="conv-head-main">
          <h1 className="conv-head-title">{conversation.data?.title ?? "Conversation"}</h1>
          {conversation.data ? (
            <span className="conv-project" data-testid="conversation-project">
              <Icon name="tasks" size={14} />
              {projectId ? `Project: ${project.data?.name ?? "…"}` : "Personal"}
            </span>
          ) : null}
          <ul className="agent-chips" aria-label="Agents in this conversation">
            {convAgents.map((id) => {
              const a = agents.data?.find((x) => x.id === id);
              return (
                <li key={id} className="agent-chip">
                  <span>{agentName(id)}</span>
                  {a ? <AgentStatusPill agent={a} /> : null}
                </li>
              );
            })}
          </ul>
          <DownloadSession api={api} conversationId={conversationId} />
        </div>
      </header>

      <div
        className="stream"
        ref={scroller}
        onScroll={(e) => {
          const el = e.currentTarget;
          stick.current = el.scrollHeight - el.scrollTop - el.clientHeight < 80;
        }}
      >
        {!page.data ? (
          page.error ? <ErrorBanner error={page.error} onRetry={page.reload} /> : <Loading what="messages" />
        ) : (
          <div role="log" aria-label="Messages" aria-live="polite" aria-relevant="additions">
          <ol className="stream-list">
            {items.length === 0 && pending.length === 0 && live.length === 0 ? (
              <li className="stream-empty muted">
                No messages yet. Write below what you need; tick “Track as task” to follow it in Tasks.
              </li>
            ) : null}
            {items.map((item) =>
              item.kind === "message" ? (
                <MessageBubble
                  key={item.message.id}
                  message={item.message}
                  recipient={item.message.targetAgentId ?? tasksById.get(item.message.taskId ?? "")?.targetAgentId ?? null}
                  task={item.message.id === firstMessageOfTask.get(item.message.taskId ?? "") ? tasksById.get(item.message.taskId!) : undefined}
                />
              ) : item.kind === "interaction" ? (
                <li key={item.interaction.id} className="stream-card">
                  <InteractionCard
                    interaction={item.interaction}
                    api={api}
                    agentName={agentName(item.interaction.agentId)}
                    agent={agents.data?.find((a) => a.id === item.interaction.agentId)}
                    onAnswered={page.reload}
                  />
                </li>
              ) : item.kind === "tool" ? (
                <li key={item.call.id} className="stream-card">
                  <ToolCallCard call={item.call} api={api} agentName={agentName(item.call.agentId)} onAnswered={toolCalls.reload} />
                </li>
              ) : item.kind === "approval" ? (
                <li key={item.approval.id} className="stream-card">
                  <ApprovalCard
                    approval={item.approval}
                    api={api}
                    agentName={agentName(item.approval.agentId)}
                    meId={user.id}
                    onDecided={approvals.reload}
                  />
                </li>
              ) : item.kind === "activity" ? (
                <li key={`activity:${item.entry.activityId}`} className="stream-activity">
                  <TranscriptItem entry={item.entry} />
                </li>
              ) : item.kind === "run" ? (
                <li key={item.execution.id} className="stream-run">
                  <RunRow execution={item.execution} agentName={agentName(item.execution.agentId)} />
                </li>
              ) : item.kind === "canvas" ? (
                <li key={`canvas:${item.instanceId}`} className="stream-card">
                  <CanvasCard
                    instanceId={item.instanceId}
                    openCall={item.openCall}
                    pending={item.pending}
                    api={api}
                    agentName={item.openCall ? agentName(item.openCall.agentId) : undefined}
                  />
                </li>
              ) : (
                <li key={item.artifact.id} className="stream-artifact">
                  <a className="artifact" {...linkAttributes(item.artifact.url)}>
                    <Icon name="file" size={16} />
                    <span className="artifact-name">{item.artifact.name}</span>
                    {item.artifact.summary ? <span className="artifact-summary">{item.artifact.summary}</span> : null}
                  </a>
                </li>
              ),
            )}
            {live.map((s) => (
              <StreamingBubble key={s.messageId} stream={s} />
            ))}
            {transcript.usage ? (
              <li className="stream-activity">
                <TokenUsage usage={transcript.usage} />
              </li>
            ) : null}
            {pending.map((p) => (
              <PendingBubble
                key={p.key}
                pending={p}
                onRetry={() => send(p)}
                onDiscard={() => setPending((list) => list.filter((x) => x.key !== p.key))}
              />
            ))}
          </ol>
          </div>
        )}
      </div>

      <Composer conversationAgents={convAgents} onSend={send} />
    </div>
  );
}

function BackLink() {
  return (
    <Link to="/conversations" className="back-link">
      <Icon name="back" size={16} /> Conversations
    </Link>
  );
}

function authorLabel(message: Message, agentName: (id: string) => string, meId: string): string {
  if (message.author.kind === "user") return message.author.id === meId ? "You" : (message.author.name ?? "A teammate");
  if (message.author.kind === "agent") return message.author.name ?? agentName(message.author.id ?? "");
  return "LineUp";
}

function MessageBubble({
  message,
  task,
  recipient,
}: {
  message: Message;
  task: Task | undefined;
  /** The agent a person's message was sent on to, if any. */
  recipient: string | null;
}) {
  const { api, agentName, agents, user } = useWorkspace();
  const mine = message.author.kind === "user" && message.author.id === user.id;
  return (
    <li className={`msg msg-${message.author.kind}${mine ? " msg-mine" : ""}`} data-message-id={message.id}>
      <div className="msg-meta">
        <span className="msg-author">
          {message.author.kind === "agent" ? <Icon name="agent" size={14} /> : null}
          {authorLabel(message, agentName, user.id)}
        </span>
        <time dateTime={message.createdAt ?? undefined} title={fullTime(message.createdAt)}>
          {clockTime(message.createdAt)}
        </time>
        {message.author.kind === "user" && recipient ? (
          <DeliveryNote as="span" sentAt={message.createdAt} agent={agents.data?.find((a) => a.id === recipient)} />
        ) : null}
      </div>
      <div className="msg-body">{message.content}</div>
      {message.attachments && message.attachments.length > 0 ? (
        <ul className="attachment-list">
          {message.attachments.map((a) => (
            <li key={a.url}>
              <a {...linkAttributes(a.url)}>
                <Icon name="link" size={14} /> {a.name}
              </a>
            </li>
          ))}
        </ul>
      ) : null}
      {task ? <TaskChip task={task} /> : null}
      <RawEvents api={api} subject={`message:${message.id}`} what="message" />
    </li>
  );
}

function TaskChip({ task }: { task: Task }) {
  const loc = useLocation();
  const active = task.status === "running" || task.status === "waiting_for_human" || task.status === "queued";
  return (
    <div className="task-chip" data-task-id={task.id}>
      <TaskStatusPill task={task} />
      {active ? <ProgressBar compact value={task.progress} label={`Progress of ${task.title}`} /> : null}
      {active && task.progress != null ? <span className="task-chip-pct">{task.progress}%</span> : null}
      {task.summary ? <span className="task-chip-summary">{task.summary}</span> : null}
      <Link className="task-chip-open" to={withQuery(loc, { task: task.id })}>
        Open task <Icon name="chevron" size={14} />
      </Link>
    </div>
  );
}

function StreamingBubble({ stream }: { stream: StreamingMessage }) {
  const { actorName } = useWorkspace();
  return (
    <li className="msg msg-agent msg-streaming" data-streaming-id={stream.messageId} aria-busy="true">
      <div className="msg-meta">
        <span className="msg-author">
          <Icon name="agent" size={14} />
          {actorName(stream.actor)}
        </span>
        <span className="typing" aria-label="writing">
          <span />
          <span />
          <span />
        </span>
      </div>
      <div className="msg-body">{stream.text}</div>
    </li>
  );
}

function PendingBubble({ pending, onRetry, onDiscard }: { pending: Pending; onRetry: () => void; onDiscard: () => void }) {
  return (
    <li className={`msg msg-user msg-mine msg-pending msg-${pending.state}`}>
      <div className="msg-meta">
        <span className="msg-author">You</span>
        <span className="msg-state">{pending.state === "sending" ? "Sending…" : "Not sent"}</span>
      </div>
      <div className="msg-body">{pending.content}</div>
      {pending.state === "failed" ? (
        <div className="msg-failed" role="alert">
          <span>{pending.error}</span>
          <div className="button-row">
            <Button size="sm" onClick={onRetry}>
              Retry
            </Button>
            <Button size="sm" variant="ghost" onClick={onDiscard}>
              Discard
            </Button>
          </div>
        </div>
      ) : null}
    </li>
  );
}

function Composer({ conversationAgents, onSend }: { conversationAgents: string[]; onSend: (p: Pending) => void }) {
  const { agents } = useWorkspace();
  const candidates = (agents.data ?? []).filter(
    (a) => a.status !== "revoked" && a.confirmed !== false && (conversationAgents.length === 0 || conversationAgents.includes(a.id)),
  );
  const [content, setContent] = useState("");
  const [target, setTarget] = useState<string>("");
  const [track, setTrack] = useState(false);
  const [steer, setSteer] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const textId = useId();
  const targetId = useId();
  const trackId = useId();
  const steerId = useId();
  const errorId = useId();
  const effectiveTarget = target || candidates[0]?.id || "";
  // Until the agents are known a message would go to no agent at all.
  const loadingAgents = agents.data === undefined;
  const phone = useMediaQuery(PHONE);
  const enterSends = !useMediaQuery(TOUCH);

  function send(e?: FormEvent) {
    e?.preventDefault();
    const text = content.trim();
    if (loadingAgents) return;
    if (!text) {
      setError("Write a message first.");
      return;
    }
    if (track && !effectiveTarget) {
      setError("Choose the agent that should work on this task.");
      return;
    }
    setError(null);
    onSend({
      key: newIdempotencyKey(),
      content: text,
      targetAgentId: effectiveTarget || null,
      trackAsTask: track,
      steer: steer && !track,
      state: "sending",
    });
    setContent("");
    setTrack(false);
    setSteer(false);
  }

  function onKey(e: KeyboardEvent<HTMLTextAreaElement>) {
    if (enterSends && e.key === "Enter" && !e.shiftKey && !e.nativeEvent.isComposing) {
      e.preventDefault();
      send();
    }
  }

  return (
    <form className="composer" onSubmit={send} noValidate>
      <label htmlFor={textId} className="sr-only">
        Message
      </label>
      <textarea
        id={textId}
        className="composer-input"
        rows={2}
        value={content}
        onChange={(e) => setContent(e.target.value)}
        onKeyDown={onKey}
        placeholder={
          enterSends && !phone ? "Write what you need…  (Enter to send, Shift+Enter for a new line)" : "Write what you need…"
        }
        enterKeyHint={enterSends ? "send" : "enter"}
        aria-invalid={error ? true : undefined}
        aria-describedby={error ? errorId : undefined}
      />
      <div className="composer-row">
        <div className="composer-options">
          <label htmlFor={targetId} className="composer-label">
            To
          </label>
          <select id={targetId} value={effectiveTarget} onChange={(e) => setTarget(e.target.value)} disabled={candidates.length === 0}>
            {candidates.length === 0 ? <option value="">No agent</option> : null}
            {candidates.map((a) => (
              <option key={a.id} value={a.id}>
                {a.name}
                {a.online ? "" : " (offline)"}
              </option>
            ))}
          </select>
          <label className="check-inline" htmlFor={trackId}>
            <input
              id={trackId}
              type="checkbox"
              checked={track}
              onChange={(e) => {
                setTrack(e.target.checked);
                if (e.target.checked) setSteer(false);
              }}
            />
            Track as task
          </label>
          <label className="check-inline" htmlFor={steerId} title="Send it into what the agent is doing now, instead of after it">
            <input
              id={steerId}
              type="checkbox"
              checked={steer}
              onChange={(e) => {
                setSteer(e.target.checked);
                if (e.target.checked) setTrack(false);
              }}
            />
            Steer
          </label>
        </div>
        <Button type="submit" variant="primary" icon="send" disabled={loadingAgents} title={loadingAgents ? "Loading the agents…" : undefined}>
          Send
        </Button>
      </div>
      {error ? (
        <p id={errorId} className="field-error" role="alert">
          {error}
        </p>
      ) : null}
    </form>
  );
}
