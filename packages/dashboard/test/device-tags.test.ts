// Device tags in Chromium: added and removed on the device page (checked like the server does), shown
// in the project's device list, kept live there when they change elsewhere, and the list's tag filter.
import assert from "node:assert/strict";
import { test } from "node:test";
import { needBrowser, signedInPage, useDashboardBrowser, wait } from "./browser.ts";

useDashboardBrowser();

test("device tags: edit on the device page, shown and filtered in the project's device list", async (t) => {
  const b = needBrowser(t);
  if (!b) return;
  const s = await signedInPage(t, b);
  const project = await s.client.api.createProject({ body: { name: "House" } });
  const create = (name: string) =>
    s.client.api.createDevice({ params: { projectId: project.id }, body: { name, board: "pico_w" } });
  const lamp = await create("Lamp");
  const fan = await create("Fan");
  await s.client.api.setDeviceTags({
    params: { projectId: project.id, deviceId: fan.device.id },
    body: { tags: ["garage"] },
  });
  const { page } = s;

  await page.goto(`${s.url}/projects/${project.id}/devices/${lamp.device.id}`);
  await page.getByRole("heading", { name: "Lamp", level: 1 }).waitFor(wait);
  const section = page.getByRole("region", { name: "Tags" });
  await section.getByText("No tags yet.").waitFor(wait);
  const input = section.getByLabel("Add tags");
  await input.fill("Kitchen");
  await section.getByRole("button", { name: "Add" }).click();
  await section.getByRole("alert").getByText("is not a valid tag").waitFor(wait);
  await input.fill("kitchen floor-2");
  await section.getByRole("button", { name: "Add" }).click();
  const list = section.getByRole("list", { name: "Tags of this device" });
  await list.getByText("floor-2").waitFor(wait);
  await list.getByText("kitchen").waitFor(wait);
  await section.getByRole("button", { name: "Remove tag floor-2" }).click();
  await list.getByText("floor-2").waitFor({ ...wait, state: "detached" });
  assert.deepEqual(
    (await s.client.api.getDevice({ params: { projectId: project.id, deviceId: lamp.device.id } })).tags,
    ["kitchen"],
  );

  await page.goto(`${s.url}/projects/${project.id}`);
  const row = (id: string) => page.locator(`tr[data-device-id='${id}']`);
  await row(lamp.device.id).getByTestId("device-tags").getByText("kitchen").waitFor(wait);
  await row(fan.device.id).getByTestId("device-tags").getByText("garage").waitFor(wait);

  // tagged elsewhere (the CLI, REST): the list follows without a reload
  await s.client.api.addDeviceTags({
    params: { projectId: project.id, deviceId: fan.device.id },
    body: { tags: ["kitchen"] },
  });
  await row(fan.device.id).getByTestId("device-tags").getByText("kitchen").waitFor(wait);

  const filter = page.getByLabel("Show devices tagged");
  await filter.selectOption("garage");
  await row(lamp.device.id).waitFor({ ...wait, state: "detached" });
  await row(fan.device.id).waitFor(wait);
  await filter.selectOption("kitchen");
  await row(lamp.device.id).waitFor(wait);
  await row(fan.device.id).waitFor(wait);
  await filter.selectOption("");
  assert.equal(await page.locator("tr[data-device-id]").count(), 2);
});
