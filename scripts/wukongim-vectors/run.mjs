// The tests' way into the official SDK: reads one JSON request on stdin and prints one answer.
//   {"aesKey", "aesIV", "decode": [hex of server packets], "encode": [client packet specs],
//    "unpack": [[[hex, …] one WebSocket message, …] one connection, …],
//    "chat": {serverPublicKey, salt, uid, token, sends: [{channelID, channelType, text}],
//             recvs: [hex]}}
// → {"decoded": [fields as the SDK decodes them], "encoded": [hex as the SDK encodes them],
//    "unpacked": [[hex of each packet the SDK's reassembly hands on], …],
//    "chat": {aesKey, aesIV, connect, written: [hex after CONNECT], received: [messages]}}
// A packet the SDK cannot handle gives {"error": message} in its place.
import { readFileSync } from "node:fs";
import * as h from "./harness.mjs";

const request = JSON.parse(readFileSync(0, "utf8"));
// The chat runs the SDK's own handshake first, so that its keys come from the exchange.
const chat = request.chat ? await h.chat(request.chat) : undefined;
if (!chat) h.useKeys(request.aesKey, request.aesIV);
const attempt = (f) => {
  try {
    return f();
  } catch (error) {
    return { error: String(error && error.message ? error.message : error) };
  }
};
const answer = {
  decoded: (request.decode || []).map((text) => attempt(() => h.decodeServer(h.unhex(text)))),
  encoded: (request.encode || []).map((spec) => attempt(() => h.hex(h.encodeClient(spec)))),
  unpacked: (request.unpack || []).map((messages) => attempt(() => h.unpack(messages))),
  chat,
};
process.stdout.write(JSON.stringify(answer) + "\n", () => process.exit(0));
