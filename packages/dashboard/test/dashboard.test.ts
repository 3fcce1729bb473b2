// Browser tests of the dashboard: Debian's Chromium (never a downloaded browser) driven by
// playwright-core against a real server started in this process, with a simulated board.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { SdkClient } from "@sdk/client";
import { SimulatedDevice } from "@sdk/simulator";
import { buildScript, fakeReleaseUf2 } from "@sdk/test-helpers";
import type { Locator } from "playwright-core";
import { needBrowser, onEnd, openPage, shot, startServer, useDashboardBrowser, wait } from "./browser.ts";

const password = "correct horse battery";

useDashboardBrowser();

/**
 * Waits until `locator` matches exactly `count` elements (Playwright's `count()` reads once, so
 * reading it right after an action can see the page before the update lands).
 */
async function waitForCount(locator: Locator, count: number): Promise<void> {
  const deadline = Date.now() + wait.timeout;
  let seen = await locator.count();
  while (seen !== count) {
    if (Date.now() > deadline) assert.fail(`expected ${count} matches of ${locator}, found ${seen}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    seen = await locator.count();
  }
}

const script = `
import { DeviceScript } from "@sdk/device";
export default class Thermostat extends DeviceScript {
  async onDeviceConnect() {
    console.log("thermostat script started");
    this.env.DEVICE.emitState("temperature", 21.5);
  }
  async onMessage(msg) {
    if (msg.type === "set_temperature") {
      console.warn("temperature set to " + msg.value);
      this.env.DEVICE.emitState("temperature", msg.value);
    }
  }
}
`;

test("first run to a live device: setup, project, device, simulated board, script, state, logs, offline", async (t) => {
  const b = needBrowser(t);
  if (!b) return;
  const firmwareDir = fs.mkdtempSync(path.join(os.tmpdir(), "sdk-dashboard-fw-"));
  onEnd(t, () => fs.rmSync(firmwareDir, { recursive: true, force: true }));
  fs.mkdirSync(path.join(firmwareDir, "1.0.0"));
  fs.writeFileSync(path.join(firmwareDir, "1.0.0", "pico_w.uf2"), fakeReleaseUf2({ board: "pico_w" }));
  const { url, host } = await startServer(t, { FIRMWARE_DIR: firmwareDir });
  const { page } = await openPage(t, b);

  // First run: the setup screen, then the admin account.
  await page.goto(url);
  await page.getByRole("heading", { name: "Create the admin account" }).waitFor(wait);
  assert.equal(new URL(page.url()).pathname, "/setup");
  await shot(page, "setup");
  await page.getByLabel("Email").fill("admin@example.com");
  await page.getByLabel("Password", { exact: true }).fill(password);
  await page.getByLabel("Repeat the password").fill(password);
  await page.getByRole("button", { name: "Create admin account" }).click();

  // Projects: empty, then one.
  await page.getByRole("heading", { name: "Projects", level: 1 }).waitFor(wait);
  await page.getByText("No projects yet").waitFor(wait);
  await page.getByLabel("Project name").fill("Greenhouse");
  await page.getByRole("button", { name: "Create project" }).click();
  await page.getByRole("heading", { name: "Greenhouse", level: 1 }).waitFor(wait);
  const projectId = new URL(page.url()).pathname.split("/")[2]!;
  assert.match(projectId, /^prj_/);
  // Without MQTT_URL the Home Assistant section says the bridge is off and how to turn it on.
  await page
    .getByRole("region", { name: "Home Assistant", exact: true })
    .getByText("this server has no MQTT_URL", { exact: false })
    .waitFor(wait);

  // A device: its credentials are shown once, with what to do next.
  await page.getByLabel("Device name").fill("Sensor 1");
  await page.getByLabel("Board").selectOption("pico_w");
  await page.getByRole("button", { name: "Add device" }).click();
  const deviceId = (await page.getByTestId("device-id").textContent({ timeout: 10_000 }))!.trim();
  const secret = (await page.getByTestId("device-secret").textContent())!.trim();
  assert.match(deviceId, /^dev_/);
  assert.ok(secret.length > 10);
  await page.getByText(`--server ${host} --device ${deviceId} --secret ${secret}`).waitFor(wait);
  const row = page.locator(`tr[data-device-id="${deviceId}"]`);
  await row.getByTestId("device-status").getByText("Offline").waitFor(wait);
  await shot(page, "project-new-device");
  await page.getByRole("button", { name: "I have saved the secret" }).click();

  // The simulated board connects with those credentials: the row turns online without a reload.
  // It runs firmware 0.9.0 while the server's bundle has 1.0.0: the device page says so.
  const board = new SimulatedDevice({
    server: host,
    deviceId,
    secret,
    board: "pico_w",
    reconnect: false,
    firmware: "0.9.0",
  });
  onEnd(t, () => board.stop());
  board.start();
  await board.waitFor("connected", 10_000);
  await row.getByTestId("device-status").getByText("Online").waitFor(wait);

  // An API token from the account page, to deploy with.
  await page.getByRole("link", { name: "Account" }).click();
  await page.getByRole("heading", { name: "Account", level: 1 }).waitFor(wait);
  await page.getByLabel("Token name").fill("deploy");
  await page.getByRole("button", { name: "Create token" }).click();
  const token = (await page.getByTestId("api-token").textContent({ timeout: 10_000 }))!.trim();
  assert.match(token, /^sdk_/);
  await page.getByRole("cell", { name: "deploy", exact: true }).waitFor(wait);
  await shot(page, "account");

  // The device page, reached by links.
  await page.getByRole("link", { name: "Projects" }).first().click();
  await page.getByRole("heading", { name: "Projects", level: 1 }).waitFor(wait);
  await shot(page, "projects");
  await page.getByRole("link", { name: "Greenhouse", exact: true }).click();
  await page.getByRole("link", { name: "Sensor 1", exact: true }).click();
  await page.getByRole("heading", { name: "Sensor 1", level: 1 }).waitFor(wait);
  const status = page.locator(".device-summary").getByTestId("device-status");
  await status.getByText("Online").waitFor(wait);
  await page.getByText("Live", { exact: true }).waitFor(wait);
  await page.getByText("No state yet").waitFor(wait);
  await page.getByTestId("firmware-update").getByText("update available: 1.0.0").waitFor(wait);

  // A script is deployed: its first state value and log line arrive live.
  const built = await buildScript(t, script, {
    skipTypeCheck: true,
    entities: [{ id: "temperature", kind: "sensor", name: "Temperature", unit: "°C" }],
  });
  const api = new SdkClient({ baseUrl: url, token }).api;
  const deployment = await api.createDeployment({
    params: { projectId },
    body: { bundle: built.bundle, sourceMap: built.sourceMap, manifest: built.manifest },
  });
  assert.equal(deployment.status, "active", deployment.error ?? "");
  await page.getByTestId("state-temperature").getByText("21.5").waitFor(wait);
  await page.locator(".log-line", { hasText: "thermostat script started" }).waitFor(wait);

  // A message to the script changes the state; the chart follows.
  await page.getByLabel("Message (JSON)").fill('{"type": "set_temperature", "value": 23.25}');
  await page.getByRole("button", { name: "Send message" }).click();
  await page.getByText("Delivered “set_temperature” to the script.").waitFor(wait);
  // The new deployment's entities give the card its name and unit.
  await page.getByTestId("state-temperature").getByText("23.25 °C").waitFor(wait);
  await page.getByRole("heading", { name: "History of Temperature (°C)" }).waitFor(wait);
  await page.locator(".sparkline-caption", { hasText: "latest 23.25 °C" }).waitFor(wait);
  assert.equal(await page.locator(".sparkline polyline").count(), 1);

  // Lines and values the board itself sends.
  board.sendLog("warn", "battery low");
  board.sendState("humidity", 40);
  await page.locator(".log-line", { hasText: "battery low" }).waitFor(wait);
  await page.getByTestId("state-humidity").getByText("40").waitFor(wait);
  await page.getByRole("heading", { name: "History of Temperature (°C)" }).waitFor(wait);

  // Level filter, search and pause.
  const logs = page.locator(".log-line");
  await page.getByLabel("Level").selectOption("error");
  await page.getByText("No line matches the level and search.").waitFor(wait);
  await page.getByLabel("Level").selectOption("warn");
  await page.getByLabel("Search").fill("battery");
  await waitForCount(logs, 1);
  await logs.getByText("battery low").waitFor(wait);
  await page.getByLabel("Search").fill("");
  await page.getByLabel("Level").selectOption("debug");
  await page.getByRole("button", { name: "Pause" }).click();
  // The line is sent only once the page shows it is paused, or it could land before the pause.
  await page.getByText("Paused: 0 new lines waiting.").waitFor(wait);
  board.sendLog("info", "sent while paused");
  await page.getByText("Paused: 1 new line waiting.").waitFor(wait);
  assert.equal(await page.locator(".log-line", { hasText: "sent while paused" }).count(), 0);
  await page.getByRole("button", { name: "Resume" }).click();
  await page.locator(".log-line", { hasText: "sent while paused" }).waitFor(wait);
  await shot(page, "device");

  await page.setViewportSize({ width: 390, height: 844 });
  await shot(page, "device-phone");
  await page.setViewportSize({ width: 1280, height: 900 });

  // The board goes away: the page says so without a reload.
  await board.stop();
  await status.getByText("Offline").waitFor(wait);

  // A second deployment, then the project page: roll back to the first, through the dialog.
  const second = await api.createDeployment({
    params: { projectId },
    body: { bundle: built.bundle, sourceMap: built.sourceMap, manifest: built.manifest },
  });
  assert.equal(second.version, 2);
  await page
    .getByRole("navigation", { name: "Breadcrumb" })
    .getByRole("link", { name: "Greenhouse" })
    .click();
  await page.getByRole("heading", { name: "Greenhouse", level: 1 }).waitFor(wait);
  await row.getByTestId("device-status").getByText("Offline").waitFor(wait);
  const v1 = page.locator("[data-deployment-version='1']");
  const v2 = page.locator("[data-deployment-version='2']");
  await v2.getByText("Live", { exact: true }).waitFor(wait);
  await v1.getByRole("cell", { name: "you", exact: true }).waitFor(wait);
  await v1.getByRole("button", { name: "Roll back to v1" }).click();
  const dialog = page.getByRole("dialog", { name: "Make v1 live again?" });
  await dialog.waitFor(wait);
  await dialog.getByRole("button", { name: "Roll back to v1" }).click();
  await v1.getByText("Live", { exact: true }).waitFor(wait);
  await v2.getByText("Previous", { exact: true }).waitFor(wait);
  await page.getByRole("cell", { name: "Temperature", exact: true }).waitFor(wait);
  await page.getByLabel("Name", { exact: true }).fill("WIFI_SSID");
  await page.getByLabel("Value", { exact: true }).fill("greenhouse-net");
  await page.getByRole("button", { name: "Save variable" }).click();
  await page.getByRole("cell", { name: "hidden value", exact: true }).waitFor(wait);
  assert.equal(await page.getByText("greenhouse-net").count(), 0, "env values are masked");
  await page.getByRole("button", { name: "Show the value of WIFI_SSID" }).click();
  await page.getByText("greenhouse-net").waitFor(wait);
  await shot(page, "project");
  await page.emulateMedia({ colorScheme: "dark" });
  await shot(page, "project-dark");
  await page.emulateMedia({ colorScheme: "light" });

  // Admin: users, registration, audit.
  await page.getByRole("link", { name: "Admin" }).click();
  await page.getByRole("heading", { name: "Admin", level: 1 }).waitFor(wait);
  await page.getByTestId("registration").getByText("Open:").waitFor(wait);
  await page
    .getByRole("region", { name: "Users" })
    .getByRole("cell", { name: "admin@example.com (you)", exact: true })
    .waitFor(wait);
  await page.getByText("deployment.activated").first().waitFor(wait);
  await shot(page, "admin");

  // Sign out: back to the sign-in page, with the sign-up link (registration is open).
  await page.getByRole("button", { name: "Sign out" }).click();
  await page.getByRole("heading", { name: "Sign in" }).waitFor(wait);
  await page.getByRole("link", { name: "Create an account" }).waitFor(wait);
});

test("registration closed: no sign-up link, and the API refuses with registration_closed", async (t) => {
  const b = needBrowser(t);
  if (!b) return;
  const { url } = await startServer(t, { ALLOW_REGISTRATION: "false" });
  await new SdkClient({ baseUrl: url }).api.register({ body: { email: "admin@example.com", password } });
  const { page } = await openPage(t, b);

  await page.goto(url);
  await page.getByRole("heading", { name: "Sign in" }).waitFor(wait);
  assert.equal(new URL(page.url()).pathname, "/login");
  await page.getByText("Ask the admin of this server to add you.").waitFor(wait);
  await shot(page, "login");
  assert.equal(await page.getByRole("link", { name: "Create an account" }).count(), 0);
  await page.goto(`${url}/register`);
  await page.getByRole("heading", { name: "Sign-up is closed" }).waitFor(wait);

  const response = await fetch(`${url}/v1/auth/register`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email: "someone@example.com", password }),
  });
  assert.equal(response.status, 403);
  const body = (await response.json()) as { error: { code: string } };
  assert.equal(body.error.code, "registration_closed");

  // With sign-up closed, the admin adds people on the Admin page.
  await page.goto(`${url}/login`);
  await page.getByLabel("Email").fill("admin@example.com");
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("link", { name: "Admin" }).click();
  await page.getByLabel("Email").fill("colleague@example.com");
  await page.getByLabel("Password").fill("their first password");
  await page.getByRole("button", { name: "Add user" }).click();
  await page.getByText("colleague@example.com can now sign in").waitFor(wait);
  await page
    .getByRole("region", { name: "Users" })
    .getByRole("cell", { name: "colleague@example.com", exact: true })
    .waitFor(wait);
  const colleague = await new SdkClient({ baseUrl: url }).api.login({
    body: { email: "colleague@example.com", password: "their first password" },
  });
  assert.equal(colleague.user.role, "member");
});

test("another user's project and device look like they do not exist", async (t) => {
  const b = needBrowser(t);
  if (!b) return;
  const { url } = await startServer(t);
  const anon = new SdkClient({ baseUrl: url }).api;
  const owner = await anon.register({ body: { email: "owner@example.com", password, issueToken: true } });
  const ownerApi = new SdkClient({ baseUrl: url, token: owner.token!.token }).api;
  const project = await ownerApi.createProject({ body: { name: "Private lab" } });
  const { device } = await ownerApi.createDevice({
    params: { projectId: project.id },
    body: { name: "Hidden sensor", board: "pico2_w" },
  });
  await anon.register({ body: { email: "other@example.com", password, issueToken: true } });
  const { page } = await openPage(t, b);

  // Signed out, the project URL leads to sign-in and back.
  await page.goto(`${url}/projects/${project.id}`);
  await page.getByRole("heading", { name: "Sign in" }).waitFor(wait);
  await page.getByLabel("Email").fill("other@example.com");
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "Not found" }).waitFor(wait);
  assert.equal(new URL(page.url()).pathname, `/projects/${project.id}`);
  assert.equal(await page.getByText("Private lab").count(), 0);

  await page.goto(`${url}/projects/${project.id}/devices/${device.id}`);
  await page.getByRole("heading", { name: "Not found" }).waitFor(wait);
  assert.equal(await page.getByText("Hidden sensor").count(), 0);

  await page.getByRole("link", { name: "your projects" }).click();
  await page.getByText("No projects yet").waitFor(wait);
  // Members have no admin page.
  assert.equal(await page.getByRole("link", { name: "Admin" }).count(), 0);
});

test("errors in plain words with their docs link, confirmations, and a session that ends", async (t) => {
  const b = needBrowser(t);
  if (!b) return;
  const { url } = await startServer(t);
  const anon = new SdkClient({ baseUrl: url }).api;
  const admin = await anon.register({ body: { email: "admin@example.com", password, issueToken: true } });
  const adminApi = new SdkClient({ baseUrl: url, token: admin.token!.token }).api;
  await anon.register({ body: { email: "member@example.com", password } });
  const { page } = await openPage(t, b);

  // A wrong password: the server's words and the docs link of its error code.
  await page.goto(`${url}/login`);
  await page.getByLabel("Email").fill("admin@example.com");
  await page.getByLabel("Password").fill("not the password");
  await page.getByRole("button", { name: "Sign in" }).click();
  const alert = page.getByRole("alert");
  await alert.getByText("Invalid email or password").waitFor(wait);
  const docs = alert.getByRole("link", { name: "More about this error (invalid_credentials)" });
  assert.match((await docs.getAttribute("href")) ?? "", /\/docs\/errors#invalid_credentials$/);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "Projects", level: 1 }).waitFor(wait);

  // Rename a project; a device page explains why a message cannot be delivered.
  await page.getByLabel("Project name").fill("Old name");
  await page.getByRole("button", { name: "Create project" }).click();
  await page.getByRole("heading", { name: "Old name", level: 1 }).waitFor(wait);
  await page.getByRole("button", { name: "Rename" }).click();
  await page.getByLabel("New name").fill("Workshop");
  await page.getByRole("button", { name: "Save name" }).click();
  await page.getByRole("heading", { name: "Workshop", level: 1 }).waitFor(wait);
  await page.getByLabel("Device name").fill("Bench board");
  await page.getByLabel("Board").selectOption("pico2_w");
  await page.getByRole("button", { name: "Add device" }).click();
  await page.getByTestId("device-secret").waitFor(wait);
  await page.getByRole("button", { name: "I have saved the secret" }).click();
  await page.setViewportSize({ width: 390, height: 844 });
  await shot(page, "project-phone");
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.getByRole("link", { name: "Bench board", exact: true }).click();
  await page.getByRole("heading", { name: "Bench board", level: 1 }).waitFor(wait);
  await page.getByText("No logs yet").waitFor(wait);
  await page.getByLabel("Message (JSON)").fill("{not json");
  await page.getByRole("button", { name: "Send message" }).click();
  await page.getByText("This is not valid JSON.").waitFor(wait);
  await page.getByLabel("Message (JSON)").fill('{"type": "ping"}');
  await page.getByRole("button", { name: "Send message" }).click();
  await page.getByRole("alert").getByText("The device is offline").waitFor(wait);
  await page.getByRole("link", { name: "More about this error (device_offline)" }).waitFor(wait);

  // Deleting asks first: Escape keeps the project, the dialog's button deletes it.
  await page.getByRole("navigation", { name: "Breadcrumb" }).getByRole("link", { name: "Workshop" }).click();
  await page.getByRole("button", { name: "Delete project" }).click();
  const dialog = page.getByRole("dialog", { name: "Delete “Workshop”?" });
  await dialog.waitFor(wait);
  await page.keyboard.press("Escape");
  await dialog.waitFor({ state: "detached", ...wait });
  await page.getByRole("heading", { name: "Workshop", level: 1 }).waitFor(wait);
  await page.getByRole("button", { name: "Delete project" }).click();
  await dialog.getByRole("button", { name: "Delete project" }).click();
  await page.getByText("No projects yet").waitFor(wait);

  // Account: a wrong current password is an error, not a sign-out; then the change works.
  await page.getByRole("link", { name: "Account" }).click();
  await page.getByLabel("Current password").fill("wrong password");
  await page.getByLabel("New password", { exact: true }).fill("a new long password");
  await page.getByLabel("Repeat the new password").fill("a new long password");
  await page.getByRole("button", { name: "Change password" }).click();
  await page.getByRole("alert").getByText("The current password is wrong").waitFor(wait);
  await page.getByLabel("Current password").fill(password);
  await page.getByLabel("New password", { exact: true }).fill("a new long password");
  await page.getByLabel("Repeat the new password").fill("a new long password");
  await page.getByRole("button", { name: "Change password" }).click();
  await page.getByText("Your password was changed.").waitFor(wait);

  // Admin: promote the member, then delete them.
  await page.getByRole("link", { name: "Admin" }).click();
  await page.getByLabel("Role of member@example.com").selectOption("admin");
  await page.getByText("member@example.com is now an admin.").waitFor(wait);
  await page.getByRole("button", { name: "Delete member@example.com" }).click();
  await page.getByRole("dialog").getByRole("button", { name: "Delete user" }).click();
  await page
    .getByRole("region", { name: "Users" })
    .getByRole("cell", { name: "member@example.com", exact: true })
    .waitFor({ state: "detached", ...wait });

  // The session ends elsewhere (a password change through an API token signs out every browser):
  // the next call sends the user to sign in, saying why, and back to the same page afterwards.
  await adminApi.changePassword({ body: { currentPassword: "a new long password", newPassword: password } });
  await page.getByRole("link", { name: "Account" }).click();
  await page.getByText("Your session has ended. Please sign in again.").waitFor(wait);
  await page.getByLabel("Email").fill("admin@example.com");
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "Account", level: 1 }).waitFor(wait);
});

test("deployments: the source of any version, its bundle as a download, and how many are kept", async (t) => {
  const b = needBrowser(t);
  if (!b) return;
  const { url } = await startServer(t, { DEPLOYMENTS_KEPT: "5" });
  const anon = new SdkClient({ baseUrl: url }).api;
  const owner = await anon.register({ body: { email: "owner@example.com", password, issueToken: true } });
  const ownerApi = new SdkClient({ baseUrl: url, token: owner.token!.token }).api;
  const project = await ownerApi.createProject({ body: { name: "Lab" } });
  const first = await buildScript(t, script, { skipTypeCheck: true });
  const second = await buildScript(t, script.replace("thermostat script started", "version two"), {
    skipTypeCheck: true,
  });
  for (const built of [first, second]) {
    await ownerApi.createDeployment({
      params: { projectId: project.id },
      body: { bundle: built.bundle, sourceMap: built.sourceMap, manifest: built.manifest },
    });
  }
  const { page } = await openPage(t, b);
  await page.goto(`${url}/projects/${project.id}`);
  await page.getByLabel("Email").fill("owner@example.com");
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "Lab", level: 1 }).waitFor(wait);
  await page
    .getByTestId("deployments-kept")
    .getByText("The server keeps each project's last 5 deployments")
    .waitFor(wait);

  // The source of the older version: its file and text, from the source map.
  await page.getByRole("button", { name: "Source of v1" }).click();
  const source = page.getByRole("region", { name: "Source of v1" });
  await source.getByText("src/index.ts", { exact: true }).waitFor(wait);
  await source.getByText('console.log("thermostat script started");').waitFor(wait);
  assert.equal(await source.getByText("version two").count(), 0);
  await shot(page, "deployment-source");

  // Its bundle downloads as the file it was deployed as.
  const [download] = await Promise.all([
    page.waitForEvent("download", wait),
    page.getByRole("link", { name: "Download bundle of v1" }).click(),
  ]);
  assert.equal(download.suggestedFilename(), "Lab-v1.js");
  const saved = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "sdk-dashboard-download-")), "bundle.js");
  onEnd(t, () => fs.rmSync(path.dirname(saved), { recursive: true, force: true }));
  await download.saveAs(saved);
  assert.equal(fs.readFileSync(saved, "utf8"), first.bundle);
});
