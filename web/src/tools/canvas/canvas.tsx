// canvas (an app tool): open → instance_id, draw (SVG path data, colour, width), undo, clear,
// close. This app answers canvas calls by itself, in call order; the drawing lives in the hub's
// log (GET /canvases/{id}), so a reloaded page or another browser shows the same canvas.

import type { ToolCall } from "../../api/types";
import { useResource } from "../../lib/useResource";
import { Loading } from "../../ui";
import { builtinDefinition } from "../definitions";
import { failure, result, type ToolModule, type ToolOutcome, type ToolReadApi, type ToolRenderProps } from "../types";
import { CanvasView } from "./CanvasView";

const DONE: Record<string, string> = { draw: "drawn", undo: "undone", clear: "cleared", close: "closed" };

/** What every app answers for a canvas call: the same everywhere, so a second answer from
 * another device is "the same answer again", never a conflict. */
export function canvasAnswer(call: Pick<ToolCall, "action" | "instanceId">): ToolOutcome {
  const instance = call.instanceId;
  if (!instance) return failure("invalid_argument", "This canvas call names no instance.");
  if (call.action === "open") return result(`instance_id: ${instance}`, { instance_id: instance });
  const done = DONE[call.action ?? ""];
  if (!done) return failure("invalid_argument", `The canvas has no action ${JSON.stringify(call.action)}.`);
  return result(done, { instance_id: instance });
}

export function isCanvasEvent(event: { type: string; payload: Record<string, unknown> }): boolean {
  return event.type === "tool.completed" && event.payload.name === "canvas";
}

/** The live drawing of one instance, fetched again whenever a canvas call is answered. */
export function useCanvas(api: ToolReadApi, instanceId: string | null) {
  return useResource(() => (instanceId ? api.canvas(instanceId) : Promise.reject(new Error("no canvas"))), [api, instanceId], {
    enabled: !!instanceId,
    refreshOn: isCanvasEvent,
    debounceMs: 60,
  });
}

function describeCall(call: ToolCall): string {
  const a = call.arguments;
  switch (call.action) {
    case "open":
      return `Open a ${String(a.width)} × ${String(a.height)} canvas`;
    case "draw":
      return `Draw a ${typeof a.color === "string" ? `${a.color} ` : ""}path`;
    case "undo":
      return "Undo the last operation";
    case "clear":
      return "Clear the canvas";
    case "close":
      return "Close the canvas";
    default:
      return `Canvas ${call.action ?? ""}`;
  }
}

function CanvasRenderer({ call, api }: ToolRenderProps) {
  const opened = call.action === "open";
  const canvas = useCanvas(api, opened ? null : call.instanceId);
  if (opened) {
    const width = Number(call.arguments.width);
    const height = Number(call.arguments.height);
    return (
      <CanvasView canvas={{ id: call.instanceId ?? call.id, width, height, strokes: [], status: "open" }} />
    );
  }
  if (!canvas.data) return <Loading what="the canvas" />;
  const a = call.arguments;
  const preview =
    call.action === "draw" && typeof a.path === "string"
      ? { path: a.path, color: typeof a.color === "string" ? a.color : null, width: typeof a.width === "number" ? a.width : null }
      : null;
  return <CanvasView canvas={canvas.data} preview={call.status === "pending" ? preview : null} />;
}

export const canvas: ToolModule = {
  name: "canvas",
  definition: builtinDefinition("canvas"),
  icon: "pencil",
  label: "Canvas",
  doneLabel: "Canvas",
  title: describeCall,
  answerAutomatically: canvasAnswer,
  Renderer: CanvasRenderer,
  describe: (call) => call.result?.message ?? "",
};
