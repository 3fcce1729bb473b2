// Browser tests: Debian's Chromium (never a downloaded browser) driven by playwright-core. One
// browser per test file, a visible skip where Chromium is missing (a failure in CI), pages whose
// console and page errors fail the test, and cleanups that run in the order the test needs.
import assert from "node:assert/strict";
import fs from "node:fs";
import { after, before, type TestContext } from "node:test";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";

const chromiumPath = "/usr/bin/chromium";

/** What every `waitFor` of a browser test gets: generous, for a busy machine. */
export const wait = { timeout: 15_000 };

let browser: Browser | undefined;

/**
 * Launches Chromium once for the test file (call at its top level); `prepare` runs first, only
 * when Chromium is there (the dashboard's tests build the dashboard in it).
 */
export function useBrowser(prepare?: () => unknown): void {
  before(async () => {
    if (!fs.existsSync(chromiumPath)) return;
    await prepare?.();
    browser = await chromium.launch({
      executablePath: chromiumPath,
      headless: true,
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
      ],
    });
  });
  after(async () => {
    await browser?.close();
  });
}

/** The file's browser; without Chromium the test is skipped with a message (failed in CI). */
export function needBrowser(t: TestContext): Browser | undefined {
  if (browser) return browser;
  const message = `${chromiumPath} is missing: install Debian's chromium package to run the browser tests`;
  if (process.env.CI) assert.fail(message);
  t.skip(message);
  return undefined;
}

const cleanups = new WeakMap<TestContext, (() => unknown)[]>();

/**
 * Runs `cleanup` when the test ends, last registered first (node:test runs `t.after` hooks in
 * registration order): a page closes before the server it talks to, and the server before its
 * data directory is removed, so nothing sees a half-stopped peer. Every cleanup runs; the first
 * failure is the test's.
 */
export function onEnd(t: TestContext, cleanup: () => unknown): void {
  let list = cleanups.get(t);
  if (!list) {
    const stack: (() => unknown)[] = [];
    list = stack;
    cleanups.set(t, stack);
    t.after(async () => {
      const failures: unknown[] = [];
      for (const run of stack.reverse())
        await Promise.resolve()
          .then(run)
          .catch((e) => failures.push(e));
      if (failures.length > 0) throw failures[0];
    });
  }
  list.push(cleanup);
}

/** A fresh browser context and page; console errors (CSP violations among them) and page errors fail the test. */
export async function openPage(
  t: TestContext,
  b: Browser,
  width = 1280,
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await b.newContext({ viewport: { width, height: 900 } });
  onEnd(t, () => context.close());
  const page = await context.newPage();
  const problems: string[] = [];
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  page.on("console", (message) => {
    // The browser logs failed requests (the 401 of "who am I?" before sign-in) as errors; those are expected.
    if (message.type() === "error" && !/Failed to load resource/.test(message.text()))
      problems.push(`console: ${message.text()}`);
  });
  onEnd(t, () => assert.deepEqual(problems, [], "the page reported errors"));
  return { context, page };
}
