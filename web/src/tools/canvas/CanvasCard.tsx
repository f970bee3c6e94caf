// One canvas instance as a card in a conversation or the inbox: the drawing as the hub's log
// has it, redrawn whenever a canvas call is answered, with its status in words.

import { useId } from "react";
import type { ToolCall } from "../../api/types";
import { Icon, Loading, StatusPill, RelativeTime } from "../../ui";
import type { ToolReadApi } from "../types";
import { CanvasView } from "./CanvasView";
import { useCanvas } from "./canvas";
import "../tools.css";

export function CanvasCard({
  instanceId,
  openCall,
  pending = 0,
  api,
  agentName,
}: {
  instanceId: string;
  /** The call that opened it, shown until the canvas exists in the hub. */
  openCall?: ToolCall;
  /** Calls on this canvas that wait for an app (this app answers them in order). */
  pending?: number;
  api: ToolReadApi;
  agentName?: string;
}) {
  const titleId = useId();
  const opened = !openCall || openCall.status === "completed";
  const canvas = useCanvas(api, opened ? instanceId : null);
  const data = canvas.data;
  const closed = data?.status === "closed";
  const failed = openCall && (openCall.status === "failed" || openCall.status === "expired" || openCall.status === "cancelled");
  return (
    <article
      className={`icard tcard tcard-canvas ${closed || failed ? "icard-closed" : pending > 0 || !opened ? "icard-open" : ""}`}
      aria-labelledby={titleId}
      data-canvas-card={instanceId}
    >
      <header className="icard-head">
        <span className="icard-kind">
          <Icon name="pencil" size={16} /> Canvas
        </span>
        <span className="icard-meta">
          {agentName ? <span>from {agentName}</span> : null}
          {(data?.createdAt ?? openCall?.createdAt) ? (
            <RelativeTime iso={data?.createdAt ?? openCall?.createdAt} />
          ) : null}
        </span>
        {failed ? (
          <StatusPill tone="neutral" icon="stopCircle" label="Not opened" />
        ) : closed ? (
          <StatusPill tone="neutral" icon="stopCircle" label="Closed" />
        ) : pending > 0 || !opened ? (
          <StatusPill tone="running" icon="running" label="Drawing" />
        ) : (
          <StatusPill tone="success" icon="checkCircle" label="Open" />
        )}
      </header>
      <h3 id={titleId} className="icard-title">
        {data ? `Canvas ${data.width} × ${data.height}` : openCall ? `Canvas ${String(openCall.arguments.width)} × ${String(openCall.arguments.height)}` : "Canvas"}
      </h3>
      {data ? (
        <CanvasView canvas={data} />
      ) : !opened && openCall ? (
        failed ? (
          <p className="muted">{openCall.error?.message ?? "This canvas was never opened."}</p>
        ) : (
          <CanvasView
            canvas={{ id: instanceId, width: Number(openCall.arguments.width), height: Number(openCall.arguments.height), strokes: [], status: "open" }}
          />
        )
      ) : canvas.error ? (
        <p className="muted">The canvas could not be loaded: {canvas.error.message}</p>
      ) : (
        <Loading what="the canvas" />
      )}
      {pending > 0 ? (
        <p className="icard-submitting" aria-live="polite">
          <Icon name="running" size={14} /> {pending} {pending === 1 ? "operation" : "operations"} waiting for this app
        </p>
      ) : null}
    </article>
  );
}
