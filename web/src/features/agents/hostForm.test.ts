import { describe, expect, it } from "vitest";
import { ApiError } from "../../api/client";
import type { Engine } from "../../api/types";
import { emptyDraft, engineState, firstError, refusedField, suggestedCwd, toBody, validate, type HostDraft } from "./hostForm";

const fake: Engine = { name: "fake", runnable: true, installed: true, version: "0.1.0", installHint: "(part of LineUp)" };
const codex: Engine = {
  name: "codex",
  runnable: true,
  installed: false,
  version: null,
  installHint: "npm install -g @openai/codex@0.171.0",
};
const pi: Engine = { name: "pi", runnable: false, installed: true, version: "0.73.1", installHint: "npm i -g pi" };
const engines = [fake, codex, pi];

const good: HostDraft = {
  engine: "fake",
  name: " Builder ",
  projectId: "",
  cwd: " /srv/work/site ",
  api: "openai-chat",
  baseUrl: " http://127.0.0.1:8080/v1 ",
  model: " qwen3-coder ",
  apiKey: "",
};

describe("host an agent: the form", () => {
  it("says what each engine allows, in words", () => {
    expect(engineState(fake)).toEqual({ kind: "ready", label: "Installed · 0.1.0" });
    expect(engineState(codex)).toMatchObject({ kind: "not_installed", installHint: codex.installHint });
    expect(engineState(pi).kind).toBe("no_driver");
  });

  it("chooses the engine for the person only when one alone can host", () => {
    expect(emptyDraft(engines).engine).toBe("fake");
    expect(emptyDraft([fake, { ...fake, name: "codex" }]).engine).toBe("");
    expect(emptyDraft([codex]).engine).toBe("");
  });

  it("finds nothing wrong in a complete definition and sends it trimmed, without empty extras", () => {
    expect(validate(good, engines)).toEqual({});
    expect(toBody(good)).toEqual({
      name: "Builder",
      engine: "fake",
      cwd: "/srv/work/site",
      model: { api: "openai-chat", baseUrl: "http://127.0.0.1:8080/v1", model: "qwen3-coder" },
    });
    const full = toBody({ ...good, projectId: "prj_1", apiKey: "sk-1 " });
    expect(full.projectId).toBe("prj_1");
    expect(full.model.apiKey).toBe("sk-1 ");
  });

  it("puts each problem on its field, the first in the form's order first", () => {
    const errors = validate({ ...good, engine: "", name: "  ", cwd: "site", baseUrl: "ftp://x", model: "" }, engines);
    expect(Object.keys(errors).sort()).toEqual(["cwd", "engine", "model.baseUrl", "model.model", "name"]);
    expect(firstError(errors)).toBe("engine");
    expect(errors.cwd).toMatch(/full path/);
    expect(firstError(validate({ ...good, baseUrl: "" }, engines))).toBe("model.baseUrl");
    expect(firstError({})).toBeNull();
  });

  it("refuses an engine that cannot host here", () => {
    expect(validate({ ...good, engine: "codex" }, engines).engine).toMatch(/cannot host/);
    expect(validate({ ...good, engine: "pi" }, engines).engine).toMatch(/cannot host/);
    expect(validate({ ...good, engine: "gone" }, engines).engine).toMatch(/Choose/);
  });

  it("takes only http(s) addresses with a host for the endpoint", () => {
    for (const bad of ["127.0.0.1:8080", "http://", "file:///etc/passwd", "javascript:alert(1)"])
      expect(validate({ ...good, baseUrl: bad }, engines)["model.baseUrl"], bad).toBeDefined();
    expect(validate({ ...good, baseUrl: "https://api.example.com" }, engines)["model.baseUrl"]).toBeUndefined();
  });

  it("keeps lengths to what the hub accepts", () => {
    expect(validate({ ...good, name: "n".repeat(101) }, engines).name).toBeDefined();
    expect(validate({ ...good, model: "m".repeat(201) }, engines)["model.model"]).toBeDefined();
    expect(validate({ ...good, apiKey: "k".repeat(1001) }, engines)["model.apiKey"]).toBeDefined();
  });

  it("puts the hub's refusal on the field it names, and only on the form's fields", () => {
    const onField = new ApiError("forbidden", "outside the roots", 403, { field: "cwd" });
    expect(refusedField(onField)).toBe("cwd");
    expect(refusedField(new ApiError("invalid_argument", "bad", 400, { field: "model.baseUrl" }))).toBe("model.baseUrl");
    expect(refusedField(new ApiError("invalid_argument", "bad", 400, { field: "keys.p256dh" }))).toBeNull();
    expect(refusedField(new ApiError("unavailable", "no engines", 503))).toBeNull();
    expect(refusedField(new Error("boom"))).toBeNull();
  });

  it("offers a project's directory without overwriting one the person typed", () => {
    expect(suggestedCwd("", null, "/srv/books")).toBe("/srv/books");
    // the earlier suggestion gives way to the next project's, or to nothing
    expect(suggestedCwd("/srv/books", "/srv/books", "/srv/plant")).toBe("/srv/plant");
    expect(suggestedCwd("/srv/books", "/srv/books", null)).toBe("");
    // typed by the person: kept
    expect(suggestedCwd("/home/me/site", "/srv/books", "/srv/plant")).toBe("/home/me/site");
    expect(suggestedCwd("/home/me/site", null, null)).toBe("/home/me/site");
  });
});
