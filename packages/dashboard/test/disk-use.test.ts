// Disk use: the Admin page shows the database's size and DATA_DIR's free space, and every page
// warns when DATA_DIR is low on space (DISK_LOW_MB above any disk's free space makes it low).
import { test } from "node:test";
import { needBrowser, shot, signedInPage, useDashboardBrowser, wait } from "./browser.ts";

useDashboardBrowser();

test("Admin page: the database's size and DATA_DIR's free space; no warning with space to spare", async (t) => {
  const b = needBrowser(t);
  if (!b) return;
  const s = await signedInPage(t, b, { DISK_LOW_MB: "0" });
  await s.page.goto(`${s.url}/admin`);
  await s.page.getByRole("heading", { name: "Disk use" }).waitFor(wait);
  t.assert.match((await s.page.getByTestId("database-size").textContent(wait))!, /\d+(\.\d)? (KB|MB|GB)/);
  t.assert.match((await s.page.getByTestId("data-dir-free").textContent(wait))!, /\d+(\.\d)? (KB|MB|GB)/);
  t.assert.equal(await s.page.getByTestId("disk-low").count(), 0);
  await shot(s.page, "disk-use-admin");
});

test("low disk space: a warning on every page", async (t) => {
  const b = needBrowser(t);
  if (!b) return;
  const s = await signedInPage(t, b, { DISK_LOW_MB: "1000000000" });
  await s.page.getByTestId("disk-low").waitFor(wait);
  t.assert.match((await s.page.getByTestId("disk-low").textContent())!, /low on disk space/);
  await s.page.goto(`${s.url}/account`);
  await s.page.getByTestId("disk-low").waitFor(wait);
  await shot(s.page, "disk-low-banner");
});
