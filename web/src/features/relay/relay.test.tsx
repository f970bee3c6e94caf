import { render, screen } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it, vi } from "vitest";
import { ApiError } from "../../api/client";
import { RelaySignIn } from "./RelaySignIn";
import { loadRelaySession, saveRelaySession, takeRelayTarget, type RelaySession } from "./relaySession";
import { TsddApi, toSynced } from "./tsdd";

function json(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
}

describe("TangSengDaoDao's API", () => {
  it("signs in, then sends its token on every call", async () => {
    const calls: Array<{ url: string; init: RequestInit }> = [];
    const api = new TsddApi("http://im/api/", null, async (url, init) => {
      calls.push({ url: String(url), init: init! });
      return String(url).endsWith("/login") ? json(200, { uid: "ana", token: "tok", name: "Ana" }) : json(200, { ws_addr: "ws://im:5200" });
    });
    expect(await api.login("ana", "pw")).toEqual({ uid: "ana", token: "tok", name: "Ana" });
    expect(await api.route("ana", false)).toBe("ws://im:5200");
    expect(calls[0]!.url).toBe("http://im/api/v1/user/login");
    expect(JSON.parse(String(calls[0]!.init.body))).toEqual({ username: "ana", password: "pw" });
    expect((calls[1]!.init.headers as Record<string, string>).token).toBe("tok");
  });

  it("turns its refusals into the app's errors, with its own message", async () => {
    const api = new TsddApi("http://im", null, async () => json(400, { status: 400, msg: "wrong username or password" }));
    await expect(api.login("ana", "x")).rejects.toMatchObject({ code: "invalid_argument", message: "wrong username or password" });
    const down = new TsddApi("http://im", null, async () => {
      throw new TypeError("Failed to fetch");
    });
    const error = (await down.login("a", "b").catch((e: unknown) => e)) as ApiError;
    expect(error.code).toBe("network");
    expect(error.message).toContain("http://im");
  });

  it("reads synced messages whose payload is JSON or WuKongIM's base64", () => {
    const payload = { type: 3102, id: "r1", body: "é" };
    const b64 = btoa(String.fromCharCode(...new TextEncoder().encode(JSON.stringify(payload))));
    const raw = { message_id: 1, message_idstr: "900719925474099312", message_seq: 7, from_uid: "agent" };
    expect(toSynced({ ...raw, payload })).toEqual({ messageId: "900719925474099312", messageSeq: 7, fromUid: "agent", payload });
    expect(toSynced({ ...raw, payload: b64 })?.payload).toEqual(payload);
    expect(toSynced({ ...raw, payload: "not base64 json" })).toBeNull();
  });

  it("syncs page by page from a sequence on", async () => {
    const bodies: Array<Record<string, unknown>> = [];
    const api = new TsddApi("http://im", "tok", async (_url, init) => {
      const body = JSON.parse(String(init!.body)) as { start_message_seq: number };
      bodies.push(body);
      const from = body.start_message_seq;
      const messages = from > 4 ? [] : [0, 1].map((i) => ({ message_idstr: `m${from + i}`, message_seq: from + i, from_uid: "agent", payload: { type: 3102 } }));
      return json(200, { messages });
    });
    const got = await api.sync("agent", 1, 2);
    expect(got.map((m) => m.messageSeq)).toEqual([1, 2, 3, 4]);
    expect(bodies[0]).toMatchObject({ channel_id: "agent", channel_type: 1, start_message_seq: 1, pull_mode: 1, limit: 2 });
  });

  it("stores a file as TSDD's apps do: chat type, a random path, the token, the file and its type", async () => {
    let seen: { url: string; init: RequestInit } | null = null;
    const api = new TsddApi("http://im/api", "tok", async (url, init) => {
      seen = { url: String(url), init: init! };
      return json(200, { path: "file/preview/chat/1/bot/0123abcd.zip" });
    });
    const file = new File([new Uint8Array([1, 2, 3])], "Notes.ZIP", { type: "application/zip" });
    await expect(api.upload(file, "Notes.ZIP", "bot", "0123abcd")).resolves.toBe("file/preview/chat/1/bot/0123abcd.zip");
    expect(seen!.url).toBe("http://im/api/v1/file/upload?type=chat&path=%2F1%2Fbot%2F0123abcd.zip");
    expect(seen!.init.method).toBe("POST");
    expect((seen!.init.headers as Record<string, string>).token).toBe("tok");
    expect((seen!.init.headers as Record<string, string>)["Content-Type"]).toBeUndefined(); // the browser sets the boundary
    const form = seen!.init.body as FormData;
    expect((form.get("file") as File).name).toBe("Notes.ZIP");
    expect(form.get("contenttype")).toBe("application/zip");
    expect(api.fileUrl("file/preview/chat/1/bot/0123abcd.zip", "Notes.ZIP")).toBe("http://im/api/v1/file/preview/chat/1/bot/0123abcd.zip?filename=Notes.ZIP");
  });
});

describe("the relay session in the browser", () => {
  it("takes #relay=…&agent=… from the address and removes it", () => {
    const replace = vi.fn();
    const target = takeRelayTarget({ href: "http://app/inbox#relay=http%3A%2F%2Fim%2Fapi&agent=bot&x=1" }, { replaceState: replace, state: null });
    expect(target).toEqual({ api: "http://im/api", agent: "bot" });
    expect(replace).toHaveBeenCalledWith(null, "", "/inbox#x=1");
    expect(takeRelayTarget({ href: "http://app/#token=abc" }, { replaceState: replace, state: null })).toBeNull();
  });

  it("remembers a session, and ignores one it cannot use", () => {
    const store = new Map<string, string>();
    const storage = { getItem: (k: string) => store.get(k) ?? null, setItem: (k: string, v: string) => void store.set(k, v), removeItem: (k: string) => void store.delete(k) };
    const session: RelaySession = { api: "http://im", ws: "ws://im", uid: "ana", token: "t", name: "Ana", agent: "bot", agentName: "Bot" };
    saveRelaySession(session, storage);
    expect(loadRelaySession(storage)).toEqual(session);
    store.set("lineup.relay", JSON.stringify({ ...session, token: "" }));
    expect(loadRelaySession(storage)).toBeNull();
  });
});

describe("the relay sign-in screen", () => {
  it("signs in, finds WuKongIM through the route API, then opens the agent named", async () => {
    const user = userEvent.setup();
    const onSignedIn = vi.fn();
    const fake = {
      login: vi.fn(async () => ({ uid: "ana", token: "tok", name: "Ana" })),
      route: vi.fn(async () => "ws://im:5200"),
      user: vi.fn(async (uid: string) => ({ uid, name: "Build bot" })),
    };
    render(<RelaySignIn initialApi="http://im/api" initialAgent="bot" onSignedIn={onSignedIn} makeApi={() => fake as unknown as TsddApi} />);
    await user.type(screen.getByLabelText("Username"), "ana");
    await user.type(screen.getByLabelText("Password"), "pw");
    await user.click(screen.getByRole("button", { name: "Sign in" }));
    expect(await screen.findByRole("heading", { name: "Open which agent?" })).toBeInTheDocument();
    expect(screen.getByLabelText("WuKongIM address")).toHaveValue("ws://im:5200");
    expect(screen.getByLabelText("Agent uid")).toHaveValue("bot");
    await user.click(screen.getByRole("button", { name: "Open agent" }));
    expect(onSignedIn).toHaveBeenCalledWith({ api: "http://im/api", ws: "ws://im:5200", uid: "ana", token: "tok", name: "Ana", agent: "bot", agentName: "Build bot" });
  });

  it("says which step failed", async () => {
    const user = userEvent.setup();
    const fake = {
      login: vi.fn(async () => ({ uid: "ana", token: "tok", name: "Ana" })),
      route: vi.fn(async () => "ws://im:5200"),
      user: vi.fn(async () => {
        throw new ApiError("not_found", "no such user", 404);
      }),
    };
    render(<RelaySignIn initialApi="http://im/api" onSignedIn={vi.fn()} makeApi={() => fake as unknown as TsddApi} />);
    await user.type(screen.getByLabelText("Username"), "ana");
    await user.type(screen.getByLabelText("Password"), "pw");
    await user.click(screen.getByRole("button", { name: "Sign in" }));
    await user.type(await screen.findByLabelText("Agent uid"), "ghost");
    await user.click(screen.getByRole("button", { name: "Open agent" }));
    expect(await screen.findByRole("alert")).toHaveTextContent("The IM server has no user ghost.");
  });
});
