// The parts of the official SDK the vector scripts drive, bundled for Node by `npm run build`.
export { default as WKSDK } from "wukongimjssdk/lib/index.js";
export {
  default as Proto,
  ConnectPacket,
  DisconnectPacket,
  PacketType,
  PingPacket,
  PongPacket,
  RecvackPacket,
  RecvPacket,
  SendPacket,
  Setting,
  SubPacket,
} from "wukongimjssdk/lib/proto.js";
export { SecurityManager } from "wukongimjssdk/lib/security.js";
export { generateKeyPair, sharedKey } from "curve25519-js";
export { default as Encoder } from "wukongimjssdk/lib/encoder.js";
export { default as Decoder } from "wukongimjssdk/lib/decoder.js";
export { Md5 } from "md5-typescript";
export { default as BigNumber } from "bignumber.js";
export { Channel, MessageText } from "wukongimjssdk/lib/model.js";
