import assert from "node:assert/strict";
import { createHash, X509Certificate } from "node:crypto";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { type TestContext, test } from "node:test";
import tls from "node:tls";
import { makeTestPki, startTlsProxy, type TestPki, type TlsProxyOptions } from "../src/index.ts";

function pki(t: TestContext): TestPki | undefined {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sdk-pki-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const made = makeTestPki(dir);
  if ("skip" in made) {
    t.skip(made.skip);
    return undefined;
  }
  return made;
}

async function echoServer(t: TestContext): Promise<number> {
  const server = net.createServer((socket) => socket.pipe(socket));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return (server.address() as net.AddressInfo).port;
}

async function proxy(t: TestContext, options: TlsProxyOptions) {
  const started = await startTlsProxy(options);
  t.after(() => started.close());
  return started;
}

/** Connects as a device would (name "localhost", trusting only ca), sends a line, returns the echo. */
function roundTrip(port: number, ca: string, options: tls.ConnectionOptions = {}) {
  return new Promise<{ echo: string; pubkey: Buffer }>((resolve, reject) => {
    const socket = tls.connect({
      host: "127.0.0.1",
      port,
      servername: "localhost",
      ca: fs.readFileSync(ca),
      ...options,
    });
    let echo = "";
    socket.setEncoding("utf8");
    socket.on("error", reject);
    socket.on("secureConnect", () => socket.write("hello through TLS\n"));
    socket.on("data", (chunk: string) => {
      echo += chunk;
      if (echo.endsWith("\n")) {
        const leaf = new X509Certificate(socket.getPeerCertificate().raw);
        const pubkey = leaf.publicKey.export({ type: "spki", format: "der" });
        socket.end();
        resolve({ echo, pubkey });
      }
    });
  });
}

const sha256 = (data: Buffer) => createHash("sha256").update(data).digest();

test("the proxy terminates TLS with the RSA certificate, ECDHE-RSA only, and pipes to the target", {
  timeout: 60_000,
}, async (t) => {
  const p = pki(t);
  if (!p) return;
  const target = { host: "127.0.0.1", port: await echoServer(t) };
  const ciphers = "ECDHE-RSA-AES128-GCM-SHA256:ECDHE-RSA-AES256-GCM-SHA384";
  const tlsProxy = await proxy(t, {
    key: p.rsa.key,
    cert: p.rsa.cert,
    target,
    ciphers,
    maxVersion: "TLSv1.2",
  });
  const { echo, pubkey } = await roundTrip(tlsProxy.port, p.ca.cert);
  assert.equal(echo, "hello through TLS\n");
  assert.deepEqual(tlsProxy.handshakes, ["TLSv1.2 ECDHE-RSA-AES128-GCM-SHA256"]);
  assert.deepEqual(sha256(pubkey), p.rsa.pin, "the pin is the SHA-256 of the SubjectPublicKeyInfo");
  assert.equal(p.ca.der[0], 0x30, "the CA is DER (a SEQUENCE)");
});

test("the proxy serves the ECDSA P-256 certificate with ECDHE-ECDSA", { timeout: 60_000 }, async (t) => {
  const p = pki(t);
  if (!p) return;
  const target = { host: "127.0.0.1", port: await echoServer(t) };
  const tlsProxy = await proxy(t, { key: p.ecdsa.key, cert: p.ecdsa.cert, target, maxVersion: "TLSv1.2" });
  const { echo, pubkey } = await roundTrip(tlsProxy.port, p.ca.cert);
  assert.equal(echo, "hello through TLS\n");
  assert.equal(tlsProxy.handshakes.length, 1);
  assert.match(tlsProxy.handshakes[0]!, /^TLSv1\.2 ECDHE-ECDSA-/);
  assert.deepEqual(sha256(pubkey), p.ecdsa.pin);
  assert.notDeepEqual(p.ecdsa.pin, p.rsa.pin);
});

test("a client trusting the other CA is refused, and so is a TLS 1.2 client on a TLS 1.3-only proxy", {
  timeout: 60_000,
}, async (t) => {
  const p = pki(t);
  if (!p) return;
  const target = { host: "127.0.0.1", port: await echoServer(t) };
  const rsa = await proxy(t, { key: p.rsa.key, cert: p.rsa.cert, target });
  await assert.rejects(roundTrip(rsa.port, p.otherCa.cert), { code: "UNABLE_TO_VERIFY_LEAF_SIGNATURE" });
  await assert.rejects(
    roundTrip(rsa.port, p.ca.cert, {
      servername: "example.com",
      host: "example.com",
      lookup: (_h, _o, cb) => cb(null, [{ address: "127.0.0.1", family: 4 }]),
    }),
    { code: "ERR_TLS_CERT_ALTNAME_INVALID" },
  );
  assert.deepEqual(rsa.handshakes, [], "the client refused before any byte reached the target");

  const tls13 = await proxy(t, { key: p.ecdsa.key, cert: p.ecdsa.cert, target, minVersion: "TLSv1.3" });
  await assert.rejects(roundTrip(tls13.port, p.ca.cert, { maxVersion: "TLSv1.2" }));
  assert.deepEqual(tls13.handshakes, []);
  await waitFor(() => tls13.failures.length === 1);
  const { echo } = await roundTrip(tls13.port, p.ca.cert);
  assert.equal(echo, "hello through TLS\n");
  assert.match(tls13.handshakes[0]!, /^TLSv1\.3 /);
});

async function waitFor(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 100 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 20));
  assert.ok(condition());
}
