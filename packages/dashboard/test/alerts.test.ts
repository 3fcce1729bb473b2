// The project page's Alerts section in Chromium: add a rule and a webhook (its secret shown once),
// press "Send a test", and see the signed delivery arrive at a real receiver and in the log.
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { test } from "node:test";
import { webhookReceiver } from "@sdk/test-helpers";
import { needBrowser, onEnd, shot, signedInPage, useDashboardBrowser, wait } from "./browser.ts";

useDashboardBrowser();

test("alerts section: add a webhook, send a test, see the delivery", async (t) => {
  const b = needBrowser(t);
  if (!b) return;
  const { received, hookUrl, close } = await webhookReceiver(200);
  onEnd(t, close);

  const s = await signedInPage(t, b, { WEBHOOK_ALLOW_PRIVATE: "loopback" });
  const { page } = s;
  const project = await s.client.api.createProject({ body: { name: "Greenhouse" } });
  await page.goto(`${s.url}/projects/${project.id}`);
  const alerts = page.getByRole("region", { name: "Alerts" });
  await alerts.getByText("No alert rules").waitFor(wait);

  const ruleForm = alerts.getByRole("form", { name: "Add a rule" });
  await ruleForm.getByLabel("Alert on").selectOption("device_offline");
  await ruleForm.getByLabel("Offline minutes").fill("15");
  await ruleForm.getByRole("button", { name: "Add rule" }).click();
  await alerts.getByText("A device offline for 15 min (then back online)").waitFor(wait);

  const hookForm = alerts.getByRole("form", { name: "Add a webhook" });
  await hookForm.getByLabel("Webhook URL").fill(hookUrl);
  await hookForm.getByLabel("Webhook name").fill("ops");
  await hookForm.getByRole("button", { name: "Add webhook" }).click();
  const secret = (await alerts.getByTestId("webhook-secret").textContent({ timeout: wait.timeout }))?.trim();
  assert.match(secret ?? "", /^whsec_/);

  await alerts.getByRole("button", { name: "Send a test to ops" }).click();
  await alerts.getByText("Delivered (200).").waitFor(wait);
  const row = alerts.getByTestId("delivery").first();
  await row.getByText("test", { exact: true }).waitFor(wait);
  await row.getByText("delivered").waitFor(wait);
  assert.equal(received.length, 1);
  assert.equal(
    received[0]!.signature,
    `sha256=${createHmac("sha256", secret!).update(`${received[0]!.timestamp}.${received[0]!.raw}`).digest("hex")}`,
  );
  await shot(page, "alerts-section");

  // Shown once: after a reload the secret is gone; the webhook stays.
  await page.reload();
  await alerts.getByText(hookUrl).waitFor(wait);
  assert.equal(await alerts.getByTestId("webhook-secret").count(), 0);
});
