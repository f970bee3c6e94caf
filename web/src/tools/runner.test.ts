import { describe, expect, it, vi } from "vitest";
import { ApiError } from "../api/client";
import type { ToolAnswer, ToolCall } from "../api/types";
import { answerAutomatically, automaticAnswer } from "./runner";
import { answered, makeCall } from "./testing";

function api() {
  return { answerToolCall: vi.fn(async (id: string, answer: ToolAnswer, _key?: string) => answered(makeCall("x", null, {}, { id }), answer)) };
}

describe("the runner: this app answers its automatic tools", () => {
  it("computes the calculator and draws the canvas, oldest call first; people's tools are left alone", async () => {
    const calls: ToolCall[] = [
      makeCall("canvas", "draw", { instance_id: "inst_1", path: "M0 0 L1 1" }, { id: "tc_draw", sequence: 12, instanceId: "inst_1" }),
      makeCall("choice", null, { question: "?", options: ["a", "b"] }, { id: "tc_choice", sequence: 10 }),
      makeCall("calculator", "add", { a: 2, b: 3 }, { id: "tc_add", sequence: 11 }),
    ];
    const fake = api();
    const settled = await answerAutomatically(fake, calls, new Set());
    expect(settled).toEqual(["tc_add", "tc_draw"]);
    expect(fake.answerToolCall.mock.calls.map((c) => [c[0], c[1], c[2]])).toEqual([
      ["tc_add", expect.objectContaining({ result: { message: "5", value: 5 } }), "auto-tc_add"],
      ["tc_draw", expect.objectContaining({ result: { message: "drawn", instance_id: "inst_1" } }), "auto-tc_draw"],
    ]);
  });

  it("answers a call whose arguments do not fit the schema with invalid_argument", () => {
    const bad = makeCall("canvas", "draw", { instance_id: "inst_1", path: "<script>" }, { instanceId: "inst_1" });
    expect(automaticAnswer(bad)).toMatchObject({ error: { code: "invalid_argument" } });
    expect(automaticAnswer(makeCall("weather", null, {}))).toBeNull();
    expect(automaticAnswer(makeCall("confirm", null, { message: "?" }))).toBeNull();
  });

  it("stops at an ordering conflict and tries again on the next pass", async () => {
    const fake = api();
    fake.answerToolCall.mockRejectedValueOnce(new ApiError("conflict", "Answer tc_0 first", 409, { toolCallId: "tc_0" }));
    const calls = [
      makeCall("canvas", "undo", { instance_id: "i" }, { id: "tc_1", sequence: 1, instanceId: "i" }),
      makeCall("canvas", "clear", { instance_id: "i" }, { id: "tc_2", sequence: 2, instanceId: "i" }),
    ];
    expect(await answerAutomatically(fake, calls, new Set())).toEqual([]);
    expect(fake.answerToolCall).toHaveBeenCalledTimes(1);
    expect(await answerAutomatically(fake, calls, new Set())).toEqual(["tc_1", "tc_2"]);
  });

  it("skips calls answered before and counts a plain conflict as settled", async () => {
    const fake = api();
    fake.answerToolCall.mockRejectedValueOnce(new ApiError("conflict", "already answered", 409, {}));
    const calls = [
      makeCall("calculator", "add", { a: 1, b: 1 }, { id: "tc_a", sequence: 1 }),
      makeCall("calculator", "add", { a: 2, b: 2 }, { id: "tc_b", sequence: 2 }),
      makeCall("calculator", "add", { a: 3, b: 3 }, { id: "tc_c", sequence: 3, status: "completed" }),
    ];
    expect(await answerAutomatically(fake, calls, new Set(["tc_a"]))).toEqual(["tc_b"]);
    expect(fake.answerToolCall).toHaveBeenCalledTimes(1);
  });
});
