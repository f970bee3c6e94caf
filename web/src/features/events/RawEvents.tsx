// The recorded events behind a task, message or card, for the person who wants to debug it:
// closed until asked for, then each event's type, sequence, id, time and payload as JSON.

import { useCallback, useId, useState } from "react";
import type { ApiError } from "../../api/client";
import type { RawEvent, RawEvents as Page, RawSubject } from "../../api/types";
import { clockTime, fullTime } from "../../lib/time";
import { Button, Loading } from "../../ui";
import "./events.css";

const PAGE = 50;

export interface RawEventsApi {
  rawEvents(subject: RawSubject, page?: { after?: number; before?: number; limit?: number }): Promise<Page>;
}

export function RawEvents({ api, subject, what }: { api: RawEventsApi; subject: RawSubject; what: string }) {
  const listId = useId();
  const [open, setOpen] = useState(false);
  const [events, setEvents] = useState<RawEvent[] | null>(null);
  const [hasMore, setHasMore] = useState(false);
  const [compactedBefore, setCompactedBefore] = useState<number | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const load = useCallback(
    async (after?: number) => {
      setBusy(true);
      try {
        const page = await api.rawEvents(subject, { after, limit: PAGE });
        setEvents((shown) => (after === undefined ? page.events : [...(shown ?? []), ...page.events]));
        setHasMore(page.hasMore);
        setCompactedBefore(page.compactedBefore);
        setError(null);
      } catch (err) {
        setError((err as ApiError).message);
      } finally {
        setBusy(false);
      }
    },
    [api, subject],
  );

  const toggle = () => {
    const opening = !open;
    setOpen(opening);
    if (opening) void load(); // read afresh each time: the log moves on
  };
  const last = events?.at(-1)?.sequence;

  return (
    <div className="raw-events" data-subject={subject}>
      <Button
        variant="ghost"
        size="sm"
        aria-expanded={open}
        aria-controls={listId}
        onClick={toggle}
        aria-label={`${open ? "Hide" : "Show"} events of this ${what}`}
      >
        {open ? "Hide events" : "Show events"}
      </Button>
      {open ? (
        <div id={listId} className="raw-events-body">
          {error ? (
            <p className="field-error" role="alert">
              {error}
            </p>
          ) : null}
          {events === null && !error ? <Loading what="events" /> : null}
          {compactedBefore !== null && events !== null ? (
            <p className="muted small">
              The log was compacted before #{compactedBefore}: older events of this {what} may
              be gone.
            </p>
          ) : null}
          {events && events.length === 0 ? <p className="muted small">No events kept.</p> : null}
          {events && events.length > 0 ? (
            <ol className="raw-event-list" aria-label={`Events of this ${what}`}>
              {events.map((event) => (
                <RawEventItem key={event.sequence} event={event} />
              ))}
            </ol>
          ) : null}
          {hasMore && last !== undefined ? (
            <Button variant="ghost" size="sm" busy={busy} onClick={() => void load(last)}>
              Show more events
            </Button>
          ) : null}
        </div>
      ) : null}
    </div>
  );
}

function RawEventItem({ event }: { event: RawEvent }) {
  return (
    <li className="raw-event" data-sequence={event.sequence}>
      <div className="raw-event-head">
        <span className="raw-event-seq">#{event.sequence}</span>
        <code className="raw-event-type">{event.type}</code>
        <time dateTime={event.recordedAt} title={fullTime(event.recordedAt)}>
          {clockTime(event.recordedAt)}
        </time>
      </div>
      <div className="raw-event-ids muted small">
        id <code>{event.id}</code> · by <code>{event.actor}</code>
      </div>
      <pre className="raw-event-payload">{JSON.stringify(event.payload, null, 2)}</pre>
    </li>
  );
}
