import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import net from "node:net";
import type { TestContext } from "node:test";

const url = process.env.TEST_NATS_URL ?? "nats://127.0.0.1:4222";
let reachable: Promise<boolean> | undefined;

/** Whether something answers NATS's greeting (`INFO {…}`) at the test URL. */
function probe(): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect({ host: hostname, port: Number(port || 4222) });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(2_000, () => done(false));
    socket.once("error", () => done(false));
    socket.once("data", (data) => done(data.toString("latin1").startsWith("INFO ")));
  });
}

/**
 * The NATS URL of the tests and a cluster name of their own (subjects start with it, so tests
 * running in parallel on one NATS never hear each other). Where no NATS answers, the test is
 * skipped with a visible reason, except in CI, where it fails.
 */
export async function natsCluster(t: TestContext): Promise<{ natsUrl: string; clusterName: string } | null> {
  reachable ??= probe();
  if (!(await reachable)) {
    if (process.env.CI) throw new Error(`NATS is required in CI but ${url} is not reachable`);
    t.skip(`NATS not reachable at ${url} (set TEST_NATS_URL to run these tests)`);
    return null;
  }
  return { natsUrl: url, clusterName: `t${randomBytes(6).toString("hex")}` };
}

/** nats-server from PATH, or where Debian's package puts it (a PATH without /usr/sbin). */
export const natsServerBinary =
  process.env.TEST_NATS_SERVER ??
  ["nats-server", "/usr/sbin/nats-server"].find((b) => spawnSync(b, ["--version"]).status === 0) ??
  "nats-server";

/** Why a test that runs a NATS server of its own is skipped, or false. */
export const noNatsServer =
  spawnSync(natsServerBinary, ["--version"]).status === 0
    ? false
    : `${natsServerBinary} not found (set TEST_NATS_SERVER to run this test)`;

/** A TCP port free now on the host. */
export async function freePort(host = "127.0.0.1"): Promise<number> {
  const server = net.createServer().listen(0, host);
  await once(server, "listening");
  const { port } = server.address() as net.AddressInfo;
  server.close();
  await once(server, "close");
  return port;
}

/**
 * Starts a NATS server of the test's own on the port (killed when the test ends; `kill` it to
 * take NATS away, start another on the same port to bring it back); resolves once it accepts clients.
 */
export async function ownNatsServer(
  t: TestContext,
  port: number,
  host = "127.0.0.1",
  extraArgs: string[] = [],
): Promise<ChildProcess> {
  const child = spawn(natsServerBinary, ["-a", host, "-p", String(port), ...extraArgs], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  t.after(() => child.kill("SIGKILL"));
  let output = "";
  await new Promise<void>((resolve, reject) => {
    child.stderr?.on("data", (chunk) => {
      output += chunk;
      if (output.includes("Server is ready")) resolve();
    });
    child.once("exit", (code) => reject(new Error(`nats-server exited (${code}): ${output}`)));
  });
  return child;
}

/** Log lines, and a way to wait for one. */
export function logCollector() {
  const lines: string[] = [];
  const waiters: { match: RegExp; resolve: () => void }[] = [];
  const push = (line: string) => {
    lines.push(line);
    for (const w of waiters.splice(0))
      if (w.match.test(line)) w.resolve();
      else waiters.push(w);
  };
  return {
    lines,
    log: { info: push, warn: push, error: (_: { err: unknown }, m: string) => push(m) },
    line: (match: RegExp) =>
      lines.some((l) => match.test(l))
        ? Promise.resolve()
        : new Promise<void>((resolve) => waiters.push({ match, resolve })),
  };
}
