import assert from "node:assert/strict";
import { createHmac, timingSafeEqual } from "node:crypto";
import http from "node:http";
import net, { type AddressInfo } from "node:net";
import type { TestContext } from "node:test";
import { SdkApiError, type SdkClient } from "@sdk/client";
import { waitUntil } from "@sdk/test-helpers";
import type { EventBus } from "../../src/events/bus.ts";
import type { TestServer } from "./server.ts";

export interface Received {
  headers: http.IncomingHttpHeaders;
  raw: string;
  body: any;
}

/** A webhook receiver on 127.0.0.1 that answers each request with the next status of `answers` (then 200). */
export async function receiver(t: TestContext, answers: number[] = []) {
  const received: Received[] = [];
  const server = http.createServer((request, response) => {
    let raw = "";
    request.setEncoding("utf8");
    request.on("data", (chunk) => {
      raw += chunk;
    });
    request.on("end", () => {
      received.push({ headers: request.headers, raw, body: JSON.parse(raw) });
      response.writeHead(answers.shift() ?? 200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    of: (type: string) => received.filter((r) => r.body.type === type),
    waitFor: (type: string, count = 1) =>
      waitUntil(
        () => received.filter((r) => r.body.type === type).length >= count,
        20_000,
        `${count} × ${type}`,
      ),
  };
}

/** What a receiver does, written from the docs: HMAC-SHA256 of `<timestamp>.<raw body>` with the secret. */
export function verifies(secret: string, r: Received): boolean {
  const signed = `${r.headers["x-sdk-timestamp"]}.${r.raw}`;
  const expected = Buffer.from(`sha256=${createHmac("sha256", secret).update(signed).digest("hex")}`);
  const got = Buffer.from(String(r.headers["x-sdk-signature"]));
  return got.length === expected.length && timingSafeEqual(got, expected);
}

/** Counts the server's presence events of a device, so a test moves the clock only once the server has seen them. */
export function presence(s: { server: { bus: EventBus } }, deviceId: () => string) {
  const seen = { connected: 0, disconnected: 0 };
  for (const type of ["device.connected", "device.disconnected"] as const) {
    s.server.bus.subscribe(type, (e) => {
      if (e.deviceId === deviceId()) seen[type === "device.connected" ? "connected" : "disconnected"]++;
    });
  }
  return {
    seen,
    until: (kind: "connected" | "disconnected", count: number) =>
      waitUntil(() => seen[kind] >= count, 20_000, `${count} × device.${kind}`),
  };
}

export const allowLoopback = { WEBHOOK_ALLOW_PRIVATE: "loopback" };
export const minute = 60_000;

export async function notFound(call: Promise<unknown>) {
  await assert.rejects(call, (e: unknown) => e instanceof SdkApiError && e.status === 404);
}

/** A receiver that never finishes its answer: it sends one byte of a status line every 100 ms. */
export async function tricklingReceiver(t: TestContext) {
  const sockets = new Set<net.Socket>();
  let connections = 0;
  const server = net.createServer((socket) => {
    connections++;
    sockets.add(socket);
    const line = "HTTP/1.1 200 OK\r\nX-Slow: ".split("");
    const timer = setInterval(() => socket.write(line.shift() ?? "a"), 100);
    socket.on("error", () => undefined);
    socket.on("close", () => {
      clearInterval(timer);
      sockets.delete(socket);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => {
    for (const socket of sockets) socket.destroy();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    open: () => sockets.size,
    connections: () => connections,
  };
}

/** A new user and their project "p", with the params the project's routes take. */
export async function ownerProject(s: Pick<TestServer, "user">, email?: string) {
  const { client, auth } = await s.user(email);
  const project = await client.api.createProject({ body: { name: "p" } });
  return { client, auth, project, params: { projectId: project.id } };
}

/** Waits until the newest delivery of the project (matching `query`) is marked delivered. */
export function untilDelivered(
  client: SdkClient,
  params: { projectId: string },
  what: string,
  query: { webhookId?: string } = {},
) {
  return waitUntil(
    async () => (await client.api.listAlertDeliveries({ params, query }))[0]?.status === "delivered",
    20_000,
    what,
  );
}
