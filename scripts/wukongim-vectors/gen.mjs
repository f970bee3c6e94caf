// Regenerates tests/data/wukongim/vectors.json with the official SDK: `npm run vectors`
// (`make wukongim-vectors`). With a path argument it writes there instead (the tests check
// that the committed vectors are what the SDK makes).
import { writeFileSync } from "node:fs";
import * as h from "./harness.mjs";

const out = process.argv[2] || new URL("../../tests/data/wukongim/vectors.json", import.meta.url);

// The server's side of the key exchange is ours to choose: a fixed seed.
const server = h.sdk.generateKeyPair(Uint8Array.from({ length: 32 }, (_, i) => i + 1));
const salt = "lineup-salt-0123456789"; // longer than 16: the SDK uses the first 16 characters
const session = h.handshake({ serverPublic: server.public, salt, uid: "agent-7", token: "token-of-agent-7" });

const long = (n, unit = "x") => unit.repeat(n);
const flagsAll = { noPersist: true, reddot: true, syncOnce: true, dup: true };

const clientSpecs = [
  { name: "send-text", packet: { type: "SEND", setting: {}, clientSeq: 1, clientMsgNo: "cmn-1", channelID: "u-person", channelType: 1, payloadText: '{"type":1,"content":"hello"}' } },
  { name: "send-empty-payload", packet: { type: "SEND", setting: {}, clientSeq: 2, clientMsgNo: "cmn-2", channelID: "u-person", channelType: 1, payloadText: "" } },
  { name: "send-one-block-exactly", packet: { type: "SEND", setting: {}, clientSeq: 3, clientMsgNo: "cmn-3", channelID: "g", channelType: 2, payloadText: long(16, "a") } },
  { name: "send-multibyte-utf8", packet: { type: "SEND", setting: { receiptEnabled: true }, clientSeq: 4, clientMsgNo: "编号-4", channelID: "群组-🙂", channelType: 2, payloadText: '{"content":"你好，世界 🙂"}' } },
  { name: "send-topic", packet: { type: "SEND", setting: { topic: true }, clientSeq: 5, clientMsgNo: "cmn-5", channelID: "g-topic", channelType: 2, topic: "lineup.tool", payloadText: "{}" } },
  { name: "send-stream", packet: { type: "SEND", setting: {}, streamNo: "stream-9", clientSeq: 6, clientMsgNo: "cmn-6", channelID: "u-person", channelType: 1, payloadText: "part" } },
  { name: "send-flags-and-max-seq", flags: flagsAll, packet: { type: "SEND", setting: { receiptEnabled: true, topic: true }, clientSeq: 4294967295, clientMsgNo: "cmn-7", channelID: "u", channelType: 255, topic: "", payloadText: "x" } },
  { name: "send-two-byte-length", packet: { type: "SEND", setting: {}, clientSeq: 8, clientMsgNo: "cmn-8", channelID: "u", channelType: 1, payloadText: long(100) } },
  { name: "send-three-byte-length", packet: { type: "SEND", setting: {}, clientSeq: 9, clientMsgNo: "cmn-9", channelID: "u", channelType: 1, payloadText: long(20000) } },
  { name: "send-longest-string", packet: { type: "SEND", setting: {}, clientSeq: 10, clientMsgNo: "cmn-10", channelID: long(65535, "c"), channelType: 1, payloadText: "{}" } },
  { name: "connect", packet: { type: "CONNECT", version: 2, deviceFlag: 1, deviceID: "device-1W", uid: "agent-7", token: "token-of-agent-7", clientTimestamp: 1764806400000, clientKey: h.b64(server.public) } },
  { name: "connect-empty-strings", packet: { type: "CONNECT", version: 4, deviceFlag: 0, deviceID: "", uid: "", token: "", clientTimestamp: 0, clientKey: "" } },
  { name: "recvack", packet: { type: "RECVACK", messageID: "1234567890123456789", messageSeq: 42 } },
  { name: "recvack-flags", flags: { noPersist: true, syncOnce: true, reddot: true }, packet: { type: "RECVACK", messageID: "4294967296", messageSeq: 4294967295 } },
  { name: "recvack-zero", packet: { type: "RECVACK", messageID: "0", messageSeq: 0 } },
  { name: "sub", packet: { type: "SUB", setting: 0, clientMsgNo: "sub-1", channelID: "live-1", channelType: 5, action: 0, param: "" } },
  { name: "unsub-with-param", packet: { type: "SUB", setting: 1, clientMsgNo: "sub-2", channelID: "live-1", channelType: 5, action: 1, param: '{"k":"v"}' } },
  { name: "ping", packet: { type: "PING" } },
];
const client = clientSpecs.map((spec) => ({ ...spec, hex: h.hex(h.encodeClient(spec)) }));

// Server packets, built from the SDK's own Encoder and framer, then decoded by the SDK.
const BN = h.sdk.BigNumber;
function build(type, flags, write) {
  const enc = new h.Encoder();
  write(enc);
  return h.frame(type, flags, enc.w);
}
function recv({ setting = 0, fromUID, channelID, channelType, clientMsgNo, stream, messageID, messageSeq, timestamp, topic, payloadText }, flags = {}) {
  // The message key is what the SDK checks: MD5 of the encrypted verify string.
  const payload = Uint8Array.from(Buffer.from(h.SecurityManager.shared().encryption(payloadText), "latin1"));
  const p = new h.sdk.RecvPacket();
  Object.assign(p, { messageID, messageSeq, clientMsgNo, timestamp, fromUID, channelID, channelType, payload });
  const msgKey = h.Md5.init(h.SecurityManager.shared().encryption(p.veritifyString));
  return build(5, flags, (e) => {
    e.writeByte(setting);
    e.writeString(msgKey);
    e.writeString(fromUID);
    e.writeString(channelID);
    e.writeByte(channelType);
    e.writeString(clientMsgNo);
    if (stream) {
      e.writeString(stream.streamNo);
      e.writeInt32(stream.streamSeq);
      e.writeByte(stream.streamFlag);
    }
    e.writeInt64(new BN(messageID));
    e.writeInt32(messageSeq);
    e.writeInt32(timestamp);
    if (topic !== undefined) e.writeString(topic);
    e.writeBytes(Array.from(payload));
  });
}
const serverBytes = [
  ["connack", build(2, {}, (e) => { e.writeInt64(new BN(-0 + 1500)); e.writeByte(1); e.writeString(h.b64(server.public)); e.writeString(salt); })],
  ["connack-refused", build(2, {}, (e) => { e.writeInt64(new BN(0)); e.writeByte(2); e.writeString(""); e.writeString(""); })],
  ["sendack", build(4, {}, (e) => { e.writeInt64(new BN("1234567890123456789")); e.writeInt32(1); e.writeInt32(77); e.writeByte(1); })],
  ["sendack-max", build(4, flagsAll, (e) => { e.writeInt64(new BN("9223372036854775807")); e.writeInt32(4294967295); e.writeInt32(4294967295); e.writeByte(255); })],
  ["recv-text", recv({ fromUID: "u-person", channelID: "u-person", channelType: 1, clientMsgNo: "cmn-r1", messageID: "1999999999999999999", messageSeq: 12, timestamp: 1764806400, payloadText: '{"type":1,"content":"hi"}' })],
  ["recv-empty-payload", recv({ fromUID: "u", channelID: "g", channelType: 2, clientMsgNo: "", messageID: "1", messageSeq: 1, timestamp: 0, payloadText: "" })],
  ["recv-multibyte-topic-receipt", recv({ setting: 0x88, fromUID: "用户", channelID: "群组-🙂", channelType: 2, clientMsgNo: "编号", messageID: "42", messageSeq: 7, timestamp: 4294967295, topic: "话题", payloadText: '{"content":"你好 🙂"}' }, { reddot: true })],
  ["recv-stream", recv({ setting: 0x04, fromUID: "u", channelID: "u", channelType: 1, clientMsgNo: "c", stream: { streamNo: "stream-9", streamSeq: 3, streamFlag: 2 }, messageID: "5", messageSeq: 5, timestamp: 5, payloadText: "part" })],
  ["recv-three-byte-length", recv({ fromUID: "u", channelID: "u", channelType: 1, clientMsgNo: "c", messageID: "6", messageSeq: 6, timestamp: 6, payloadText: long(20000) })],
  ["disconnect", build(9, {}, (e) => { e.writeByte(0); e.writeString("logged in elsewhere"); })],
  ["disconnect-empty-reason", build(9, {}, (e) => { e.writeByte(3); e.writeString(""); })],
  ["suback", build(11, {}, (e) => { e.writeString("sub-1"); e.writeString("live-1"); e.writeByte(5); e.writeByte(0); e.writeByte(1); })],
  ["pong", Uint8Array.from([8 << 4])],
];
const serverPackets = serverBytes.map(([name, bytes]) => ({ name, hex: h.hex(bytes), decoded: h.decodeServer(bytes) }));

// The cipher both ways, on the session's key: what the SDK sends and what it accepts.
const texts = ["", "a", long(15, "b"), long(16, "c"), long(17, "d"), '{"k":"值 🙂"}', long(1000, "e")];
const sm = h.SecurityManager.shared();
const cipher = texts.map((plain) => {
  const encrypted = sm.encryption(plain);
  const back = Buffer.from(sm.decryption(Uint8Array.from(Buffer.from(encrypted, "latin1")))).toString("utf8");
  if (back !== plain) throw new Error("the SDK does not decrypt what it encrypted");
  return { plainText: plain, cipherText: encrypted, msgKey: h.Md5.init(encrypted) };
});

const proto = new h.Proto();
const lengths = [0, 1, 127, 128, 16383, 16384, 2097151, 2097152, 268435455];
const varints = lengths.map((n) => {
  const bytes = proto.encodeVariableLength(n);
  const read = new h.Decoder(Uint8Array.from([...bytes, 0])).readVariableLength();
  return { length: n, hex: h.hex(bytes), decodedBySdk: read };
});

const vectors = {
  comment: "Made by scripts/wukongim-vectors/gen.mjs with the official SDK; regenerate, do not edit.",
  sdk: { name: "wukongimjssdk", version: h.SDK_VERSION, protoVersion: h.WKSDK.shared().config.protoVersion },
  session: {
    clientPrivateKey: h.b64(session.clientPrivate),
    serverPrivateKey: h.b64(server.private),
    serverPublicKey: h.b64(server.public),
    salt,
    aesKey: session.aesKey,
    aesIV: session.aesIV,
    connectHex: h.hex(session.connect),
    connackHex: h.hex(session.connack),
  },
  varints,
  cipher,
  clientPackets: client,
  serverPackets,
};
writeFileSync(out, JSON.stringify(vectors, null, 1) + "\n");
process.exit(0);
