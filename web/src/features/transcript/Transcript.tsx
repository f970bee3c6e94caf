// What an agent does, as it does it: tool calls (collapsed, arguments and result on expand),
// commands with their streamed output and exit code, diffs marked +/−, reasoning and tokens.

import { useMemo } from "react";
import type { HubEvent, RawSubject } from "../../api/types";
import type { WorkspaceApi } from "../../api/hub";
import { useResource } from "../../lib/useResource";
import { useHubEvents } from "../../realtime/RealtimeProvider";
import { linkAttributes } from "../../lib/links";
import { Icon, StatusPill, type IconName, type Tone } from "../../ui";
import {
  buildTranscript,
  diffLines,
  diffStats,
  entryLabel,
  formatTokens,
  isTranscriptEvent,
  type ActivityEvent,
  type TokenTotals,
  type TranscriptEntry,
} from "./transcript";
import "./transcript.css";

const PAGE = 500;
const MAX_PAGES = 40;

/** The activity events of a subject from the log, then live ones as they are recorded. */
export function useActivityEvents(api: WorkspaceApi, subject: RawSubject, belongs: (e: HubEvent) => boolean) {
  const resource = useResource<ActivityEvent[]>(
    async () => {
      const found: ActivityEvent[] = [];
      let after: number | undefined;
      for (let i = 0; i < MAX_PAGES; i++) {
        const page = await api.rawEvents(subject, after === undefined ? { limit: PAGE } : { after, limit: PAGE });
        for (const e of page.events) if (isTranscriptEvent(e)) found.push(e);
        if (!page.hasMore || page.events.length === 0) break;
        after = page.events[page.events.length - 1]?.sequence;
      }
      return found;
    },
    [api, subject],
  );
  const { setData } = resource;
  useHubEvents((event) => {
    if (!isTranscriptEvent(event) || !belongs(event)) return;
    setData((current) => (current && !current.some((e) => e.id === event.id) ? [...current, event as ActivityEvent] : current));
  });
  return resource;
}

const STATUS: Record<TranscriptEntry["status"], { tone: Tone; icon: IconName; label: string }> = {
  running: { tone: "running", icon: "running", label: "Running" },
  succeeded: { tone: "success", icon: "checkCircle", label: "Done" },
  failed: { tone: "danger", icon: "xCircle", label: "Failed" },
  cancelled: { tone: "neutral", icon: "stopCircle", label: "Cancelled" },
};

function json(value: unknown): string {
  if (typeof value === "string") return value;
  try {
    return JSON.stringify(value, null, 2);
  } catch {
    return String(value);
  }
}

const ICONS: Record<TranscriptEntry["kind"], IconName> = {
  tool_call: "package",
  command: "send",
  file_change: "pencil",
  reasoning: "info",
  context: "history",
  error: "alert",
};

export function Transcript({ events, emptyText }: { events: readonly ActivityEvent[]; emptyText?: string }) {
  const transcript = useMemo(() => buildTranscript(events), [events]);
  if (transcript.entries.length === 0 && !transcript.usage) {
    return emptyText ? <p className="muted">{emptyText}</p> : null;
  }
  return (
    <div className="transcript" data-testid="transcript">
      <ol className="tr-list">
        {transcript.entries.map((entry) => (
          <li key={entry.activityId}>
            <TranscriptItem entry={entry} />
          </li>
        ))}
      </ol>
      {transcript.usage ? <TokenUsage usage={transcript.usage} /> : null}
    </div>
  );
}

export function TranscriptItem({ entry }: { entry: TranscriptEntry }) {
  const s = STATUS[entry.status];
  const exit =
    entry.kind === "command" && entry.status !== "running"
      ? entry.exitCode === null
        ? "no exit code"
        : `exit ${entry.exitCode}`
      : null;
  return (
    <article className={`tr-entry tr-${entry.kind}`} data-kind={entry.kind} data-status={entry.status} data-activity-id={entry.activityId}>
      {entry.kind === "tool_call" ? (
        <details className="tr-details">
          <summary className="tr-summary">
            <Icon name="package" size={14} />
            <span className="tr-label">{entryLabel(entry)}</span>
            <StatusPill tone={s.tone} icon={s.icon} label={s.label} />
          </summary>
          <div className="tr-body">
            {entry.arguments !== undefined && entry.arguments !== null ? (
              <>
                <h4 className="tr-h">Arguments</h4>
                <pre className="tr-pre">{json(entry.arguments)}</pre>
              </>
            ) : null}
            {entry.status !== "running" ? (
              <>
                <h4 className="tr-h">{entry.status === "failed" ? "Error" : "Result"}</h4>
                {entry.error ? <pre className="tr-pre tr-error">{entry.error}</pre> : null}
                {entry.result !== undefined && entry.result !== null ? <pre className="tr-pre">{json(entry.result)}</pre> : null}
                {entry.resultUrl ? <FullLink url={entry.resultUrl} what="the whole result" /> : null}
              </>
            ) : null}
          </div>
        </details>
      ) : (
        <header className="tr-summary">
          <Icon name={ICONS[entry.kind]} size={14} />
          <span className="tr-label">{entryLabel(entry)}</span>
          {entry.kind === "file_change" && entry.diff ? <DiffStats diff={entry.diff} /> : null}
          {entry.kind === "command" ? (
            <StatusPill tone={s.tone} icon={s.icon} label={exit ? `${s.label} · ${exit}` : s.label} />
          ) : null}
        </header>
      )}
      {entry.kind === "command" ? <CommandBody entry={entry} /> : null}
      {entry.kind === "file_change" ? <DiffBody entry={entry} /> : null}
      {entry.kind === "reasoning" ? <p className="tr-reasoning">{[entry.text, ...entry.output.map((o) => o.text)].join("")}</p> : null}
      {entry.kind === "context" ? (
        <div className="tr-body tr-context">
          {entry.text ? <p className="tr-reasoning">{entry.text}</p> : null}
          {entry.snapshotUrl ? <FullLink url={entry.snapshotUrl} what="the snapshot" /> : null}
        </div>
      ) : null}
      {entry.kind === "error" && entry.text ? <p className="tr-reasoning tr-error-text">{entry.text}</p> : null}
    </article>
  );
}

function CommandBody({ entry }: { entry: TranscriptEntry }) {
  const shown = entry.output.reduce((n, o) => n + o.text.length, 0);
  const more = entry.outputChars !== null && entry.outputChars > shown;
  return (
    <div className="tr-body">
      {entry.cwd ? <p className="tr-cwd">in {entry.cwd}</p> : null}
      {entry.output.length > 0 ? (
        <pre className="tr-pre tr-output" aria-label="Command output" aria-live={entry.status === "running" ? "polite" : undefined}>
          {entry.output.map((o) =>
            o.stream === "stderr" ? (
              <span key={o.offset} className="tr-stderr">
                {o.text}
              </span>
            ) : (
              <span key={o.offset}>{o.text}</span>
            ),
          )}
        </pre>
      ) : entry.status !== "running" ? (
        <p className="muted">No output.</p>
      ) : null}
      {more ? (
        <p className="tr-more">
          Showing {shown.toLocaleString()} of {entry.outputChars?.toLocaleString()} characters.{" "}
          {entry.outputUrl ? <FullLink url={entry.outputUrl} what="the whole output" /> : null}
        </p>
      ) : entry.outputUrl ? (
        <FullLink url={entry.outputUrl} what="the whole output" />
      ) : null}
    </div>
  );
}

function DiffStats({ diff }: { diff: string }) {
  const { added, removed } = diffStats(diff);
  return (
    <span className="tr-stats" aria-label={`${added} lines added, ${removed} removed`}>
      <span className="tr-add">+{added}</span> <span className="tr-del">−{removed}</span>
    </span>
  );
}

function DiffBody({ entry }: { entry: TranscriptEntry }) {
  if (!entry.diff) return entry.diffUrl ? <FullLink url={entry.diffUrl} what="the diff" /> : null;
  return (
    <div className="tr-body">
      <pre className="tr-pre tr-diff" aria-label={`Diff of ${entry.path ?? "a file"}`}>
        {diffLines(entry.diff).map((l, i) => (
          <span
            key={i}
            className={l.sign === "+" ? "tr-line tr-add" : l.sign === "−" ? "tr-line tr-del" : l.sign === "@" ? "tr-line tr-hunk" : "tr-line"}
          >
            {l.sign === "@" ? l.text : `${l.sign} ${l.text}`}
            {"\n"}
          </span>
        ))}
      </pre>
      {entry.diffUrl ? <FullLink url={entry.diffUrl} what="the whole diff" /> : null}
    </div>
  );
}

function FullLink({ url, what }: { url: string; what: string }) {
  return (
    <a className="tr-full" {...linkAttributes(url)}>
      <Icon name="file" size={14} /> Open {what}
    </a>
  );
}

export function TokenUsage({ usage }: { usage: TokenTotals }) {
  const parts = [`${formatTokens(usage.inputTokens)} in`, `${formatTokens(usage.outputTokens)} out`];
  if (usage.cachedInputTokens) parts.push(`${formatTokens(usage.cachedInputTokens)} cached`);
  const full = usage.contextWindow ? Math.round((usage.lastInputTokens / usage.contextWindow) * 100) : null;
  return (
    <p className="tr-usage" data-testid="token-usage">
      <Icon name="history" size={14} /> Tokens: {parts.join(" · ")} over {usage.turns} {usage.turns === 1 ? "turn" : "turns"}
      {full !== null ? ` · context ${full}% full` : ""}
    </p>
  );
}
