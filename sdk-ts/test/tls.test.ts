/** A hub on a LAN with a self-signed certificate: the agent pins it (docs/protocol.md §2.1). */

import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { Agent, InsecureConnection, pair } from "../src/index.js";
import { Hub, Person } from "./support/hub.js";

const hub = new Hub({ tls: true });
let ana: Person;

before(async () => {
  await hub.start();
  ana = await Person.signUp(hub.url, undefined, hub.trust);
});

after(async () => {
  await hub.stop();
});

const credentials = () => join(mkdtempSync(join(tmpdir(), "lineup-ts-tls-")), "credentials.json");
const WRONG = "AA:".repeat(31) + "AA";

test("an agent pinned to the hub's certificate pairs and connects over wss", async () => {
  const config = await pair(hub.url, await ana.pairingCode(), {
    name: "ts-tls",
    tlsFingerprint: hub.fingerprint().toLowerCase().replace(/:/g, ""),
    credentialsPath: credentials(),
  });
  assert.equal(config.tlsFingerprint, hub.fingerprint());
  assert.match(config.websocketUrl, /^wss:/);
  const agent = new Agent(config, { stateDir: join(credentials(), "..") });
  const running = agent.run();
  try {
    await ana.confirmedOnline(config.agentId);
  } finally {
    agent.stop();
    await running;
  }
});

test("another certificate than the pinned one stops pairing before the code is sent", async () => {
  const code = await ana.pairingCode();
  await assert.rejects(pair(hub.url, code, { name: "x", tlsFingerprint: WRONG, credentialsPath: credentials() }), (error: unknown) => {
    assert.ok(error instanceof InsecureConnection);
    assert.equal(error.reason, "fingerprint_mismatch");
    assert.ok(error.message.includes(hub.fingerprint()));
    return true;
  });
  // the code was never sent: it still works
  await pair(hub.url, code, { name: "x", tlsFingerprint: hub.fingerprint(), credentialsPath: credentials() });
});

test("an untrusted certificate without a pin is refused, naming its fingerprint", async () => {
  await assert.rejects(pair(hub.url, await ana.pairingCode(), { name: "y", credentialsPath: credentials() }), (error: unknown) => {
    assert.ok(error instanceof InsecureConnection);
    assert.equal(error.reason, "untrusted_certificate");
    assert.ok(error.message.includes(hub.fingerprint()), error.message);
    return true;
  });
});

test("an agent whose pin no longer matches stops instead of connecting", async () => {
  const config = await pair(hub.url, await ana.pairingCode(), { name: "z", tlsFingerprint: hub.fingerprint(), credentialsPath: credentials() });
  await assert.rejects(new Agent({ ...config, tlsFingerprint: WRONG }, { stateDir: join(credentials(), "..") }).run(), {
    name: "InsecureConnection",
  });
});
