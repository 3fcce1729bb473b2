// The "What next" box of new device credentials offers flashing only when the server has firmware
// releases to flash.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { type TestContext, test } from "node:test";
import { fakeReleaseUf2 } from "@sdk/test-helpers";
import { needBrowser, shot, signedInPage, useDashboardBrowser, wait } from "./browser.ts";

useDashboardBrowser();

async function addDevice(t: TestContext, env: Record<string, string>) {
  const b = needBrowser(t);
  if (!b) return undefined;
  const s = await signedInPage(t, b, env);
  const project = await s.client.api.createProject({ body: { name: "Greenhouse" } });
  await s.page.goto(`${s.url}/projects/${project.id}`);
  await s.page.getByLabel("Device name").fill("Porch");
  await s.page.getByRole("button", { name: "Add device" }).click();
  const deviceId = (await s.page.getByTestId("device-id").textContent(wait))!.trim();
  return { ...s, step: s.page.getByTestId("real-board-step"), deviceId };
}

test("What next: no firmware releases → no flashing step, it says where releases come from", async (t) => {
  const s = await addDevice(t, {});
  if (!s) return;
  await s.step.getByText("this server has no firmware releases to flash yet").waitFor(wait);
  await s.step.getByText("FIRMWARE_DIR").waitFor(wait);
  t.assert.equal(await s.step.getByText("sdk flash").count(), 0, "no flashing without releases");
  await shot(s.page, "what-next-no-releases");
});

test("What next: with a release → sdk flash for this device and the release it writes", async (t) => {
  const firmwareDir = fs.mkdtempSync(path.join(os.tmpdir(), "sdk-dashboard-fw-"));
  t.after(() => fs.rmSync(firmwareDir, { recursive: true, force: true }));
  fs.mkdirSync(path.join(firmwareDir, "1.2.0"));
  fs.writeFileSync(path.join(firmwareDir, "1.2.0", "pico_w.uf2"), fakeReleaseUf2({ board: "pico_w" }));
  const s = await addDevice(t, { FIRMWARE_DIR: firmwareDir });
  if (!s) return;
  await s.step.getByText(`sdk flash --device ${s.deviceId}`).waitFor(wait);
  await s.step.getByText("writes firmware 1.2.0").waitFor(wait);
  t.assert.equal(await s.step.getByText("no firmware releases").count(), 0);
  await shot(s.page, "what-next-release");
});
