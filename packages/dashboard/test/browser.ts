// What the device page's browser tests share: Debian's Chromium driven by playwright-core, a real
// server in this process, and a page signed in as a fresh admin.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, type TestContext } from "node:test";
import { fileURLToPath } from "node:url";
import { SdkClient } from "@sdk/client";
import { createTestServer } from "@sdk/test-helpers";
import { type Browser, chromium, type Page } from "playwright-core";
import { ensureBuilt } from "../ensure-built.ts";

const screenshots = fileURLToPath(new URL("../test-results/", import.meta.url));
const chromiumPath = "/usr/bin/chromium";
export const wait = { timeout: 10_000 };

let browser: Browser | undefined;

/** Launches Chromium once per test file (call at the top level of the file). */
export function useBrowser(): void {
  before(async () => {
    if (!fs.existsSync(chromiumPath)) return;
    assert.ok(ensureBuilt(), "the dashboard build failed");
    fs.mkdirSync(screenshots, { recursive: true });
    browser = await chromium.launch({
      executablePath: chromiumPath,
      headless: true,
      args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"],
    });
  });
  after(async () => {
    await browser?.close();
  });
}

/** Skips with a visible message without Chromium, except in CI, where that is a failure. */
export function needBrowser(t: TestContext): Browser | undefined {
  if (browser) return browser;
  const message = `${chromiumPath} is missing: install Debian's chromium package to run the dashboard browser tests`;
  if (process.env.CI) assert.fail(message);
  t.skip(message);
  return undefined;
}

/** Runs cleanups when the test ends, last registered first (page, then server, then its data). */
function cleanups(t: TestContext) {
  const list: (() => unknown)[] = [];
  t.after(async () => {
    for (const run of list.reverse()) await run();
  });
  return (cleanup: () => unknown) => list.push(cleanup);
}

/**
 * A real server (its own data dir), an admin with an API client, and a browser page signed in as
 * that admin whose console errors and page errors fail the test.
 */
export async function signedInPage(t: TestContext, b: Browser, env: Record<string, string> = {}) {
  const onEnd = cleanups(t);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "sdk-dashboard-"));
  onEnd(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const server = await createTestServer(t, { dataDir, env });
  onEnd(() => server.close());
  const url = await server.listen();
  const context = await b.newContext({ viewport: { width: 1280, height: 900 } });
  onEnd(() => context.close());
  const page = await context.newPage();
  const problems: string[] = [];
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  page.on("console", (message) => {
    if (message.type() === "error" && !/Failed to load resource/.test(message.text()))
      problems.push(`console: ${message.text()}`);
  });
  onEnd(() => assert.deepEqual(problems, [], "the page reported errors"));
  const anon = new SdkClient({ baseUrl: url });
  const email = "admin@example.com";
  const password = "correct horse battery";
  const auth = await anon.api.register({ body: { email, password, issueToken: true } });
  const client = new SdkClient({ baseUrl: url, token: auth.token!.token });
  await page.goto(url);
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "Projects", level: 1 }).waitFor(wait);
  return { server, url, host: new URL(url).host, page, client, onEnd };
}

export const shot = (page: Page, name: string) =>
  page.screenshot({ path: path.join(screenshots, `${name}.png`), fullPage: true });
