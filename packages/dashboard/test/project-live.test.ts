// The project page in Chromium over the project watch socket: a device created (elsewhere) after
// the page opened appears, its live status follows its board, and it goes when deleted, all on
// one WebSocket for the whole project.
import assert from "node:assert/strict";
import { test } from "node:test";
import { SimulatedDevice } from "@sdk/simulator";
import { needBrowser, onEnd, signedInPage, useDashboardBrowser, wait } from "./browser.ts";

useDashboardBrowser();

test("project page: a device created after the page opened shows its live status", async (t) => {
  const b = needBrowser(t);
  if (!b) return;
  const s = await signedInPage(t, b);
  const { page } = s;
  const sockets: string[] = [];
  page.on("websocket", (ws) => sockets.push(new URL(ws.url()).pathname));

  const project = await s.client.api.createProject({ body: { name: "Shed" } });
  const first = await s.client.api.createDevice({
    params: { projectId: project.id },
    body: { name: "Door", board: "pico_w" },
  });
  await page.goto(`${s.url}/projects/${project.id}`);
  await page.getByRole("heading", { name: "Shed", level: 1 }).waitFor(wait);
  await page.locator(`tr[data-device-id="${first.device.id}"]`).getByText("Offline").waitFor(wait);

  // Created by someone else (the API, as the CLI would): the open page learns of it live.
  const later = await s.client.api.createDevice({
    params: { projectId: project.id },
    body: { name: "Window", board: "pico2_w" },
  });
  const row = page.locator(`tr[data-device-id="${later.device.id}"]`);
  await row.getByRole("link", { name: "Window" }).waitFor(wait);
  await row.getByTestId("device-status").getByText("Offline").waitFor(wait);

  const board = new SimulatedDevice({
    server: s.host,
    deviceId: later.device.id,
    secret: later.credentials.secret,
    board: "pico2_w",
    reconnect: false,
    firmware: "0.9.0",
  });
  onEnd(t, () => board.stop());
  board.start();
  await board.waitFor("connected", 10_000);
  await row.getByTestId("device-status").getByText("Online").waitFor(wait);
  await row.getByText("0.9.0").waitFor(wait);
  await board.stop();
  await row.getByTestId("device-status").getByText("Offline").waitFor(wait);

  // Renamed elsewhere (the CLI, another tab): the list follows.
  await s.client.api.renameDevice({
    params: { projectId: project.id, deviceId: later.device.id },
    body: { name: "Skylight" },
  });
  await row.getByRole("link", { name: "Skylight" }).waitFor(wait);

  await s.client.api.deleteDevice({ params: { projectId: project.id, deviceId: later.device.id } });
  await row.waitFor({ ...wait, state: "detached" });
  assert.equal(await page.locator(`tr[data-device-id="${first.device.id}"]`).count(), 1);

  assert.deepEqual(
    [...new Set(sockets)],
    [`/v1/projects/${project.id}/watch`],
    "one project socket, not one per device",
  );
});
