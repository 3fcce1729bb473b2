import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type { TestContext } from "node:test";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import type { SdkClient } from "@sdk/client";
import type { SimulatedDevice } from "@sdk/simulator";
import { deployScript, runNode, type TestServer } from "@sdk/test-helpers";
import { tarEnd, tarHeader, tarPadding } from "../../src/storage/tar.ts";
import { simulatedBoard } from "./script-project.ts";

export const mainScript = fileURLToPath(import.meta.resolve("@sdk/server/main"));
export const env = { DEVICE_LOG_MAX_ENTRIES: "1000000", STATE_HISTORY_MAX_ENTRIES: "100000" };
export const script = `import { DeviceScript } from "@sdk/device";
export default class Greeter extends DeviceScript {
  onDeviceConnect() { console.log("greeting=" + this.env.GREETING); }
}`;

/** `sdk-server restore …` as a process, with only PATH in its environment. */
export function restore(t: TestContext, args: string[], extraEnv: Record<string, string> = {}) {
  return runNode(t, {
    args: [mainScript, "restore", ...args],
    env: { PATH: process.env.PATH ?? "", ...extraEnv },
  });
}

/** GET /v1/admin/backup into a file, as a user with this token would. */
export async function download(url: string, token: string, file: string): Promise<Response> {
  const response = await fetch(`${url}/v1/admin/backup`, { headers: { authorization: `Bearer ${token}` } });
  const body = new Uint8Array(await response.arrayBuffer());
  if (response.ok) fs.writeFileSync(file, body);
  else throw new Error(`GET /v1/admin/backup: HTTP ${response.status}: ${Buffer.from(body).toString()}`);
  return response;
}

/** Devices that send a numbered log line and a state value as fast as the server takes them. */
export function loadDevices(sims: SimulatedDevice[]) {
  const sent = sims.map(() => 0);
  let running = true;
  const timers = sims.map((sim, i) =>
    setInterval(() => {
      for (let k = 0; k < 5 && running && sim.connected; k++) {
        sim.sendLog("info", `n=${sent[i]}`);
        sim.sendState("counter", sent[i]);
        sent[i]!++;
      }
    }, 1),
  );
  return {
    sent,
    stop() {
      running = false;
      for (const timer of timers) clearInterval(timer);
    },
  };
}

/** The highest `n=` a device's stored logs reached, read through the API (a row the server acknowledged). */
export async function highestLogged(client: SdkClient, projectId: string, deviceId: string): Promise<number> {
  const logs = await client.api.listDeviceLogs({ params: { projectId, deviceId }, query: { limit: 50 } });
  return Math.max(-1, ...logs.map((l) => Number(/^n=(\d+)$/.exec(l.message)?.[1] ?? -1)));
}

export async function fleet(t: TestContext, s: TestServer) {
  const admin = await s.user("admin@example.com");
  const member = await s.user("member@example.com");
  const project = await member.client.api.createProject({ body: { name: "greenhouse" } });
  await member.client.api.setEnvVar({
    params: { projectId: project.id, name: "GREETING" },
    body: { value: "hello from before the backup" },
  });
  const deployment = await deployScript(t, member.client, project.id, script);
  assert.equal(deployment.status, "active");
  const runner = await member.client.api.createDevice({
    params: { projectId: project.id },
    body: { name: "runner", board: "pico_w" },
  });
  const busy = await member.client.api.createProject({ body: { name: "busy" } });
  const loaded = [];
  for (let i = 0; i < 4; i++) {
    const created = await member.client.api.createDevice({
      params: { projectId: busy.id },
      body: { name: `load${i}`, board: "pico_w" },
    });
    const sim = simulatedBoard(t, new URL(s.url).host, created.credentials);
    sim.start();
    await sim.waitFor("connected");
    loaded.push({ device: created.device, sim });
  }
  return { admin, member, project, deployment, runner, busy, loaded };
}

/** Every file under a directory with its bytes, for comparing before and after. */
export function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    if (/sdk\.db(-wal|-shm)?$/.test(file)) continue; // the live database changes by itself
    out[path.relative(dir, file)] = fs.readFileSync(file, "base64");
  }
  return out;
}

/** A gzip-compressed archive with this manifest's files (sizes and SHA-256 computed), as an attacker would make it. */
export function craftArchive(files: Record<string, string>): Buffer {
  const list = Object.entries(files).map(([p, text]) => ({
    path: p,
    size: Buffer.byteLength(text),
    sha256: createHash("sha256").update(text).digest("hex"),
  }));
  const manifest = Buffer.from(
    JSON.stringify({
      format: "sdk-backup",
      formatVersion: 1,
      serverVersion: "0.1.0",
      createdAt: "2026-11-24T03:00:00.000Z",
      dialect: "sqlite",
      database: "sdk.db",
      files: list,
    }),
  );
  const parts = [tarHeader("manifest.json", manifest.length, 0), manifest, tarPadding(manifest.length)];
  for (const [p, text] of Object.entries(files)) {
    const bytes = Buffer.from(text);
    parts.push(tarHeader(p, bytes.length, 0), bytes, tarPadding(bytes.length));
  }
  return gzipSync(Buffer.concat([...parts, tarEnd]));
}

/** Open descriptors of this process whose target contains `part` (Linux: /proc/self/fd). */
export function openFiles(part: string): string[] {
  const found: string[] = [];
  for (const fd of fs.readdirSync("/proc/self/fd")) {
    try {
      const target = fs.readlinkSync(`/proc/self/fd/${fd}`);
      if (target.includes(part)) found.push(target);
    } catch {} // closed meanwhile
  }
  return found;
}
