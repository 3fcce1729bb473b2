// The device page in Chromium: the board's pins live, a raw command with its answer, and the state
// chart with a time axis and readable values for on/off and counts.
import assert from "node:assert/strict";
import { test } from "node:test";
import { SimulatedDevice } from "@sdk/simulator";
import { buildScript } from "@sdk/test-helpers";
import { needBrowser, onEnd, shot, signedInPage, useDashboardBrowser, wait } from "./browser.ts";

useDashboardBrowser();

const button = `
import { DeviceScript, GP15, OnboardLED } from "@sdk/device";
let presses = 0;
export default class Button extends DeviceScript {
  async onDeviceConnect() {
    await this.env.DEVICE.pinMode(GP15, "input", "up");
    await this.env.DEVICE.watchPin(GP15, "both", 5);
    await this.env.DEVICE.gpioWrite(OnboardLED, 1);
    this.env.DEVICE.emitState("presses", presses);
  }
  async onMessage(msg) {
    if (msg.type !== "gpio_change") return;
    this.env.DEVICE.emitState("button", msg.value === 0);
    if (msg.value === 0) this.env.DEVICE.emitState("presses", ++presses);
  }
}
`;

test("device page: pins live, a raw command and its answer, charts of on/off and counts", async (t) => {
  const b = needBrowser(t);
  if (!b) return;
  const s = await signedInPage(t, b);
  const project = await s.client.api.createProject({ body: { name: "Porch" } });
  const built = await buildScript(t, button, {
    entities: [
      { id: "button", kind: "sensor", name: "Button" },
      { id: "presses", kind: "sensor", name: "Presses" },
    ],
  });
  const deployment = await s.client.api.createDeployment({
    params: { projectId: project.id },
    body: { bundle: built.bundle, sourceMap: built.sourceMap, manifest: built.manifest },
  });
  assert.equal(deployment.status, "active", deployment.error ?? "");
  const { device, credentials } = await s.client.api.createDevice({
    params: { projectId: project.id },
    body: { name: "Doorbell", board: "pico_w" },
  });
  const { page } = s;
  await page.goto(`${s.url}/projects/${project.id}/devices/${device.id}`);
  await page.getByRole("heading", { name: "Doorbell", level: 1 }).waitFor(wait);
  await page.getByText("The board is offline").waitFor(wait);

  const sim = new SimulatedDevice({
    server: s.host,
    deviceId: device.id,
    secret: credentials.secret,
    reconnect: false,
  });
  onEnd(t, () => sim.stop());
  sim.start();
  await sim.waitFor("connected", 10_000);

  // What the script set up shows without a reload.
  const pins = page.getByRole("region", { name: "Pins" });
  const led = pins.locator("tr[data-pin='LED']");
  const gp15 = pins.locator("tr[data-pin='15']");
  await led.getByText("High (1)").waitFor(wait);
  await led.getByText("output").waitFor(wait);
  await gp15.getByText("input, pull-up").waitFor(wait);
  await gp15.getByText("both edge, 5 ms debounce").waitFor(wait);

  // Pressing the button: the input's level, the on/off value and the count follow live.
  sim.setInput(15, 0);
  await gp15.getByText("Low (0)").waitFor(wait);
  await page.getByTestId("state-button").getByText("On").waitFor(wait);
  await page.getByTestId("state-presses").getByText("1").waitFor(wait);
  sim.setInput(15, null);
  await gp15.getByText("High (1)").waitFor(wait);
  await page.getByTestId("state-button").getByText("Off").waitFor(wait);
  sim.setInput(15, 0);
  await page.getByTestId("state-presses").getByText("2").waitFor(wait);

  // The chart of the on/off value reads On/Off on its value axis and has a time axis.
  await page.getByRole("button", { name: "Chart the history of Button" }).click();
  const chart = page.locator(".history figure");
  await page.getByRole("heading", { name: "History of Button" }).waitFor(wait);
  // The heading changes first; the figure follows once the history has loaded.
  await page.locator('.history figure[data-kind="boolean"]').waitFor(wait);
  await chart.locator(".chart-axis", { hasText: "On" }).first().waitFor(wait);
  await chart.locator(".chart-axis", { hasText: "Off" }).first().waitFor(wait);
  const times = await chart.locator(".chart-time").allTextContents();
  assert.ok(times.length >= 1 && times.every((x) => /^\d\d:\d\d:\d\d$/.test(x)), `time labels: ${times}`);
  await chart.locator(".sparkline-caption", { hasText: "latest On" }).waitFor(wait);

  // A count reads in whole numbers.
  await page.getByRole("button", { name: "Chart the history of Presses" }).click();
  await page.getByRole("heading", { name: "History of Presses" }).waitFor(wait);
  await page.locator('.history figure[data-kind="count"]').waitFor(wait);
  await chart.locator(".sparkline-caption", { hasText: "latest 2" }).waitFor(wait);
  const values = await chart.locator(".chart-axis:not(.chart-time)").allTextContents();
  assert.ok(
    values.every((v) => /^\d+$/.test(v)),
    `whole numbers on the value axis: ${values}`,
  );
  await shot(page, "device-pins-chart");

  // A raw command and its answer; the pins follow.
  const commands = page.getByRole("region", { name: "Send a command to the board" });
  await commands.getByLabel("Command").selectOption("gpio_read");
  await commands.getByLabel("Arguments (JSON)").fill('{ "pin": 15 }');
  await commands.getByRole("button", { name: "Send command" }).click();
  await commands.getByText('gpio_read answered: {"value":0}').waitFor(wait);
  await commands.getByLabel("Command").selectOption("gpio_write");
  await commands.getByLabel("Arguments (JSON)").fill('{ "pin": "LED", "value": 0 }');
  await commands.getByRole("button", { name: "Send command" }).click();
  await commands.getByText("gpio_write answered: null").waitFor(wait);
  await led.getByText("Low (0)").waitFor(wait);
  assert.equal(sim.led, 0, "the board's LED is off");

  // Arguments the protocol refuses are said at the field, and nothing is sent.
  sim.clearCommands();
  await commands.getByLabel("Arguments (JSON)").fill('{ "pin": "LED", "value": 7 }');
  await commands.getByRole("button", { name: "Send command" }).click();
  await commands.getByText(/value: /).waitFor(wait);
  assert.equal(sim.commandsOf("gpio_write").length, 0);
  await shot(page, "device-command");

  // Offline: no pins are claimed.
  await sim.stop();
  await page.getByText("The board is offline").waitFor(wait);
});
