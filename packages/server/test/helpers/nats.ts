import { randomBytes } from "node:crypto";
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
