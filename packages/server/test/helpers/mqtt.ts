import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import type { TestContext } from "node:test";
import { freePort, tempDir, waitUntil } from "@sdk/test-helpers";
import mqtt, { type MqttClient } from "mqtt";

/** Whether something accepts TCP connections on 127.0.0.1:port. */
export function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: "127.0.0.1", port });
    socket.setTimeout(1_000);
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
    socket.once("timeout", () => done(false));
  });
}

/** Skips the test (visibly) when the tool is missing, but fails it in CI. */
export function skipOrFail(t: TestContext, why: string): void {
  if (process.env.CI) throw new Error(`${why} (required in CI)`);
  t.skip(why);
}

export interface Seen {
  topic: string;
  payload: string;
  retain: boolean;
}

/** An MQTT client that records every message it sees, like Home Assistant subscribed to discovery. */
export async function recorder(t: TestContext, url: string, filters: string[]) {
  const client: MqttClient = await mqtt.connectAsync(url, { protocolVersion: 5, reconnectPeriod: 200 });
  t.after(() => client.endAsync());
  const seen: Seen[] = [];
  const latest = new Map<string, string>();
  client.on("message", (topic, payload, packet) => {
    const text = payload.toString("utf8");
    seen.push({ topic, payload: text, retain: packet.retain });
    if (text === "") latest.delete(topic);
    else latest.set(topic, text);
  });
  await client.subscribeAsync(filters, { qos: 1 });
  return {
    client,
    seen,
    latest,
    /** Waits until `topic` holds `check`'s liking; returns the payload. */
    async until(topic: string, check: (payload: string | undefined) => boolean, what: string, ms = 15_000) {
      await waitUntil(() => check(latest.get(topic)), ms, `${what} on ${topic} (last: ${latest.get(topic)})`);
      return latest.get(topic);
    },
    count: (topic: string) => seen.filter((m) => m.topic === topic).length,
  };
}

/** What a fresh subscriber gets replayed (the retained messages under `filter`). */
export async function retainedUnder(url: string, filter: string): Promise<Map<string, string>> {
  const client = await mqtt.connectAsync(url, { protocolVersion: 5 });
  const found = new Map<string, string>();
  const marker = `${filter.replace(/\/#$/, "")}/__marker_${Math.random().toString(36).slice(2)}`;
  try {
    let done: () => void = () => {};
    const finished = new Promise<void>((resolve) => {
      done = resolve;
    });
    client.on("message", (topic, payload, packet) => {
      if (topic === marker) return done();
      if (packet.retain && payload.length > 0) found.set(topic, payload.toString("utf8"));
    });
    await client.subscribeAsync([filter, marker], { qos: 1 });
    await client.publishAsync(marker, "x", { qos: 1 });
    await Promise.race([finished, new Promise((_, r) => setTimeout(() => r(new Error("no marker")), 5_000))]);
    return found;
  } finally {
    await client.endAsync();
  }
}

/**
 * A private Mosquitto on a loopback port chosen now (the server under test needs its URL before
 * the broker runs), started and stopped when asked; stopped after the test. Mosquitto cannot
 * report a port it picked itself, so if another process takes the port first, start() fails
 * with mosquitto's own exit instead of waiting.
 */
export async function privateBroker(
  t: TestContext,
  options: { user?: { name: string; password: string } } = {},
) {
  const port = await freePort();
  const dir = tempDir(t, "sdk-mosquitto-");
  const conf = path.join(dir, "mosquitto.conf");
  let access = "allow_anonymous true\n";
  if (options.user) {
    const file = path.join(dir, "passwords");
    fs.writeFileSync(file, "", { mode: 0o600 });
    execFileSync(mosquittoPasswdPath(), ["-b", file, options.user.name, options.user.password]);
    access = `allow_anonymous false\npassword_file ${file}\n`;
  }
  // As root mosquitto would switch to its own user, who cannot read this private temp dir.
  const asRoot = process.getuid?.() === 0 ? "user root\n" : "";
  fs.writeFileSync(
    conf,
    `listener ${port} 127.0.0.1\n${asRoot}${access}persistence true\npersistence_location ${dir}/\n`,
  );
  let child: ChildProcess | undefined;
  const stop = async () => {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null) return;
    const exited = new Promise((resolve) => running.once("exit", resolve));
    running.kill("SIGTERM");
    running.kill("SIGCONT"); // if paused
    await exited;
  };
  t.after(stop);
  return {
    port,
    url: `mqtt://127.0.0.1:${port}`,
    async start() {
      const started = spawn(mosquittoPath() ?? "mosquitto", ["-c", conf], {
        stdio: ["ignore", "ignore", "pipe"],
      });
      child = started;
      let stderr = "";
      started.stderr?.on("data", (chunk) => {
        stderr += chunk;
      });
      await waitUntil(
        async () => {
          if (started.exitCode !== null)
            throw new Error(
              `mosquitto exited (${started.exitCode}) instead of listening on ${port}: ${stderr.trim()}`,
            );
          return answers(port);
        },
        10_000,
        `mosquitto listening on ${port}`,
      );
    },
    /** Stops the broker; it keeps its retained messages for the next start. */
    stop,
    /** Freezes the broker (SIGSTOP): connections stay open, nothing is answered. */
    pause: () => child?.kill("SIGSTOP"),
    resume: () => child?.kill("SIGCONT"),
  };
}

const mosquittoPasswdPath = () => {
  const found = mosquittoPath();
  const beside = found && path.join(path.dirname(found), "mosquitto_passwd");
  return beside && fs.existsSync(beside) ? beside : "mosquitto_passwd";
};

/** Where the mosquitto binary is (Debian puts it in /usr/sbin), or null. */
export const mosquittoPath = (): string | null =>
  (process.env.PATH ?? "")
    .split(":")
    .concat(["/usr/sbin", "/usr/local/sbin"])
    .map((dir) => path.join(dir, "mosquitto"))
    .find((file) => fs.existsSync(file)) ?? null;
