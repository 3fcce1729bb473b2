// The one-time sign-in link `sdk dev` prints, opened in Debian's Chromium (never a downloaded
// browser) with playwright-core.
import assert from "node:assert/strict";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { runNode } from "@sdk/test-helpers";
import { needBrowser, openPage, useBrowser, wait } from "@sdk/test-helpers/browser";
import { sdk, sdkLive, tempDir } from "./helpers.ts";

useBrowser();

test("sdk dev prints a sign-in link that opens a signed-in dashboard once", async (t) => {
  const browser = needBrowser(t);
  if (!browser) return;
  // The dashboard's build tool, run as its README says: it builds only when dist/ is stale.
  const ensureBuilt = fileURLToPath(
    new URL("ensure-built.ts", import.meta.resolve("@sdk/dashboard/package.json")),
  );
  const built = await runNode(t, {
    args: [ensureBuilt],
    env: { PATH: process.env.PATH ?? "" },
    timeoutMs: 120_000,
  });
  assert.ok(
    built.code === 0 && !/build failed/.test(built.stderr),
    `the dashboard build failed: ${built.stderr}`,
  );
  const home = tempDir(t, "sdk-devlink-home-");
  const work = tempDir(t, "sdk-devlink-work-");
  assert.equal((await sdk(t, ["init", "porch", "--no-link"], { home, cwd: work })).code, 0);
  const dev = sdkLive(t, ["dev", "--port", "0"], {
    home,
    cwd: path.join(work, "porch"),
    env: { TMPDIR: tempDir(t, "sdk-devlink-tmp-") },
  });
  const printed = /Dashboard, signed in: (http:\/\/127\.0\.0\.1:\d+\/sign-in-link\?token=\S+)/;
  await dev.waitForOutput((s) => printed.test(s.stdout), 30_000, "the sign-in link");
  const link = printed.exec(dev.stdout())![1]!;
  const origin = new URL(link).origin;

  const { context: first, page } = await openPage(t, browser);
  await page.goto(link);
  await page.getByRole("heading", { name: "Projects", level: 1 }).waitFor(wait);
  await page.getByRole("link", { name: "porch" }).waitFor(wait);
  assert.equal(new URL(page.url()).pathname, "/", "the token is not left in the address bar");
  const cookies = await first.cookies(origin);
  const session = cookies.find((c) => c.name === "sdk_session");
  assert.ok(session?.httpOnly, "the normal session cookie, httpOnly");

  // A second use, from another browser, signs nobody in.
  const { context: second, page: again } = await openPage(t, browser);
  const response = await again.goto(link);
  assert.equal(response?.status(), 401);
  await again.getByRole("heading", { name: "This sign-in link cannot be used" }).waitFor(wait);
  assert.deepEqual(
    (await second.cookies(origin)).filter((c) => c.name === "sdk_session"),
    [],
    "no session for a used link",
  );
  await again.goto(origin);
  await again.getByRole("heading", { name: "Sign in" }).waitFor(wait);

  // A forged token (the signature of another key) is refused the same way.
  const [payload] = new URL(link).searchParams.get("token")!.split(".");
  const forged = await again.goto(`${origin}/sign-in-link?token=${payload}.${"A".repeat(43)}`);
  assert.equal(forged?.status(), 401);

  // The pages close before the server stops, so nothing they log about a vanished server counts.
  await first.close();
  await second.close();
  dev.child.kill("SIGINT");
  assert.equal((await dev.exited).code, 0, dev.stderr());
});
