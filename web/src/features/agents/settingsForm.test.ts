import { describe, expect, it } from "vitest";
import { formValues, settingFields } from "./settingsForm";

const schema = {
  type: "object",
  properties: {
    model: { type: "string", title: "Model", enum: ["small", "large"], default: "small" },
    retries: { type: "integer", title: "Retries", minimum: 0, maximum: 5, default: 2 },
    dryRun: { type: "boolean", description: "Plan only." },
    note: { type: "string" },
    nested: { type: "object" },
  },
  required: ["note"],
};

describe("settings form", () => {
  it("reads the subset the hub accepts, titles first", () => {
    const fields = settingFields(schema);
    expect(fields.map((f) => [f.name, f.kind, f.label])).toEqual([
      ["model", "string", "Model"],
      ["retries", "integer", "Retries"],
      ["dryRun", "boolean", "dryRun"],
      ["note", "string", "note"],
    ]);
    expect(fields[1]).toMatchObject({ min: 0, max: 5, hasDefault: true });
    expect(fields[3]?.required).toBe(true);
    expect(settingFields(null)).toEqual([]);
  });

  it("turns the entries into typed values, leaving empty ones to their defaults", () => {
    const fields = settingFields(schema);
    expect(formValues(fields, { model: "large", retries: "3", dryRun: true, note: "" })).toEqual({
      model: "large",
      retries: 3,
      dryRun: true,
    });
    // not a number: sent as typed, so the hub's refusal names the field
    expect(formValues(fields, { retries: "three", dryRun: false })).toEqual({ retries: "three", dryRun: false });
  });
});
