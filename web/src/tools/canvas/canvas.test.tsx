import { act, render, screen, waitFor } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { ManualBus, RealtimeBusProvider } from "../../realtime/RealtimeProvider";
import { fakeToolApi, makeCall, makeCanvas } from "../testing";
import { asHubEvent } from "../../test/fixtures";
import { CanvasCard } from "./CanvasCard";
import { CanvasView } from "./CanvasView";
import { canvasAnswer } from "./canvas";

const strokes = [
  { path: "M10 10 L50 50", color: "red", width: 3, toolCallId: "tc_1" },
  { path: "M0 0 H90", color: null, width: null, toolCallId: "tc_2" },
];

describe("the canvas tool", () => {
  it("draws each stroke as an SVG path with its colour and width", () => {
    render(<CanvasView canvas={makeCanvas({ strokes })} />);
    const image = screen.getByRole("img", { name: "Canvas 400 by 300, 2 strokes" });
    expect(image).toHaveAttribute("viewBox", "0 0 400 300");
    const paths = screen.getAllByTestId("canvas-stroke");
    expect(paths.map((p) => p.getAttribute("d"))).toEqual(["M10 10 L50 50", "M0 0 H90"]);
    expect(paths[0]).toHaveAttribute("stroke", "red");
    expect(paths[0]).toHaveAttribute("stroke-width", "3");
    expect(paths[1]).toHaveAttribute("stroke-width", "2");
  });

  it("answers every canvas call the same way on every device", () => {
    expect(canvasAnswer({ action: "open", instanceId: "inst_1" })).toEqual({
      result: { message: "instance_id: inst_1", instance_id: "inst_1" },
    });
    expect(canvasAnswer({ action: "undo", instanceId: "inst_1" })).toEqual({ result: { message: "undone", instance_id: "inst_1" } });
    expect(canvasAnswer({ action: "draw", instanceId: null })).toMatchObject({ error: { code: "invalid_argument" } });
  });

  it("shows the drawing as the hub has it and redraws when a canvas call is answered", async () => {
    const open = makeCall("canvas", "open", { width: 400, height: 300 }, { status: "completed", instanceId: "inst_1" });
    const api = fakeToolApi(open, makeCanvas({ strokes: strokes.slice(0, 1) }));
    const bus = new ManualBus();
    render(
      <RealtimeBusProvider value={bus}>
        <CanvasCard instanceId="inst_1" openCall={open} api={api} />
      </RealtimeBusProvider>,
    );
    expect(await screen.findByRole("img", { name: "Canvas 400 by 300, 1 stroke" })).toBeVisible();
    expect(screen.getByText("Open")).toBeVisible();
    api.canvas.mockResolvedValue(makeCanvas({ strokes: [], status: "closed" }));
    act(() =>
      bus.emit(asHubEvent({
        id: "e2",
        type: "tool.completed",
        version: "0.1",
        occurredAt: "2026-07-24T12:06:00.000Z",
        workspaceId: "ws",
        sequence: 30,
        payload: { toolCallId: "tc_clear", name: "canvas", result: { message: "cleared" } },
      })),
    );
    await waitFor(() => expect(screen.getByRole("img", { name: "Canvas 400 by 300, 0 strokes, closed" })).toBeVisible());
    expect(screen.getByText("Closed")).toBeVisible();
  });

  it("shows a blank canvas of the asked size while the open call waits", () => {
    const open = makeCall("canvas", "open", { width: 200, height: 100 }, { instanceId: "inst_9" });
    render(<CanvasCard instanceId="inst_9" openCall={open} pending={1} api={fakeToolApi(open)} />);
    expect(screen.getByRole("img", { name: "Canvas 200 by 100, 0 strokes" })).toBeVisible();
    expect(screen.getByText("1 operation waiting for this app")).toBeVisible();
    expect(screen.getByText("Drawing")).toBeVisible();
  });
});
