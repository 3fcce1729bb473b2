import assert from "node:assert/strict";
import path from "node:path";
import { test } from "node:test";
import { SdkClient } from "@sdk/client";
import { sdk, startServer, tempDir } from "./helpers.ts";

const password = "correct horse battery";

test("env list masks values unless --show-values, in the table and in --json", async (t) => {
  const { url } = await startServer(t);
  await new SdkClient({ baseUrl: url }).api.register({ body: { email: "maker@example.com", password } });
  const home = tempDir(t, "sdk-env-home-");
  const work = tempDir(t, "sdk-env-work-");
  const run = (args: string[], cwd = work, input?: string) => sdk(t, args, { home, cwd, input });
  const login = await run(
    ["login", "--host", url, "--email", "maker@example.com", "--password-stdin"],
    work,
    `${password}\n`,
  );
  assert.equal(login.code, 0, login.stderr);
  assert.equal((await run(["init", "vault"])).code, 0);
  const dir = path.join(work, "vault");
  const secret = "hunter2-do-not-show";
  assert.equal((await run(["env", "set", "API_KEY"], dir, `${secret}\n`)).code, 0);
  assert.equal((await run(["env", "set", "EMPTY", ""], dir)).code, 0);

  const table = await run(["env", "list"], dir);
  assert.equal(table.code, 0, table.stderr);
  assert.doesNotMatch(table.stdout + table.stderr, new RegExp(secret), "the table hides the value");
  assert.match(table.stdout, /API_KEY\s+••••••••/);
  assert.match(table.stdout, /--show-values/, "the table says how to see the values");

  const json = await run(["env", "list", "--json"], dir);
  assert.equal(json.code, 0, json.stderr);
  assert.doesNotMatch(json.stdout, new RegExp(secret), "--json hides the value too");
  const masked = JSON.parse(json.stdout);
  assert.equal(masked.valuesShown, false);
  assert.deepEqual(
    masked.env.map((e: Record<string, unknown>) => [e.name, "value" in e]),
    [
      ["API_KEY", false],
      ["EMPTY", false],
    ],
  );

  const shown = await run(["env", "list", "--show-values"], dir);
  assert.match(shown.stdout, new RegExp(`API_KEY\\s+${secret}`));
  const shownJson = JSON.parse((await run(["env", "list", "--json", "--show-values"], dir)).stdout);
  assert.equal(shownJson.valuesShown, true);
  assert.deepEqual(
    shownJson.env.map((e: { name: string; value: string }) => [e.name, e.value]),
    [
      ["API_KEY", secret],
      ["EMPTY", ""],
    ],
  );

  const help = await run(["env", "list", "--help"]);
  assert.match(help.stdout, /--show-values/);
  assert.match(help.stdout, /masked|hidden/i);
});
