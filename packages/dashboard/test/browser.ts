// What the dashboard's browser tests share, on top of @sdk/test-helpers/browser (Debian's Chromium,
// pages whose errors fail the test, ordered cleanups): the built dashboard, a real server in this
// process, signing in, and screenshots.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { TestContext } from "node:test";
import { fileURLToPath } from "node:url";
import { SdkClient } from "@sdk/client";
import { createTestServer } from "@sdk/test-helpers";
import { onEnd, openPage, useBrowser, wait } from "@sdk/test-helpers/browser";
import type { Browser, Page } from "playwright-core";
import { ensureBuilt } from "../ensure-built.ts";

export { needBrowser, onEnd, openPage, wait } from "@sdk/test-helpers/browser";

const screenshots = fileURLToPath(new URL("../test-results/", import.meta.url));

/** Launches Chromium once per test file, after building the dashboard (call at the top level). */
export function useDashboardBrowser(): void {
  useBrowser(() => {
    assert.ok(ensureBuilt(), "the dashboard build failed");
    fs.mkdirSync(screenshots, { recursive: true });
  });
}

/** A real server in this process with its own data dir (removed after the server is closed). */
export async function startServer(t: TestContext, env: Record<string, string> = {}) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "sdk-dashboard-"));
  onEnd(t, () => fs.rmSync(dataDir, { recursive: true, force: true }));
  const server = await createTestServer(t, { dataDir, env });
  onEnd(t, () => server.close());
  const url = await server.listen();
  return { server, url, host: new URL(url).host };
}

/** Signs in on the dashboard's login form and waits for the project list. */
export async function signIn(page: Page, url: string, email: string, password: string): Promise<void> {
  await page.goto(`${url}/login`);
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "Projects", level: 1 }).waitFor(wait);
}

/**
 * A real server, an admin with an API client, and a browser page signed in as that admin whose
 * console errors and page errors fail the test.
 */
export async function signedInPage(t: TestContext, b: Browser, env: Record<string, string> = {}) {
  const { server, url, host } = await startServer(t, env);
  const { page } = await openPage(t, b);
  const email = "admin@example.com";
  const password = "correct horse battery";
  const auth = await new SdkClient({ baseUrl: url }).api.register({
    body: { email, password, issueToken: true },
  });
  const client = new SdkClient({ baseUrl: url, token: auth.token!.token });
  await signIn(page, url, email, password);
  return { server, url, host, page, client };
}

export const shot = (page: Page, name: string) =>
  page.screenshot({ path: path.join(screenshots, `${name}.png`), fullPage: true });
