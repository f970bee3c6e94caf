// A canvas as SVG: its strokes (SVG path data, colour, width), at its own size, scaled down to
// fit. The hub only lets path data (commands and numbers) and CSS colours through, and React
// sets them as attributes, so nothing here can be markup.

import type { CanvasInstance, CanvasStroke } from "../../api/types";

export function CanvasView({
  canvas,
  preview,
}: {
  canvas: Pick<CanvasInstance, "id" | "width" | "height" | "strokes" | "status">;
  /** A stroke shown dashed while its call waits for this app's answer. */
  preview?: Pick<CanvasStroke, "path" | "color" | "width"> | null;
}) {
  const count = canvas.strokes.length;
  const label = `Canvas ${canvas.width} by ${canvas.height}, ${count} ${count === 1 ? "stroke" : "strokes"}${
    canvas.status === "closed" ? ", closed" : ""
  }`;
  return (
    <figure className="canvas-figure" data-canvas-id={canvas.id}>
      <svg
        className="canvas-svg"
        viewBox={`0 0 ${canvas.width} ${canvas.height}`}
        width={canvas.width}
        height={canvas.height}
        role="img"
        aria-label={label}
        preserveAspectRatio="xMidYMid meet"
      >
        <rect x={0} y={0} width={canvas.width} height={canvas.height} className="canvas-paper" />
        {canvas.strokes.map((stroke) => (
          <path
            key={stroke.toolCallId}
            data-testid="canvas-stroke"
            d={stroke.path}
            fill="none"
            stroke={stroke.color ?? "currentColor"}
            strokeWidth={stroke.width ?? 2}
            strokeLinecap="round"
            strokeLinejoin="round"
          />
        ))}
        {preview ? (
          <path
            data-testid="canvas-preview"
            d={preview.path}
            fill="none"
            stroke={preview.color ?? "currentColor"}
            strokeWidth={preview.width ?? 2}
            strokeDasharray="6 4"
            opacity={0.6}
          />
        ) : null}
      </svg>
      <figcaption className="canvas-caption">
        {canvas.width} × {canvas.height} · {count} {count === 1 ? "stroke" : "strokes"}
      </figcaption>
    </figure>
  );
}
