import { describe, expect, it, vi } from "vitest";
import { ApiError, Transport, readCookie } from "./client";
import { WorkspaceApi } from "./hub";

function fakeFetch(status: number, body: unknown) {
  return vi.fn(async (_url: RequestInfo | URL, _init?: RequestInit) =>
    new Response(body === undefined ? null : JSON.stringify(body), {
      status,
      headers: { "Content-Type": "application/json" },
    }),
  );
}

const cookies = () => "theme=dark; lineup_csrf=csrf%2Dtoken; other=1";

describe("the hub client", () => {
  it("reads a cookie by name", () => {
    expect(readCookie("lineup_csrf", cookies())).toBe("csrf-token");
    expect(readCookie("missing", cookies())).toBeNull();
  });

  it("sends the CSRF token and an Idempotency-Key on a state change", async () => {
    const fetch = fakeFetch(200, { id: "int_1" });
    const api = new WorkspaceApi(new Transport(fetch, cookies), "ws_1");
    await api.respond("int_1", { optionId: "approve" }, "web-key-1");
    const [url, init] = fetch.mock.calls[0]!;
    expect(url).toBe("/api/workspaces/ws_1/interactions/int_1/respond");
    expect(init!.method).toBe("POST");
    expect(init!.credentials).toBe("same-origin");
    const headers = init!.headers as Record<string, string>;
    expect(headers["X-CSRF-Token"]).toBe("csrf-token");
    expect(headers["Idempotency-Key"]).toBe("web-key-1");
    expect(JSON.parse(init!.body as string)).toEqual({ response: { optionId: "approve" } });
  });

  it("makes up an Idempotency-Key when the caller has none, and sends none on GET", async () => {
    const fetch = fakeFetch(200, { tasks: [] });
    const api = new WorkspaceApi(new Transport(fetch, cookies), "ws_1");
    await api.cancelTask("task_1");
    await api.tasks("running");
    const post = fetch.mock.calls[0]![1]!.headers as Record<string, string>;
    const get = fetch.mock.calls[1]![1]!.headers as Record<string, string>;
    expect(post["Idempotency-Key"]).toMatch(/^web-[A-Za-z0-9_.:-]+$/);
    expect(get["Idempotency-Key"]).toBeUndefined();
    expect(get["X-CSRF-Token"]).toBeUndefined();
    expect(fetch.mock.calls[1]![0]).toBe("/api/workspaces/ws_1/tasks?status=running");
  });

  it("turns the error envelope into a typed ApiError", async () => {
    const fetch = fakeFetch(409, {
      error: { code: "conflict", message: "Already answered by Bo.", details: { respondedBy: "user:u2" } },
    });
    const api = new WorkspaceApi(new Transport(fetch, cookies), "ws_1");
    const error = await api.respond("int_1", { optionId: "reject" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({
      code: "conflict",
      status: 409,
      message: "Already answered by Bo.",
      details: { respondedBy: "user:u2" },
    });
    expect((error as ApiError).retryable).toBe(false);
  });

  it("reports a network failure as a retryable error and a 401 to the app", async () => {
    const down = vi.fn(async () => {
      throw new TypeError("Failed to fetch");
    });
    const error = await new Transport(down, cookies).get("/api/auth/me").catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "network", retryable: true });

    const transport = new Transport(fakeFetch(401, { error: { code: "unauthenticated", message: "Sign in." } }), cookies);
    const onUnauthenticated = vi.fn();
    transport.onUnauthenticated = onUnauthenticated;
    await transport.get("/api/auth/me").catch(() => undefined);
    expect(onUnauthenticated).toHaveBeenCalledOnce();
  });

  it("accepts 204 No Content", async () => {
    const fetch = vi.fn(async () => new Response(null, { status: 204 }));
    await expect(new Transport(fetch, cookies).post("/api/auth/signout")).resolves.toBeUndefined();
  });

  it("uploads a package's bytes as they are, as application/octet-stream, with CSRF and a key", async () => {
    const fetch = fakeFetch(200, { ref: "upload:1" });
    const api = new WorkspaceApi(new Transport(fetch, cookies), "ws_1");
    const archive = new Blob([new Uint8Array([0x1f, 0x8b, 0x08])]);
    await api.uploadPackage(archive, "web-key-2");
    const [url, init] = fetch.mock.calls[0]!;
    expect(url).toBe("/api/workspaces/ws_1/providers/packages");
    expect(init!.method).toBe("POST");
    expect(init!.body).toBe(archive);
    const headers = init!.headers as Record<string, string>;
    expect(headers["Content-Type"]).toBe("application/octet-stream");
    expect(headers["X-CSRF-Token"]).toBe("csrf-token");
    expect(headers["Idempotency-Key"]).toBe("web-key-2");
  });
});

describe("session files", () => {
  it("downloads a session file with the name the hub gave it", async () => {
    const fetch = vi.fn(async (_url: RequestInfo | URL, _init?: RequestInit) =>
      new Response('{"type":"header"}\n', {
        status: 200,
        headers: {
          "Content-Type": "application/x-ndjson",
          "Content-Disposition": 'attachment; filename="Plan-conv_1.jsonl"',
        },
      }),
    );
    const api = new WorkspaceApi(new Transport(fetch, cookies), "ws_1");
    const file = await api.sessionFile("conv_1");
    expect(fetch.mock.calls[0]![0]).toBe("/api/workspaces/ws_1/conversations/conv_1/session.jsonl");
    expect(file.filename).toBe("Plan-conv_1.jsonl");
    expect(await file.blob.text()).toBe('{"type":"header"}\n');
  });

  it("uploads a file to import as it is, into the project chosen", async () => {
    const fetch = fakeFetch(201, { conversation: { id: "conv_2" } });
    const api = new WorkspaceApi(new Transport(fetch, cookies), "ws_1");
    const file = new Blob(['{"type":"session"}\n']);
    await api.importSession(file, "prj_1", "web-key-3");
    const [url, init] = fetch.mock.calls[0]!;
    expect(url).toBe("/api/workspaces/ws_1/conversations/import?projectId=prj_1");
    expect(init!.body).toBe(file);
    const headers = init!.headers as Record<string, string>;
    expect(headers["Content-Type"]).toBe("application/x-ndjson");
    expect(headers["Idempotency-Key"]).toBe("web-key-3");
  });
});

describe("the short-lived access token", () => {
  function answers(...replies: Array<[number, unknown]>) {
    const queue = [...replies];
    return vi.fn(async (_url: RequestInfo | URL, _init?: RequestInit) => {
      const [status, body] = queue.shift() ?? [500, null];
      return new Response(body === null ? null : JSON.stringify(body), {
        status,
        headers: { "Content-Type": "application/json" },
      });
    });
  }
  const expired = { error: { code: "unauthenticated", message: "expired", details: { reason: "token_expired" } } };
  const ended = { error: { code: "unauthenticated", message: "ended", details: { reason: "session_ended" } } };
  const times = { accessExpiresAt: "2027-01-01T00:15:00.000Z", sessionExpiresAt: "2027-01-31T00:00:00.000Z" };

  it("refreshes once on token_expired and sends the request again with the same key", async () => {
    const fetch = answers([401, expired], [200, times], [200, { id: "conv_1" }]);
    const transport = new Transport(fetch, cookies);
    const signedOut = vi.fn();
    transport.onUnauthenticated = signedOut;
    const answer = await transport.post("/api/workspaces/ws_1/conversations", { title: "x" }, "web-key-7");
    expect(answer).toEqual({ id: "conv_1" });
    const urls = fetch.mock.calls.map((call) => call[0]);
    expect(urls).toEqual([
      "/api/workspaces/ws_1/conversations",
      "/api/auth/refresh",
      "/api/workspaces/ws_1/conversations",
    ]);
    const refresh = fetch.mock.calls[1]![1]!;
    expect(refresh.method).toBe("POST");
    expect((refresh.headers as Record<string, string>)["X-CSRF-Token"]).toBe("csrf-token");
    const first = fetch.mock.calls[0]![1]!.headers as Record<string, string>;
    const again = fetch.mock.calls[2]![1]!.headers as Record<string, string>;
    expect(again["Idempotency-Key"]).toBe("web-key-7");
    expect(first["Idempotency-Key"]).toBe("web-key-7");
    expect(signedOut).not.toHaveBeenCalled();
  });

  it("shares one refresh between requests refused at the same time", async () => {
    const fetch = answers([401, expired], [401, expired], [200, times], [200, { a: 1 }], [200, { b: 2 }]);
    const transport = new Transport(fetch, cookies);
    const [a, b] = await Promise.all([transport.get("/api/a"), transport.get("/api/b")]);
    expect([a, b]).toEqual([{ a: 1 }, { b: 2 }]);
    const refreshes = fetch.mock.calls.filter((call) => call[0] === "/api/auth/refresh");
    expect(refreshes).toHaveLength(1);
  });

  it("returns to sign-in when the refresh fails, and does not retry twice", async () => {
    const fetch = answers([401, expired], [401, ended]);
    const transport = new Transport(fetch, cookies);
    const signedOut = vi.fn();
    transport.onUnauthenticated = signedOut;
    const error = await transport.get("/api/auth/me").catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "unauthenticated", details: { reason: "session_ended" } });
    expect(signedOut).toHaveBeenCalledTimes(1);
    expect(fetch).toHaveBeenCalledTimes(2);
  });

  it("takes a sibling tab's won refresh as done and sends the request again", async () => {
    const superseded = {
      error: { code: "unauthenticated", message: "raced", details: { reason: "refresh_superseded" } },
    };
    const fetch = answers([401, expired], [401, superseded], [200, { ok: true }]);
    const transport = new Transport(fetch, cookies);
    expect(await transport.get("/api/x")).toEqual({ ok: true });
  });

  it("does not refresh when the session itself has ended", async () => {
    const fetch = answers([401, ended]);
    const transport = new Transport(fetch, cookies);
    await transport.get("/api/auth/me").catch(() => undefined);
    expect(fetch).toHaveBeenCalledTimes(1);
  });
});
