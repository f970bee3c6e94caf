// The official WuKongIM JS SDK (scripts/wukongim-vectors/dist/sdk.mjs) as an app runs it, over
// a real WebSocket (Node 20 has no WebSocket client: the `ws` package is given to it as the
// global one). TEST-ONLY.
//
//   node sdk_client.mjs <path of dist/sdk.mjs>  < {"ws", "uid", "token", "sends": [{"to",
//       "text"} | {"to", "json": {...}}], "expect": N, "timeoutMs"}
//   → {"connected": reasonCode, "sendacks": [...], "received": [{fromUID, channelID,
//       messageID, messageSeq, contentType, text, contentObj, media}]}
//
// TangSengDaoDao's image (2), voice (4) and file (8) contents are registered as its apps
// define them (its web app's ImageContent and VoiceContent, its Android app's WKFileContent:
// each reads its fields in decodeJSON); `media` is what such a content decoded to.
//
// It connects, sends each message to a person channel once connected, waits until it has
// received `expect` messages from others (or the timeout), and prints one JSON line.
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { WebSocket } from "ws";

console.log = (...args) => process.stderr.write(args.map(String).join(" ") + "\n");
globalThis.WebSocket = WebSocket;

const request = JSON.parse(readFileSync(0, "utf8"));
const sdk = await import(pathToFileURL(process.argv[2]).href);
const { WKSDK, Channel, MessageText } = sdk;

const shared = WKSDK.shared();
shared.config.addr = request.ws;
shared.config.uid = request.uid;
shared.config.token = request.token;

const received = [];
const answer = { connected: null, sendacks: [], received };
let finish;
const done = new Promise((resolve) => (finish = resolve));
const timer = setTimeout(() => finish("timeout"), request.timeoutMs || 15000);

const check = () => {
  if (received.length >= (request.expect || 0) && answer.sendacks.length >= (request.sends || []).length) {
    finish("ok");
  }
};

shared.chatManager.addMessageListener((message) => {
  if (message.fromUID === request.uid) return; // its own, as it sends
  received.push({
    fromUID: message.fromUID,
    channelID: message.channel.channelID,
    channelType: message.channel.channelType,
    messageID: String(message.messageID),
    messageSeq: message.messageSeq,
    contentType: message.content.contentType,
    text: message.content.text,
    contentObj: message.content.contentObj,
    media: message.content.media ?? null,
  });
  check();
});
shared.chatManager.addMessageStatusListener((packet) => {
  answer.sendacks.push({ clientSeq: packet.clientSeq, reasonCode: packet.reasonCode, messageID: String(packet.messageID) });
  check();
});

shared.connectManager.addConnectStatusListener(async (status, reasonCode) => {
  if (status !== 1 || answer.connected !== null) {
    if (status === 3) { answer.connected = reasonCode; finish("refused"); }
    return;
  }
  answer.connected = reasonCode;
  for (const send of request.sends || []) {
    const content = send.json ? new JsonContent(send.json) : new MessageText(send.text);
    await shared.chatManager.send(content, new Channel(send.to, 1));
  }
  check();
});

/** A custom content type: the JSON as it is (what LineUp's tunnel messages are). */
class JsonContent extends sdk.MessageText {
  constructor(json) {
    super("");
    this.json = json;
  }
  get contentType() {
    return this.json.type;
  }
  encodeJSON() {
    return { ...this.json };
  }
}

/** TSDD's media contents: the fields its clients read, and nothing else. */
class TsddMedia extends sdk.MessageText {
  constructor(type, fields) {
    super("");
    this.type = type;
    this.fields = fields;
    this.media = null;
  }
  get contentType() {
    return this.type;
  }
  decodeJSON(content) {
    this.media = Object.fromEntries(this.fields.map(([name, fallback]) => [name, content[name] || fallback]));
  }
}
shared.register(2, () => new TsddMedia(2, [["url", ""], ["width", 0], ["height", 0]]));
shared.register(4, () => new TsddMedia(4, [["url", ""], ["timeTrad", 0], ["waveform", ""]]));
shared.register(8, () => new TsddMedia(8, [["url", ""], ["name", ""], ["size", 0]]));

shared.connect();
answer.outcome = await done;
clearTimeout(timer);
shared.disconnect();
process.stdout.write(JSON.stringify(answer) + "\n", () => process.exit(0));
