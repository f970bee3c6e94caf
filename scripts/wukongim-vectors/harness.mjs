// Drives the official WuKongIM JS SDK (bundled in dist/sdk.mjs) with its randomness and clock
// pinned, so that what it produces can be kept as test vectors and reproduced byte for byte.
//
// The SDK takes its key pair seed and device id from Math.random (through its Guid) and the
// CONNECT timestamp from Date; both are replaced before it runs. Its WebSocket is a fake that
// records the frames the SDK sends and lets the caller hand it the server's frames.

const FIXED_NOW = 1764806400000; // 2025-12-04T00:00:00Z

let state = 0x2f6b6c31;
Math.random = () => {
  // mulberry32: a small deterministic PRNG; the values only need to be reproducible.
  state = (state + 0x6d2b79f5) | 0;
  let t = state;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
const RealDate = Date;
globalThis.Date = class extends RealDate {
  constructor(...args) {
    super(...(args.length ? args : [FIXED_NOW]));
  }
  static now() {
    return FIXED_NOW;
  }
};
// The SDK logs every packet; the scripts print JSON on stdout.
console.log = () => {};

const sockets = [];
globalThis.WebSocket = class {
  constructor(addr) {
    this.addr = addr;
    this.sent = [];
    sockets.push(this);
  }
  send(data) {
    this.sent.push(Uint8Array.from(data));
  }
  close() {}
};

const sdk = await import("./dist/sdk.mjs");
export const { WKSDK, Proto, SecurityManager, Encoder, Decoder, Md5 } = sdk;
export { sdk };

export const SDK_VERSION = "1.0.4";

export const hex = (bytes) => Buffer.from(bytes).toString("hex");
export const unhex = (text) => Uint8Array.from(Buffer.from(text, "hex"));
export const b64 = (bytes) => Buffer.from(bytes).toString("base64");

const proto = new Proto();

/** The SDK's own encoding of one server-side packet body, framed the way its encoder frames. */
export function frame(packetType, flags, body) {
  const header = proto.encodeFramer({ packetType, ...flags }, body.length);
  return Uint8Array.from([...header, ...body]);
}

/**
 * Connect the SDK to the fake socket: it makes its key pair and sends CONNECT; it is answered
 * with a CONNACK carrying `serverPublic` and `salt`, from which it derives the message key.
 */
export function handshake({ serverPublic, salt, uid, token }) {
  const config = WKSDK.shared().config;
  config.addr = "ws://relay.invalid";
  config.uid = uid;
  config.token = token;
  WKSDK.shared().connectManager.connectWithAddr(config.addr);
  const ws = sockets.at(-1);
  ws.onopen();
  const connect = ws.sent[0];
  const enc = new Encoder();
  enc.writeInt64(new (BigNumber())(0));
  enc.writeByte(1); // reason code 1: success
  enc.writeString(b64(serverPublic));
  enc.writeString(salt);
  const connack = frame(2, {}, enc.w);
  ws.onmessage({ data: connack.buffer });
  const manager = WKSDK.shared().connectManager;
  manager.stopHeart();
  return {
    connect,
    connack,
    clientPrivate: Uint8Array.from(manager.dhPrivateKey),
    aesKey: SecurityManager.shared().aesKey,
    aesIV: SecurityManager.shared().aesIV,
  };
}

function BigNumber() {
  return sdk.BigNumber;
}

/** Use a known message key without a handshake (the decoder script's case). */
export function useKeys(aesKey, aesIV) {
  SecurityManager.shared().aesKey = aesKey;
  SecurityManager.shared().aesIV = aesIV;
}

const utf8 = (text) => Uint8Array.from(Buffer.from(text, "utf8"));

/** A client packet described as JSON, encoded by the SDK's Proto. */
export function encodeClient(spec) {
  const p = spec.packet;
  let packet;
  switch (p.type) {
    case "CONNECT":
      packet = new sdk.ConnectPacket();
      Object.assign(packet, pick(p, ["version", "deviceFlag", "deviceID", "uid", "token", "clientTimestamp", "clientKey"]));
      break;
    case "SEND": {
      packet = new sdk.SendPacket();
      const setting = new sdk.Setting();
      setting.receiptEnabled = !!p.setting.receiptEnabled;
      setting.topic = !!p.setting.topic;
      setting.streamNo = p.streamNo || "";
      packet.setting = setting;
      Object.assign(packet, pick(p, ["clientSeq", "clientMsgNo", "streamNo", "channelID", "channelType", "topic"]));
      packet.payload = utf8(p.payloadText);
      break;
    }
    case "RECVACK":
      packet = new sdk.RecvackPacket();
      Object.assign(packet, pick(p, ["messageID", "messageSeq"]));
      break;
    case "SUB":
      packet = new sdk.SubPacket();
      Object.assign(packet, pick(p, ["setting", "clientMsgNo", "channelID", "channelType", "action", "param"]));
      break;
    case "PING":
      packet = new sdk.PingPacket();
      break;
    default:
      throw new Error(`the SDK does not encode ${p.type}`);
  }
  Object.assign(packet, pick(spec.flags || {}, ["noPersist", "reddot", "syncOnce", "dup"]));
  return proto.encode(packet);
}

function pick(object, keys) {
  const out = {};
  for (const key of keys) if (key in object) out[key] = object[key];
  return out;
}

/**
 * A server packet decoded by the SDK, every field as JSON; a RECV also goes through the
 * checks its chat manager makes before it shows a message: the message key, then decryption.
 */
export function decodeServer(bytes) {
  const p = proto.decode(bytes);
  const flags = { noPersist: !!p.noPersist, reddot: !!p.reddot, syncOnce: !!p.syncOnce, dup: !!p.dup };
  const type = sdk.PacketType[p.packetType];
  switch (type) {
    case "CONNACK":
      return { type, flags, timeDiff: p.timeDiff.toFixed(), reasonCode: p.reasonCode, serverKey: p.serverKey, salt: p.salt };
    case "SENDACK":
      return { type, flags, messageID: p.messageID.toFixed(), clientSeq: p.clientSeq, messageSeq: p.messageSeq, reasonCode: p.reasonCode };
    case "RECV": {
      const expected = Md5.init(SecurityManager.shared().encryption(p.veritifyString));
      const out = {
        type, flags,
        setting: { receiptEnabled: p.setting.receiptEnabled, topic: p.setting.topic, streamOn: p.setting.streamOn },
        msgKey: p.msgKey, msgKeyValid: expected === p.msgKey,
        fromUID: p.fromUID, channelID: p.channelID, channelType: p.channelType, clientMsgNo: p.clientMsgNo,
        messageID: p.messageID, messageSeq: p.messageSeq, timestamp: p.timestamp,
        payloadHex: hex(p.payload),
      };
      if (p.setting.streamOn) Object.assign(out, { streamNo: p.streamNo, streamSeq: p.streamSeq, streamFlag: p.streamFlag });
      if (p.setting.topic) out.topic = p.topic;
      out.payloadText = Buffer.from(SecurityManager.shared().decryption(p.payload)).toString("utf8");
      return out;
    }
    case "DISCONNECT":
      return { type, flags, reasonCode: p.reasonCode, reason: p.reason };
    case "SUBACK":
      return { type, flags, clientMsgNo: p.clientMsgNo, channelID: p.channelID, channelType: p.channelType, action: p.action, reasonCode: p.reasonCode };
    case "PING":
    case "PONG":
      return { type };
    default:
      throw new Error(`the SDK does not decode packet type ${p.packetType}`);
  }
}

/**
 * What the SDK's connection hands its decoder when the WebSocket delivers `messages` (each a
 * list of packets sent as one message), in order: its own reassembly (`unpacket`).
 */
export function unpack(messages) {
  const manager = WKSDK.shared().connectManager;
  manager.tempBufferData = [];
  const delivered = [];
  for (const packets of messages) {
    const bytes = Uint8Array.from(packets.flatMap((text) => [...unhex(text)]));
    manager.unpacket(bytes, (list) => {
      for (const packet of list) delivered.push(hex(packet));
    });
  }
  return delivered;
}

/**
 * The SDK as an app uses it, after its real handshake with the server key and salt given:
 * it sends `sends` (text messages) through its chat manager, is handed `recvs` (server
 * packets, each one WebSocket message), and reports every packet it wrote after CONNECT and
 * every message its listeners were given.
 */
export async function chat({ serverPublicKey, salt, uid, token, sends = [], recvs = [] }) {
  const session = handshake({ serverPublic: Buffer.from(serverPublicKey, "base64"), salt, uid, token });
  const ws = sockets.at(-1);
  const manager = WKSDK.shared().chatManager;
  const received = [];
  manager.addMessageListener((message) => {
    if (message.fromUID === uid && !message.messageID) return; // its own, as it sends
    received.push({
      fromUID: message.fromUID,
      channelID: message.channel.channelID,
      channelType: message.channel.channelType,
      messageID: String(message.messageID),
      messageSeq: message.messageSeq,
      contentType: message.content.contentType,
      text: message.content.text,
      contentObj: message.content.contentObj,
    });
  });
  const written = ws.sent.length;
  for (const send of sends) {
    await manager.send(new sdk.MessageText(send.text), new sdk.Channel(send.channelID, send.channelType));
  }
  for (const text of recvs) {
    ws.onmessage({ data: unhex(text).buffer });
    await new Promise((resolve) => setImmediate(resolve));
  }
  return { aesKey: session.aesKey, aesIV: session.aesIV, connect: hex(session.connect), written: ws.sent.slice(written).map(hex), received };
}
