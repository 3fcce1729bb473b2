// The heartbeat and a socket paused by back-pressure: exempt while its frames are being handled,
// terminated with a reason once it stays paused without progress.
import assert from "node:assert/strict";
import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { type TestContext, test } from "node:test";
import { waitUntil } from "@sdk/test-helpers";
import { WebSocket, WebSocketServer } from "ws";
import { Heartbeat } from "../src/ws/heartbeat.ts";

const patienceMs = 120_000;

/** A real client and the server's side of its socket, tracked by a fast heartbeat. */
async function pausedPair(t: TestContext, progress: { readonly handled: number }) {
  const wss = new WebSocketServer({ port: 0, host: "127.0.0.1" });
  t.after(() => wss.close());
  await once(wss, "listening");
  const accepted = once(wss, "connection");
  const client = new WebSocket(`ws://127.0.0.1:${(wss.address() as AddressInfo).port}`);
  t.after(() => client.terminate());
  const [server] = (await accepted) as [WebSocket];
  const heartbeat = new Heartbeat(0.05);
  t.after(() => heartbeat.stop());
  const dead: string[] = [];
  heartbeat.track(server, (reason) => dead.push(reason), progress);
  server.pause();
  heartbeat.start();
  return { server, dead };
}

test("a socket paused without progress is terminated after two intervals, with a reason", async (t) => {
  const { server, dead } = await pausedPair(t, { handled: 7 });
  const closed = once(server, "close");
  await waitUntil(() => dead.length > 0, patienceMs, "the heartbeat gives up on the stalled socket");
  assert.equal(dead.length, 1);
  assert.match(dead[0]!, /^paused \d+s without progress$/);
  await closed;
});

test("a paused socket whose frames are being handled stays open", async (t) => {
  let reads = 0;
  const { server, dead } = await pausedPair(t, {
    get handled() {
      return ++reads; // a frame handled between every two ticks
    },
  });
  await waitUntil(() => reads >= 10, patienceMs, "the heartbeat ticks ten times");
  assert.deepEqual(dead, []);
  assert.equal(server.readyState, WebSocket.OPEN);
});
