// One long session of the firmware's Linux build under ASan and UBSan (leak checking at exit):
// connect, every kind of command with frames near the limits, the server going away twice
// (close 1001, then a dropped TCP connection), reconnecting, more commands, and a clean stop.
// The process must exit 0 without a single sanitizer report.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { test } from "node:test";
import { type FakeConnection, FakeServer } from "@sdk/conformance";
import { firmwareHost } from "../src/build.ts";

const host = firmwareHost();
if ("skip" in host) console.log(`# SKIPPED: ${host.skip}`);
const waitMs = 15_000;

async function ok(conn: FakeConnection, type: string, args: Record<string, unknown>): Promise<unknown> {
  const reply = await conn.command(type, args, waitMs);
  assert.equal(reply.type, "result", `${type}: ${JSON.stringify(reply).slice(0, 300)}`);
  return reply.value ?? null;
}

async function workload(conn: FakeConnection): Promise<void> {
  const bytes = Array.from({ length: 12_000 }, (_, i) => (i * 7) % 256);
  await ok(conn, "spi_configure", { bus: 0, sck: 18, tx: 19, rx: 16, frequency: 1_000_000 });
  assert.deepEqual(await ok(conn, "spi_transfer", { bus: 0, data: bytes, cs: 17 }), { data: bytes });
  await ok(conn, "i2c_configure", { bus: 1, sda: 2, scl: 3, frequency: 100_000 });
  await ok(conn, "i2c_write", { bus: 1, address: 0x50, data: [0, ...bytes.slice(0, 200)] });
  const read = (await ok(conn, "i2c_read", { bus: 1, address: 0x50, length: 4096, register: 0 })) as {
    data: number[];
  };
  assert.deepEqual(read.data.slice(0, 200), bytes.slice(0, 200));
  const pixels = Array.from({ length: 1024 }, (_, i) => [i % 256, (i * 3) % 256, 255 - (i % 256)]);
  await ok(conn, "ws2812_write", { pin: 22, pixels });
  await ok(conn, "uart_configure", { uart: 0, tx: 0, rx: 1, baud: 921600 });
  await ok(conn, "uart_write", { uart: 0, data: bytes });
  await ok(conn, "gpio_watch", { pin: 8, edge: "both" });
  for (let i = 0; i < 20; i++) await ok(conn, "gpio_toggle", { pin: 8 });
  const refused = await conn.command("gpio_write", { pin: 29, value: 1 }, waitMs);
  assert.equal(refused.code, "invalid_argument");
  conn.send({ type: "gpio_read", pin: 2 }); // no id: answered with malformed
}

test("a session under ASan and UBSan: commands, two server losses, reconnects, stop: exit 0, no report", {
  skip: "skip" in host ? host.skip : false,
}, async (t) => {
  if ("skip" in host) return;
  const server = await FakeServer.start({ credentials: { dev_session: "s3cret" } });
  t.after(() => server.close());
  const child = spawn(
    host.binary,
    [
      ...["--url", `ws://${server.address}/v1/device`, "--device", "dev_session", "--secret", "s3cret"],
      ...["--board", "pico2_w", "--backoff-base-ms", "20", "--backoff-cap-ms", "500"],
    ],
    { stdio: ["pipe", "pipe", "pipe"], env: { ...process.env, ASAN_OPTIONS: "detect_leaks=1" } },
  );
  t.after(() => child.kill("SIGKILL"));
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  const exited = once(child, "exit");

  let conn = await server.nextConnection(waitMs);
  await workload(conn);
  conn.ws.close(1001, "server shutting down");
  conn = await server.nextConnection(waitMs);
  await workload(conn);
  conn.ws.terminate();
  conn = await server.nextConnection(waitMs);
  await workload(conn);

  child.stdin.write("stop\n");
  const [code, signal] = (await exited) as [number | null, NodeJS.Signals | null];
  assert.doesNotMatch(stderr, /AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|runtime error/);
  assert.equal(signal, null);
  assert.equal(code, 0, `exit ${code}\n${stderr.slice(-2000)}`);
  const closed = await conn.closed;
  assert.equal(closed.code, 1000, "the device closed with 1000 when told to stop");
});
