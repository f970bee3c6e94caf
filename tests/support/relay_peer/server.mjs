// A loopback WuKongIM server and TangSengDaoDao API stub, in one Node process: TEST-ONLY.
//
// LineUp's relay-mode tests run the agent's relay host (Python), the Python tunnel client and
// the web app (the official JS SDK, in Chromium or Node) against it. It speaks WuKongIM's
// binary protocol version 2 (the layouts the official SDK 1.0.4 and lineup.relay.wukongim
// use): CONNECT/CONNACK with the X25519 key exchange and AES-128-CBC message cipher, SEND →
// SENDACK + store + RECV to the other user of a person channel, RECVACK, PING/PONG, SUB,
// DISCONNECT. Persisted messages are redelivered to a user on every connection until one of
// its sessions acknowledges them; no-persist ones (the SEND header flag) go only to who is
// online. Every packet it writes to a WebSocket is one WebSocket message (the SDK mis-reads
// several packets in one message).
//
// The TSDD stub: POST /v1/user/login, GET /v1/users/{uid}, GET /v1/users/{uid}/route (and
// WuKongIM's GET /route?uid=), TSDD's file API as its modules/file/api.go serves it (GET and
// POST /v1/file/upload with the token header, multipart `file` + `contenttype`, kept in
// memory; GET /v1/file/preview/<type>/<path> with no token, a 302 to /storage/<type>/<path>
// as MinIO would serve it), POST /v1/message/channel/sync; test admin: POST /test/users
// {uid, username, password, name, token?}, GET /test/stats and GET /test/files (what was
// uploaded: path, size, type, name, uploader, sha256). With --static DIR it serves
// that directory (the built web app) for every other GET, index.html for unknown paths.
//
// It prints one JSON line on start: {"ws": "ws://127.0.0.1:P/", "tcp": "tcp://127.0.0.1:Q",
// "api": "http://127.0.0.1:R"} and runs until killed (or its stdin closes).
import crypto from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import net from "node:net";
import path from "node:path";
import { WebSocketServer } from "ws";

const args = process.argv.slice(2);
const option = (name) => {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : undefined;
};
const STATIC_DIR = option("--static");
const HOST = "127.0.0.1";

// --- state -------------------------------------------------------------------------------

const users = new Map(); // uid → {uid, username, password, name}
const tokens = new Map(); // token → uid
const channels = new Map(); // channel key → {seq, messages: [stored]}
const pending = new Map(); // uid → Map(messageId string → {stored, channelFor})
const sessions = new Map(); // uid → Set(session)
const files = new Map(); // "<type>/<path>" → {data, type, filename, uploader}
const stats = {
  connects: 0, refused: 0, sends: 0, persisted: 0, transient: 0, recvs: 0, recvacks: 0,
  redelivered: 0, rejectedSends: 0, pings: 0, api: {}, channelSyncs: 0, uploads: 0,
  uploadedBytes: 0, downloads: 0,
};
let nextMessageId = 1n << 40n;

const PERSON = 1;

function channelKey(a, b) {
  return [a, b].sort().join("@");
}

// --- codec (protocol version 2) ---------------------------------------------------------

const T = { CONNECT: 1, CONNACK: 2, SEND: 3, SENDACK: 4, RECV: 5, RECVACK: 6, PING: 7, PONG: 8,
  DISCONNECT: 9, SUB: 10, SUBACK: 11 };

class Writer {
  constructor() { this.parts = []; }
  u8(v) { this.parts.push(Buffer.from([v & 0xff])); }
  u32(v) { const b = Buffer.alloc(4); b.writeUInt32BE(v >>> 0); this.parts.push(b); }
  u64(v) { const b = Buffer.alloc(8); b.writeBigUInt64BE(BigInt(v)); this.parts.push(b); }
  i64(v) { const b = Buffer.alloc(8); b.writeBigInt64BE(BigInt(v)); this.parts.push(b); }
  str(s) { const raw = Buffer.from(s, "utf8"); const n = Buffer.alloc(2); n.writeUInt16BE(raw.length); this.parts.push(n, raw); }
  raw(b) { this.parts.push(Buffer.from(b)); }
  body() { return Buffer.concat(this.parts); }
}

class Reader {
  constructor(buf) { this.buf = buf; this.at = 0; }
  take(n) {
    if (this.at + n > this.buf.length) throw new Error("the body ends inside a field");
    const out = this.buf.subarray(this.at, this.at + n); this.at += n; return out;
  }
  u8() { return this.take(1)[0]; }
  u16() { return this.take(2).readUInt16BE(); }
  u32() { return this.take(4).readUInt32BE(); }
  u64() { return this.take(8).readBigUInt64BE(); }
  str() { return this.take(this.u16()).toString("utf8"); }
  rest() { const out = this.buf.subarray(this.at); this.at = this.buf.length; return out; }
}

function varint(n) {
  const out = [];
  do {
    let digit = n & 0x7f; n >>>= 7;
    if (n) digit |= 0x80;
    out.push(digit);
  } while (n);
  return Buffer.from(out);
}

function frame(type, flags, body) {
  if (type === T.PING || type === T.PONG) return Buffer.from([type << 4]);
  return Buffer.concat([Buffer.from([(type << 4) | flags]), varint(body.length), body]);
}

/** Cuts a byte stream into whole packets. */
class FrameReader {
  constructor() { this.buffer = Buffer.alloc(0); }
  feed(data) {
    this.buffer = Buffer.concat([this.buffer, data]);
    const packets = [];
    for (;;) {
      if (!this.buffer.length) return packets;
      const type = this.buffer[0] >> 4;
      if (type === T.PING || type === T.PONG) {
        packets.push(this.buffer.subarray(0, 1)); this.buffer = this.buffer.subarray(1); continue;
      }
      let length = 0, used = 0, complete = false;
      for (let i = 0; i < 4 && 1 + i < this.buffer.length; i++) {
        const byte = this.buffer[1 + i];
        length |= (byte & 0x7f) << (7 * i); used = i + 1;
        if (!(byte & 0x80)) { complete = true; break; }
      }
      if (!complete || this.buffer.length < 1 + used + length) return packets;
      packets.push(this.buffer.subarray(0, 1 + used + length));
      this.buffer = this.buffer.subarray(1 + used + length);
    }
  }
}

function parse(packet) {
  const header = packet[0], type = header >> 4;
  const flags = { dup: !!(header & 8), syncOnce: !!(header & 4), reddot: !!(header & 2), noPersist: !!(header & 1) };
  if (type === T.PING || type === T.PONG) return { type, flags };
  let used = 1;
  while (packet[used] & 0x80) used++;
  const r = new Reader(packet.subarray(used + 1));
  switch (type) {
    case T.CONNECT:
      return { type, flags, version: r.u8(), deviceFlag: r.u8(), deviceID: r.str(), uid: r.str(),
        token: r.str(), clientTimestamp: r.u64(), clientKey: r.str() };
    case T.SEND: {
      const setting = r.u8();
      const out = { type, flags, setting, clientSeq: r.u32(), clientMsgNo: r.str() };
      out.streamNo = setting & 0x04 ? r.str() : "";
      out.channelID = r.str(); out.channelType = r.u8(); out.msgKey = r.str();
      out.topic = setting & 0x08 ? r.str() : "";
      out.payload = r.rest();
      return out;
    }
    case T.RECVACK:
      return { type, flags, messageID: r.u64(), messageSeq: r.u32() };
    case T.SUB:
      return { type, flags, setting: r.u8(), clientMsgNo: r.str(), channelID: r.str(),
        channelType: r.u8(), action: r.u8(), param: r.str() };
    case T.DISCONNECT:
      return { type, flags, reasonCode: r.u8(), reason: r.str() };
    default:
      return { type, flags };
  }
}

// --- the message cipher -----------------------------------------------------------------

const X25519_SPKI = Buffer.from("302a300506032b656e032100", "hex");
const md5 = (data) => crypto.createHash("md5").update(data).digest("hex");

class Cipher {
  constructor(clientKeyBase64, salt) {
    const mine = crypto.generateKeyPairSync("x25519");
    this.publicBase64 = mine.publicKey.export({ format: "der", type: "spki" }).subarray(-32).toString("base64");
    const theirs = crypto.createPublicKey({
      key: Buffer.concat([X25519_SPKI, Buffer.from(clientKeyBase64, "base64")]), format: "der", type: "spki",
    });
    const secret = crypto.diffieHellman({ privateKey: mine.privateKey, publicKey: theirs });
    this.key = Buffer.from(md5(secret.toString("base64")).slice(0, 16), "ascii");
    this.iv = Buffer.from(salt.slice(0, 16), "utf8");
  }
  encrypt(plain) { // → base64 text as bytes, what goes on the wire
    const c = crypto.createCipheriv("aes-128-cbc", this.key, this.iv);
    return Buffer.from(Buffer.concat([c.update(plain), c.final()]).toString("base64"), "ascii");
  }
  decrypt(wire) {
    const d = crypto.createDecipheriv("aes-128-cbc", this.key, this.iv);
    return Buffer.concat([d.update(Buffer.from(wire.toString("ascii"), "base64")), d.final()]);
  }
  msgKey(verify) { return md5(this.encrypt(Buffer.from(verify, "utf8"))); }
}

// --- sessions ---------------------------------------------------------------------------

class Session {
  constructor(write, close) {
    this.write = write; // one whole packet per call
    this.closeTransport = close;
    this.uid = null;
    this.cipher = null;
    this.reader = new FrameReader();
  }

  feed(data) {
    for (const packet of this.reader.feed(data)) {
      try {
        this.handle(parse(packet));
      } catch (error) {
        process.stderr.write(`relay peer: bad packet from ${this.uid}: ${error}\n`);
        this.close();
        return;
      }
    }
  }

  handle(p) {
    if (p.type !== T.CONNECT && !this.cipher) return this.close();
    switch (p.type) {
      case T.CONNECT: return this.onConnect(p);
      case T.SEND: return this.onSend(p);
      case T.RECVACK: return this.onRecvack(p);
      case T.PING: stats.pings++; return this.write(frame(T.PONG, 0, Buffer.alloc(0)));
      case T.SUB: {
        const w = new Writer();
        w.str(p.clientMsgNo); w.str(p.channelID); w.u8(p.channelType); w.u8(p.action); w.u8(1);
        return this.write(frame(T.SUBACK, 0, w.body()));
      }
      case T.DISCONNECT: return this.close();
      default: return undefined;
    }
  }

  onConnect(p) {
    const salt = crypto.randomBytes(8).toString("hex");
    const ok = tokens.get(p.token) === p.uid && users.has(p.uid);
    const w = new Writer();
    w.i64(0n);
    w.u8(ok ? 1 : 2);
    if (!ok) {
      stats.refused++;
      w.str(""); w.str("");
      this.write(frame(T.CONNACK, 0, w.body()));
      return this.close();
    }
    this.cipher = new Cipher(p.clientKey, salt);
    w.str(this.cipher.publicBase64); w.str(salt);
    this.write(frame(T.CONNACK, 0, w.body()));
    this.uid = p.uid;
    stats.connects++;
    if (!sessions.has(p.uid)) sessions.set(p.uid, new Set());
    sessions.get(p.uid).add(this);
    for (const { stored, channelFor } of (pending.get(p.uid) || new Map()).values()) {
      stats.redelivered++;
      this.deliver(stored, channelFor);
    }
  }

  onSend(p) {
    stats.sends++;
    const verify = `${p.clientSeq}${p.clientMsgNo}${p.channelID}${p.channelType}${p.payload.toString("latin1")}`;
    let content;
    try {
      if (this.cipher.msgKey(verify) !== p.msgKey) throw new Error("msg key mismatch");
      content = this.cipher.decrypt(p.payload);
    } catch {
      stats.rejectedSends++;
      return this.sendack(p.clientSeq, 0n, 0, 0); // refused
    }
    const to = p.channelID;
    if (p.channelType !== PERSON || !users.has(to)) {
      stats.rejectedSends++;
      return this.sendack(p.clientSeq, 0n, 0, 4); // channel not found
    }
    const key = channelKey(this.uid, to);
    if (!channels.has(key)) channels.set(key, { seq: 0, messages: [], clientMsgNos: new Map() });
    const channel = channels.get(key);
    const persist = !p.flags.noPersist;
    const again = persist && channel.clientMsgNos.get(`${this.uid}/${p.clientMsgNo}`);
    if (again) return this.sendack(p.clientSeq, again.messageId, again.messageSeq, 1);
    const stored = {
      messageId: nextMessageId++, messageSeq: persist ? ++channel.seq : 0, clientMsgNo: p.clientMsgNo,
      fromUID: this.uid, channelKey: key, toUID: to, timestamp: Math.floor(Date.now() / 1000),
      content, persist, setting: p.setting & ~0x04 & ~0x08, noPersist: p.flags.noPersist,
    };
    if (persist) {
      stats.persisted++;
      channel.messages.push(stored);
      channel.clientMsgNos.set(`${this.uid}/${p.clientMsgNo}`, stored);
      if (!pending.has(to)) pending.set(to, new Map());
      pending.get(to).set(stored.messageId.toString(), { stored, channelFor: this.uid });
    } else {
      stats.transient++;
    }
    this.sendack(p.clientSeq, stored.messageId, stored.messageSeq, 1);
    for (const session of sessions.get(to) || []) session.deliver(stored, this.uid);
  }

  sendack(clientSeq, messageId, messageSeq, reason) {
    const w = new Writer();
    w.u64(messageId); w.u32(clientSeq); w.u32(messageSeq); w.u8(reason);
    this.write(frame(T.SENDACK, 0, w.body()));
  }

  /** One RECV of `stored` to this session; `channelFor` is the channel id as this user sees it. */
  deliver(stored, channelFor) {
    const payload = this.cipher.encrypt(stored.content);
    const verify = `${stored.messageId}${stored.messageSeq}${stored.clientMsgNo}${stored.timestamp}` +
      `${stored.fromUID}${channelFor}${PERSON}${payload.toString("latin1")}`;
    const w = new Writer();
    w.u8(stored.setting);
    w.str(this.cipher.msgKey(verify));
    w.str(stored.fromUID); w.str(channelFor); w.u8(PERSON);
    w.str(stored.clientMsgNo);
    w.u64(stored.messageId); w.u32(stored.messageSeq); w.u32(stored.timestamp);
    w.raw(payload);
    stats.recvs++;
    this.write(frame(T.RECV, stored.noPersist ? 1 : 0, w.body()));
  }

  onRecvack(p) {
    stats.recvacks++;
    pending.get(this.uid)?.delete(p.messageID.toString());
  }

  close() {
    if (this.uid && sessions.has(this.uid)) sessions.get(this.uid).delete(this);
    this.closeTransport();
  }
}

// --- WebSocket and TCP listeners ---------------------------------------------------------

const wsHttp = http.createServer((req, res) => { res.writeHead(426); res.end(); });
const wss = new WebSocketServer({ server: wsHttp, maxPayload: 1 << 22 });
wss.on("connection", (socket) => {
  const session = new Session(
    (packet) => socket.readyState === socket.OPEN && socket.send(packet, { binary: true }),
    () => socket.close(),
  );
  socket.on("message", (data) => session.feed(Buffer.isBuffer(data) ? data : Buffer.from(data)));
  socket.on("close", () => session.close());
  socket.on("error", () => session.close());
});

const tcp = net.createServer((socket) => {
  const session = new Session((packet) => socket.writable && socket.write(packet), () => socket.end());
  socket.on("data", (data) => session.feed(data));
  socket.on("close", () => session.close());
  socket.on("error", () => session.close());
});

// --- the TSDD API stub ---------------------------------------------------------------------

function count(name) { stats.api[name] = (stats.api[name] || 0) + 1; }

function send(res, status, body, headers = {}) {
  const text = typeof body === "string" || Buffer.isBuffer(body) ? body : JSON.stringify(body);
  res.writeHead(status, {
    "content-type": typeof body === "object" && !Buffer.isBuffer(body) ? "application/json" : "text/plain",
    "access-control-allow-origin": "*",
    "access-control-allow-headers": "content-type, token",
    "access-control-allow-methods": "GET, POST, OPTIONS",
    ...headers,
  });
  res.end(text);
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    const parts = [];
    req.on("data", (c) => parts.push(c));
    req.on("end", () => resolve(Buffer.concat(parts)));
    req.on("error", reject);
  });
}

function caller(req) {
  return tokens.get(req.headers.token || "");
}

function publicUser(user) { return { uid: user.uid, name: user.name, username: user.username }; }

function newToken(uid) {
  const token = crypto.randomBytes(16).toString("hex");
  tokens.set(token, uid);
  return token;
}

/** The parts of a multipart/form-data body: name → {data, filename, type}. */
function multipartParts(body, contentType) {
  const match = /boundary=(?:"([^"]+)"|([^;]+))/i.exec(contentType || "");
  const parts = new Map();
  if (!match) return parts;
  const boundary = Buffer.from(`--${match[1] || match[2]}`);
  let at = body.indexOf(boundary);
  while (at >= 0) {
    const next = body.indexOf(boundary, at + boundary.length);
    if (next < 0) break;
    const part = body.subarray(at + boundary.length + 2, next - 2); // skip CRLF after, before
    const split = part.indexOf("\r\n\r\n");
    const head = part.subarray(0, split).toString("utf8");
    const name = /name="([^"]*)"/i.exec(head);
    if (name) {
      const filename = /filename="([^"]*)"/i.exec(head);
      const type = /content-type:\s*([^\r\n]+)/i.exec(head);
      parts.set(name[1], { data: Buffer.from(part.subarray(split + 4)), filename: filename ? filename[1] : null, type: type ? type[1].trim() : null });
    }
    at = next;
  }
  return parts;
}

// TSDD's file types (modules/file/const.go) and its upload checks (checkReq).
const FILE_TYPES = new Set(["chat", "moment", "momentcover", "sticker", "report", "chatbg", "common", "download"]);

function uploadRefusal(type, path) {
  if (!type) return "文件类型不能为空";
  if (!path && type !== "momentcover" && type !== "sticker") return "上传路径不能为空";
  if (!FILE_TYPES.has(type)) return "文件类型错误";
  return null;
}

function wireMessage(stored, loginUID) {
  let payload;
  try { payload = JSON.parse(stored.content.toString("utf8")); } catch { payload = null; }
  return {
    message_id: Number(stored.messageId), message_idstr: stored.messageId.toString(),
    message_seq: stored.messageSeq, client_msg_no: stored.clientMsgNo, from_uid: stored.fromUID,
    channel_id: stored.fromUID === loginUID ? stored.toUID : stored.fromUID, channel_type: PERSON,
    timestamp: stored.timestamp, payload,
  };
}

const routes = {
  "POST /test/users": async (req, res) => {
    const spec = JSON.parse((await readBody(req)).toString("utf8") || "{}");
    if (!spec.uid) return send(res, 400, { msg: "uid is required" });
    const user = { uid: spec.uid, username: spec.username || spec.uid, password: spec.password || "", name: spec.name || spec.uid };
    users.set(user.uid, user);
    const token = spec.token || newToken(user.uid);
    tokens.set(token, user.uid);
    return send(res, 200, { ...publicUser(user), token });
  },
  "GET /test/files": async (req, res) => {
    const list = [...files].map(([key, f]) => ({ path: `file/preview/${key}`, size: f.data.length, type: f.type, filename: f.filename,
      uploader: f.uploader, sha256: crypto.createHash("sha256").update(f.data).digest("hex") }));
    return send(res, 200, { files: list });
  },
  "GET /test/stats": async (req, res) => {
    const waiting = {};
    for (const [uid, map] of pending) waiting[uid] = map.size;
    return send(res, 200, { ...stats, pending: waiting, online: Object.fromEntries([...sessions].map(([u, s]) => [u, s.size])) });
  },
  "POST /v1/user/login": async (req, res) => {
    const { username, password } = JSON.parse((await readBody(req)).toString("utf8") || "{}");
    const user = [...users.values()].find((u) => u.username === username && u.password === password);
    if (!user) return send(res, 400, { status: 400, msg: "wrong username or password" });
    return send(res, 200, { ...publicUser(user), token: newToken(user.uid) });
  },
  "POST /v1/message/channel/sync": async (req, res) => {
    const login = caller(req);
    if (!login) return send(res, 401, { status: 401, msg: "sign in first" });
    stats.channelSyncs++;
    const q = JSON.parse((await readBody(req)).toString("utf8") || "{}");
    const channel = channels.get(channelKey(login, q.channel_id));
    const start = Number(q.start_message_seq || 0), end = Number(q.end_message_seq || 0);
    const limit = Math.max(1, Math.min(Number(q.limit || 100), 10000));
    let list = (channel ? channel.messages : []).filter((m) => m.messageSeq >= start && (!end || m.messageSeq <= end));
    if (Number(q.pull_mode || 0) === 0 && !start && end) list = list.reverse(); // pull down: newest first from end
    list = list.slice(0, limit).sort((a, b) => a.messageSeq - b.messageSeq);
    return send(res, 200, { start_message_seq: start, end_message_seq: end, more: 0, messages: list.map((m) => wireMessage(m, login)) });
  },
  // TSDD's GET only answers the address to POST to (External.APIBaseURL + /file/upload?…).
  "GET /v1/file/upload": async (req, res, url) => {
    if (!caller(req)) return send(res, 401, { status: 401, msg: "sign in first" });
    const type = url.searchParams.get("type") || "", where = url.searchParams.get("path") || "";
    const refused = uploadRefusal(type, where);
    if (refused) return send(res, 400, { status: 400, msg: refused });
    return send(res, 200, { url: `${apiAddress()}/v1/file/upload?type=${type}&path=${where}` });
  },
  // multipart `file`, the storage's content type in the form field `contenttype` (TSDD ignores
  // the part's own), `signature=1` adds the SHA-512 (base64); answers the preview path.
  "POST /v1/file/upload": async (req, res, url) => {
    if (!caller(req)) return send(res, 401, { status: 401, msg: "sign in first" });
    const type = url.searchParams.get("type") || "", where = url.searchParams.get("path") || "";
    const refused = uploadRefusal(type, where);
    if (refused) return send(res, 400, { status: 400, msg: refused });
    const parts = multipartParts(await readBody(req), req.headers["content-type"]);
    const file = parts.get("file");
    if (!file) return send(res, 400, { status: 400, msg: "读取文件失败！" });
    const contentType = parts.has("contenttype") ? parts.get("contenttype").data.toString("utf8") : "application/octet-stream";
    const key = `${type}${where.startsWith("/") ? where : `/${where}`}`;
    stats.uploads++;
    stats.uploadedBytes += file.data.length;
    files.set(key, { data: file.data, type: contentType, filename: file.filename, uploader: caller(req) });
    const answer = { path: `file/preview/${key}` };
    if (url.searchParams.get("signature") === "1") answer.sha512 = crypto.createHash("sha512").update(file.data).digest("base64");
    return send(res, 200, answer);
  },
};

function apiAddress() {
  return `http://${HOST}:${apiServer.address().port}`;
}

function route(uid) {
  return { tcp_addr: `${HOST}:${tcp.address().port}`, ws_addr: `ws://${HOST}:${wsHttp.address().port}/`, wss_addr: "" };
}

async function api(req, res) {
  const url = new URL(req.url, "http://stub");
  if (req.method === "OPTIONS") return send(res, 204, "");
  const name = `${req.method} ${url.pathname}`;
  count(name.replace(/\/v1\/users\/[^/]+/, "/v1/users/{uid}").replace(/\/v1\/file\/preview\/.*/, "/v1/file/preview").replace(/^GET \/storage\/.*/, "GET /storage"));
  if (routes[name]) return routes[name](req, res, url);
  let m;
  if (req.method === "GET" && url.pathname === "/route") return send(res, 200, route(url.searchParams.get("uid")));
  if (req.method === "GET" && (m = /^\/v1\/users\/([^/]+)\/route$/.exec(url.pathname))) return send(res, 200, route(m[1]));
  if (req.method === "GET" && (m = /^\/v1\/users\/([^/]+)$/.exec(url.pathname))) {
    const user = users.get(decodeURIComponent(m[1]));
    return user ? send(res, 200, publicUser(user)) : send(res, 404, { status: 404, msg: "no such user" });
  }
  if (req.method === "GET" && (m = /^\/v1\/file\/preview\/(.+)$/.exec(url.pathname))) {
    // no token, as TSDD: a redirect to the storage's address (MinIO's shape)
    const key = decodeURIComponent(m[1]);
    if (!files.has(key)) return send(res, 404, { status: 404, msg: "no such file" });
    const filename = url.searchParams.get("filename") || key.split("/").pop();
    const disposition = new URLSearchParams({ "response-content-disposition": `inline; filename="${filename}"` });
    return send(res, 302, "", { location: `${apiAddress()}/storage/${encodeURI(key)}?${disposition}` });
  }
  if (req.method === "GET" && (m = /^\/storage\/(.+)$/.exec(url.pathname))) {
    const file = files.get(decodeURIComponent(m[1]));
    if (!file) return send(res, 404, "NoSuchKey");
    stats.downloads++;
    const disposition = url.searchParams.get("response-content-disposition");
    return send(res, 200, file.data, { "content-type": file.type, ...(disposition ? { "content-disposition": disposition } : {}) });
  }
  if (req.method === "GET" && STATIC_DIR && !url.pathname.startsWith("/v1/")) return serveStatic(url.pathname, res);
  return send(res, 404, { status: 404, msg: `no route ${name}` });
}

const TYPES = { ".html": "text/html", ".js": "text/javascript", ".css": "text/css", ".json": "application/json",
  ".svg": "image/svg+xml", ".png": "image/png", ".webmanifest": "application/manifest+json", ".ico": "image/x-icon" };

function serveStatic(pathname, res) {
  const root = path.resolve(STATIC_DIR);
  let file = path.resolve(root, "." + decodeURIComponent(pathname));
  if (!file.startsWith(root) || !fs.existsSync(file) || fs.statSync(file).isDirectory()) file = path.join(root, "index.html");
  fs.readFile(file, (error, data) => {
    if (error) return send(res, 404, "not found");
    res.writeHead(200, { "content-type": TYPES[path.extname(file)] || "application/octet-stream" });
    res.end(data);
  });
}

const apiServer = http.createServer((req, res) => {
  api(req, res).catch((error) => send(res, 500, { status: 500, msg: String(error) }));
});

// --- start ----------------------------------------------------------------------------------

const listen = (server) => new Promise((resolve) => server.listen(0, HOST, resolve));
await Promise.all([listen(wsHttp), listen(tcp), listen(apiServer)]);
process.stdout.write(JSON.stringify({
  ws: `ws://${HOST}:${wsHttp.address().port}/`,
  tcp: `tcp://${HOST}:${tcp.address().port}`,
  api: `http://${HOST}:${apiServer.address().port}`,
}) + "\n");
process.stdin.on("end", () => process.exit(0));
process.stdin.resume();
