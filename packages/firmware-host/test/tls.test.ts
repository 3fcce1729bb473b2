// wss:// end to end: sdk-firmware-host reads a config block (written by @sdk/protocol's encoder, as
// `sdk flash` will write it) naming https://localhost:<port>, and connects through a
// TLS-terminating proxy (node:tls, i.e. OpenSSL, standing in for Caddy, nginx or Traefik) to the
// real server. The certificate is verified against the CA in the block, or the key pin, and the
// host name is checked; the cipher suites a proxy offers by default must work.
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { type TestContext, test } from "node:test";
import { encodeConfigBlock } from "@sdk/protocol";
import { startTestServer, waitUntil } from "@sdk/test-helpers";
import { firmwareHost } from "../src/build.ts";
import { makeTestPki, type ServerCert, startTlsProxy, type TestPki } from "../src/index.ts";

const waitMs = 15_000;
const host = firmwareHost();
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sdk-tls-"));
process.on("exit", () => fs.rmSync(dir, { recursive: true, force: true }));
const pki = "skip" in host ? host : makeTestPki(dir);
const skip = "skip" in pki ? pki.skip : false;
if (skip) console.log(`# SKIPPED: ${skip}`);

interface Case {
  cert: (pki: TestPki) => ServerCert;
  trust: (pki: TestPki) => { caDer?: Uint8Array; keyPin?: Uint8Array };
  proxy?: { ciphers?: string; minVersion?: "TLSv1.2" | "TLSv1.3" };
}

/** A server, a device registered on it, a proxy in front of it, and the firmware with a config block. */
async function connect(t: TestContext, c: Case) {
  if ("skip" in host || "skip" in pki) throw new Error("unreachable");
  const s = await startTestServer(t);
  const { client } = await s.user();
  const project = await client.api.createProject({ body: { name: "tls" } });
  const { device, credentials } = await client.api.createDevice({
    params: { projectId: project.id },
    body: { name: "tls board", board: "pico_w" },
  });
  const cert = c.cert(pki);
  const target = new URL(s.url);
  const proxy = await startTlsProxy({
    key: cert.key,
    cert: cert.cert,
    target: { host: target.hostname, port: Number(target.port) },
    ...c.proxy,
  });
  t.after(() => proxy.close());
  const configFile = path.join(dir, `${device.id}.bin`);
  fs.writeFileSync(
    configFile,
    encodeConfigBlock({
      deviceId: device.id,
      secret: credentials.secret,
      wifiSsid: "test network",
      wifiPassphrase: "",
      wifiCountry: "XX",
      server: `https://localhost:${proxy.port}`,
      ...c.trust(pki),
    }),
  );
  const child: ChildProcess = spawn(host.binary, ["--config", configFile, "--backoff-cap-ms", "500"], {
    stdio: ["pipe", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  t.after(async () => {
    if (child.exitCode === null) {
      child.stdin!.end("stop\n");
      await new Promise((resolve) => child.once("exit", resolve));
    }
  });
  const ids = { projectId: project.id, deviceId: device.id };
  const status = async () => (await client.api.getDevice({ params: ids })).status;
  return { proxy, status, stderr: () => stderr };
}

const rsaOnly = "ECDHE-RSA-AES128-GCM-SHA256:ECDHE-RSA-AES256-GCM-SHA384";

for (const [name, c, cipher] of [
  [
    "an RSA-2048 certificate behind a proxy that offers only ECDHE-RSA suites",
    { cert: (p) => p.rsa, trust: (p) => ({ caDer: p.ca.der }), proxy: { ciphers: rsaOnly } },
    /^TLSv1\.2 ECDHE-RSA-AES(128|256)-GCM-SHA(256|384)$/,
  ],
  [
    "an ECDSA P-256 certificate behind a proxy with OpenSSL's default suites",
    { cert: (p) => p.ecdsa, trust: (p) => ({ caDer: p.ca.der }) },
    /^TLSv1\.2 ECDHE-ECDSA-/,
  ],
  [
    "only a key pin (no CA): the server key is what is trusted",
    { cert: (p) => p.rsa, trust: (p) => ({ keyPin: p.rsa.pin }) },
    /^TLSv1\.2 ECDHE-RSA-/,
  ],
] as [string, Case, RegExp][]) {
  test(`wss:// comes online with ${name}`, { skip }, async (t) => {
    const w = await connect(t, c);
    await waitUntil(
      async () => (await w.status()) === "online",
      waitMs,
      "the device to be online over wss://",
    );
    assert.match(w.proxy.handshakes[0] ?? "", cipher);
    assert.equal(w.proxy.failures.length, 0);
  });
}

for (const [name, c, logged] of [
  [
    "a certificate from another CA",
    { cert: (p) => p.ecdsa, trust: (p) => ({ caDer: p.otherCa.der }) },
    /TLS handshake failed.*not correctly signed/,
  ],
  [
    "a certificate for another host name",
    { cert: (p) => p.elsewhere, trust: (p) => ({ caDer: p.ca.der }) },
    /TLS handshake failed.*(CN|name)/,
  ],
  [
    "a key that does not match the pin",
    { cert: (p) => p.ecdsa, trust: (p) => ({ keyPin: p.rsa.pin }) },
    /TLS handshake failed.*does not match the pin/,
  ],
] as [string, Case, RegExp][]) {
  test(`wss:// refuses ${name}: the credentials never reach the server`, { skip }, async (t) => {
    const w = await connect(t, c);
    await waitUntil(() => logged.test(w.stderr()), waitMs, "the device to log the refused handshake");
    assert.equal(w.proxy.handshakes.length, 0, "no handshake completed");
    assert.equal(await w.status(), "offline");
  });
}

test("a TLS 1.3-only proxy is refused by Debian's mbedtls 2.28 (no TLS 1.3 client); the Pico's 3.6 has one", {
  skip,
}, async (t) => {
  const w = await connect(t, {
    cert: (p) => p.ecdsa,
    trust: (p) => ({ caDer: p.ca.der }),
    proxy: { minVersion: "TLSv1.3" },
  });
  await waitUntil(() => /TLS handshake failed/.test(w.stderr()), waitMs, "the refused handshake");
  assert.equal(await w.status(), "offline");
});
