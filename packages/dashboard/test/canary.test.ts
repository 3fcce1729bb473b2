// Canaries on the project page in Chromium: a rolled-back canary shows its reason, a promoted one is
// live with its outcome, and an earlier version made live as a canary from the dialog shows its
// devices, time left and both sides' health, and ends with the Roll back (or Promote) button.
import assert from "node:assert/strict";
import { type TestContext, test } from "node:test";
import type { RolloutOptions } from "@sdk/protocol";
import { SimulatedDevice } from "@sdk/simulator";
import { buildScript, waitUntil } from "@sdk/test-helpers";
import { needBrowser, shot, signedInPage, useDashboardBrowser, wait } from "./browser.ts";

useDashboardBrowser();

const script = (version: string, onMessage = `console.log("${version} got " + msg.type);`) =>
  `import { DeviceScript } from "@sdk/device";
export default class Main extends DeviceScript {
  onDeviceConnect() { console.log("${version} up"); }
  onMessage(msg: { type: string }) { ${onMessage} }
}
`;

test("deployments: a rolled-back canary's reason, a promoted canary, and a canary started and rolled back from the page", async (t: TestContext) => {
  const b = needBrowser(t);
  if (!b) return;
  const s = await signedInPage(t, b);
  const { page, client } = s;
  const project = await client.api.createProject({ body: { name: "Kitchen" } });
  const projectId = project.id;
  const board = async (name: string, tags: string[]) => {
    const { device, credentials } = await client.api.createDevice({
      params: { projectId },
      body: { name, board: "pico_w" },
    });
    if (tags.length)
      await client.api.setDeviceTags({ params: { projectId, deviceId: device.id }, body: { tags } });
    const sim = new SimulatedDevice({
      server: s.host,
      deviceId: credentials.deviceId,
      secret: credentials.secret,
      reconnect: false,
    });
    t.after(() => sim.stop());
    sim.start();
    await sim.waitFor("connected", 20_000);
    return { device, sim };
  };
  const kitchen = await board("kitchen-1", ["kitchen"]);
  const hall = await board("hall-1", []);
  const ran = (deviceId: string, line: string) =>
    waitUntil(
      async () =>
        (await client.api.listDeviceLogs({ params: { projectId, deviceId }, query: { limit: 200 } })).some(
          (l) => l.message === line,
        ),
      60_000,
      line,
      250,
    );
  const deploy = async (text: string, rollout?: RolloutOptions) => {
    const built = await buildScript(t, text, { skipTypeCheck: true });
    return client.api.createDeployment({
      params: { projectId },
      body: {
        bundle: built.bundle,
        sourceMap: built.sourceMap,
        manifest: built.manifest,
        ...(rollout ? { rollout } : {}),
      },
    });
  };

  assert.equal((await deploy(script("v1"))).status, "active");
  await ran(kitchen.device.id, "v1 up");

  // v2 throws on every message: rolled back while the kitchen device sends them.
  const v2 = await deploy(script("v2", `throw new Error("v2 cannot handle " + msg.type);`), {
    canary: { tag: "kitchen" },
    windowSeconds: 600,
  });
  assert.equal(v2.status, "canary");
  await ran(kitchen.device.id, "v2 up");
  for (let n = 0; n < 6; n++) kitchen.sim.sendEvent("tick", { n });
  await waitUntil(
    async () =>
      (await client.api.getDeployment({ params: { projectId, deploymentId: v2.id } })).status ===
      "rolled_back",
    60_000,
    "v2 rolled back",
    250,
  );

  // v3 is good: promoted when its 1 s window ends.
  const v3 = await deploy(script("v3"), { canary: { tag: "kitchen" }, windowSeconds: 1 });
  await waitUntil(
    async () =>
      (await client.api.getDeployment({ params: { projectId, deploymentId: v3.id } })).status === "active",
    60_000,
    "v3 promoted",
    250,
  );

  await page.goto(`${s.url}/projects/${projectId}`);
  await page.getByRole("heading", { name: "Kitchen", level: 1 }).waitFor(wait);
  const row = (version: number) => page.locator(`[data-deployment-version='${version}']`);
  await row(2).getByText("Rolled back", { exact: true }).waitFor(wait);
  await row(2)
    .getByText(/handler calls failed/)
    .first()
    .waitFor(wait);
  await row(2).getByTestId("rollout-outcome").getByText("Canary on 1 device (tag kitchen):").waitFor(wait);
  await row(3).getByText("Live", { exact: true }).waitFor(wait);
  await row(3).getByTestId("rollout-outcome").getByText("promoted").waitFor(wait);
  await shot(page, "canary-decisions");

  // v1 again, as a canary on the kitchen devices, from the "Roll back to v1" dialog.
  await row(1).getByRole("button", { name: "Roll back to v1" }).click();
  const dialog = page.getByRole("dialog", { name: "Make v1 live again?" });
  await dialog.getByLabel("As a canary on the devices tagged").check();
  await dialog.getByLabel("Canary tag").fill("kitchen");
  await dialog.getByLabel("Window (seconds)").fill("600");
  await shot(page, "canary-activate-dialog");
  await dialog.getByRole("button", { name: "Start canary of v1" }).click();
  const panel = page.getByRole("region", { name: "Canary v1" });
  await panel.waitFor(wait);
  await row(1).getByText("Canary", { exact: true }).waitFor(wait);
  await panel.getByTestId("canary-devices").getByRole("link", { name: "kitchen-1" }).waitFor(wait);
  await panel
    .getByTestId("canary-time-left")
    .getByText(/\d+:\d\d left of 10:00/)
    .waitFor(wait);
  const health = panel.getByTestId("canary-health");
  await health.getByRole("columnheader", { name: "Canary v1" }).waitFor(wait);
  await health.getByRole("columnheader", { name: "Stable" }).waitFor(wait);
  // The figures follow without a reload: a message on the stable side is counted.
  hall.sim.sendEvent("tick", { n: 99 });
  await health
    .getByRole("row", { name: /Handler calls/ })
    .getByRole("cell")
    .nth(1)
    .getByText(/^[1-9]/)
    .waitFor(wait);
  await shot(page, "canary-running");

  // While it runs, no other version can be made live (the buttons say why).
  const blocked = row(2).getByRole("button", { name: "Roll back to v2" });
  assert.equal(await blocked.isDisabled(), true);
  assert.match(
    (await blocked.getAttribute("title")) ?? "",
    /Canary v1 is running: promote or roll it back first/,
  );

  // The 2 s polls of a running canary do not reload the Home Assistant section (only a new live
  // version does): two polls pass without a read of it.
  const reads = { deployments: 0, homeAssistant: 0 };
  const count = (request: { url(): string; method(): string }) => {
    const url = new URL(request.url()).pathname;
    if (request.method() !== "GET") return;
    if (url === `/v1/projects/${projectId}/deployments`) reads.deployments++;
    if (url === `/v1/projects/${projectId}/home-assistant`) reads.homeAssistant++;
  };
  page.on("request", count);
  await waitUntil(() => reads.deployments >= 2, 30_000, "two polls of the deployments", 250);
  page.off("request", count);
  assert.equal(reads.homeAssistant, 0, "the Home Assistant section was not read again");

  // A failed read of the deployments keeps the figures on the page (no error, no false decision).
  const deploymentsUrl = `${s.url}/v1/projects/${projectId}/deployments`;
  let failRead!: () => void;
  const failed = new Promise<void>((resolve) => {
    failRead = resolve;
  });
  await page.route(deploymentsUrl, async (route) => {
    await route.abort("connectionreset");
    failRead();
  });
  await failed;
  await page.unroute(deploymentsUrl);
  const section = page.locator("section[aria-labelledby='deployments-title']");
  assert.equal(await section.getByRole("alert").count(), 0, "no error shown for a failed poll");
  assert.equal(await panel.isVisible(), true, "the canary stays on the page");

  await panel.getByRole("button", { name: "Roll back v1" }).click();
  const confirm = page.getByRole("dialog", { name: "Roll back v1?" });
  await confirm.getByRole("button", { name: "Roll back v1" }).click();
  await row(1).getByText("Rolled back", { exact: true }).waitFor(wait);
  await panel.waitFor({ ...wait, state: "detached" });
  await row(3).getByText("Live", { exact: true }).waitFor(wait);
  assert.equal(
    (await client.api.getDeployment({ params: { projectId, deploymentId: v3.id } })).status,
    "active",
    "the stable version stays live",
  );

  // The rolled-back v2 again, as a canary on a share of the devices, then promoted by hand.
  await row(2).getByRole("button", { name: "Roll back to v2" }).click();
  // v2 never was live (a rolled-back canary): not "again".
  const again = page.getByRole("dialog", { name: "Make v2 live?" });
  await again.getByLabel("As a canary on a share of the connected devices").check();
  await again.getByLabel("Canary share (%)").fill("50");
  await again.getByRole("button", { name: "Start canary of v2" }).click();
  const second = page.getByRole("region", { name: "Canary v2" });
  await second.getByText("50% of the connected devices").waitFor(wait);
  await second.getByRole("button", { name: "Promote v2" }).click();
  await page
    .getByRole("dialog", { name: "Promote v2 to every device?" })
    .getByRole("button", { name: "Promote v2" })
    .click();
  await row(2).getByText("Live", { exact: true }).waitFor(wait);
  await row(3).getByText("Previous", { exact: true }).waitFor(wait);
  await second.waitFor({ ...wait, state: "detached" });

  // A canary started elsewhere (the CLI, say) shows up when the tab is shown again, and goes away
  // once it is rolled back there.
  const v4 = await deploy(script("v4"), { canary: { tag: "kitchen" }, windowSeconds: 600 });
  assert.equal(v4.status, "canary");
  await page.evaluate('document.dispatchEvent(new Event("visibilitychange"))');
  const fromCli = page.getByRole("region", { name: "Canary v4" });
  await fromCli.waitFor(wait);
  await client.api.rollBackDeployment({ params: { projectId, deploymentId: v4.id } });
  await row(4).getByText("Rolled back", { exact: true }).waitFor(wait);
  await fromCli.waitFor({ ...wait, state: "detached" });
});
