// The device page's simulated inputs, in Debian's Chromium (playwright-core) against a real
// server in this process, with a simulated board running the scaffold's button script.
import assert from "node:assert/strict";
import { type TestContext, test } from "node:test";
import { SdkClient } from "@sdk/client";
import { SimulatedDevice } from "@sdk/simulator";
import { deployScript, startTestServer, waitUntil } from "@sdk/test-helpers";
import { needBrowser, openPage, signIn, useDashboardBrowser, wait } from "./browser.ts";

const password = "correct horse battery";

useDashboardBrowser();

// The button part of `sdk init`'s template.
const buttonScript = `import { DeviceScript, GP15 } from "@sdk/device";
export default class Main extends DeviceScript {
  async onDeviceConnect() {
    await this.env.DEVICE.pinMode(GP15, "input", "up");
    await this.env.DEVICE.watchPin(GP15, "both", 20);
    console.log("watching the button");
  }
  async onMessage(msg) {
    if (msg.type === "gpio_change") this.env.DEVICE.emitState("button", msg.value === 0 ? "pressed" : "released");
  }
}
`;

async function world(t: TestContext) {
  const s = await startTestServer(t);
  const anon = new SdkClient({ baseUrl: s.url });
  const auth = await anon.api.register({ body: { email: "maker@example.com", password, issueToken: true } });
  const client = new SdkClient({ baseUrl: s.url, token: auth.token!.token });
  const project = await client.api.createProject({ body: { name: "Porch" } });
  const deployed = await deployScript(t, client, project.id, buttonScript, {
    entities: [{ id: "button", kind: "sensor", name: "Button" }],
    skipTypeCheck: true,
  });
  assert.equal(deployed.status, "active");
  const board = async (name: string, firmware?: string) => {
    const { device, credentials } = await client.api.createDevice({
      params: { projectId: project.id },
      body: { name, board: "pico_w" },
    });
    const sim = new SimulatedDevice({
      server: new URL(s.url).host,
      deviceId: credentials.deviceId,
      secret: credentials.secret,
      ...(firmware ? { firmware } : {}),
    });
    t.after(() => sim.stop());
    sim.start();
    await sim.waitFor(() => sim.pin(15).watch !== null, 15_000);
    return { device, sim };
  };
  return { url: s.url, client, project, board };
}

test("a simulated board's page presses its button and drives its pins; other boards get no controls", async (t) => {
  const b = needBrowser(t);
  if (!b) return;
  // The page first: its cleanups then run before the server's, so it closes while the server is up.
  const { page } = await openPage(t, b);
  const w = await world(t);
  const { device, sim } = await w.board("porch sim");
  await signIn(page, w.url, "maker@example.com", password);
  await page.goto(`${w.url}/projects/${w.project.id}/devices/${device.id}`);
  const controls = page.getByRole("region", { name: "Simulated inputs" });
  await controls.waitFor(wait);
  const history = async () =>
    (
      await w.client.api.getStateHistory({
        params: { projectId: w.project.id, deviceId: device.id, entityId: "button" },
      })
    )
      .map((h) => h.value)
      .reverse();
  const waitForHistory = (expected: unknown[]) =>
    waitUntil(
      async () => JSON.stringify(await history()) === JSON.stringify(expected),
      wait.timeout,
      `the button's state history to be ${JSON.stringify(expected)}`,
      50,
    );

  // A press: down through the pull-up and the 20 ms debounce, then up again.
  await controls.getByRole("button", { name: "Press button" }).click();
  await controls.getByRole("status").getByText("Pressed the button on GP15.").waitFor(wait);
  await waitForHistory(["pressed", "released"]);
  assert.deepEqual(
    sim.history(15).map((h) => h.value),
    [1, 0, 1],
    "GP15: pulled up, pressed to ground, let go",
  );

  // Holding it down: the state card shows it.
  await controls.getByRole("button", { name: "Drive low" }).click();
  await waitForHistory(["pressed", "released", "pressed"]);
  await page.getByText("pressed", { exact: true }).first().waitFor(wait);
  await controls.getByRole("button", { name: "Release" }).click();
  await waitForHistory(["pressed", "released", "pressed", "released"]);

  // A pin the board does not have: the server says so.
  await controls.getByLabel("Pin (GP)").fill("23");
  await controls.getByRole("button", { name: "Press button" }).click();
  await controls.getByText(/GP23 is not a GPIO of this board/).waitFor(wait);

  // A board whose firmware is not the simulator's gets no controls.
  const other = await w.board("real-ish", "pico-1.2.0");
  await page.goto(`${w.url}/projects/${w.project.id}/devices/${other.device.id}`);
  await page.getByRole("heading", { name: "real-ish" }).waitFor(wait);
  await page.getByRole("heading", { name: "Send a message to the script" }).waitFor(wait);
  assert.equal(await page.getByRole("region", { name: "Simulated inputs" }).count(), 0);
});
