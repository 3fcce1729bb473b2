import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { SdkClient } from "@sdk/client";
import { SimulatedDevice } from "@sdk/simulator";
import { z } from "zod";
import { sdk, sdkLive, startServer, tempDir } from "./helpers.ts";

const password = "correct horse battery";

async function world(t: Parameters<typeof tempDir>[0]) {
  const { url } = await startServer(t);
  const anon = new SdkClient({ baseUrl: url });
  await anon.api.register({ body: { email: "maker@example.com", password } });
  const home = tempDir(t, "sdk-cli-home-");
  const work = tempDir(t, "sdk-cli-work-");
  const run = (
    args: string[],
    options: { cwd?: string; env?: Record<string, string>; input?: string } = {},
  ) => sdk(t, args, { home, cwd: options.cwd ?? work, env: options.env, input: options.input });
  return { url, home, work, run };
}

const WhoAmI = z.object({
  host: z.string(),
  source: z.enum(["SDK_TOKEN", "credentials"]),
  user: z.object({ email: z.string(), role: z.string() }),
});
const Status = z.object({
  host: z.string(),
  project: z.object({ id: z.string(), name: z.string() }),
  deployment: z.object({ version: z.number(), status: z.literal("active") }).nullable(),
  devices: z.array(z.object({ id: z.string(), status: z.enum(["online", "offline"]) })),
});
const EnvList = z.object({
  projectId: z.string(),
  valuesShown: z.literal(true),
  env: z.array(z.object({ name: z.string(), value: z.string() })),
});
const Deploy = z.object({
  ok: z.boolean(),
  deployment: z.object({ version: z.number(), status: z.string() }),
  homeAssistant: z.object({ enabled: z.boolean() }).nullable().optional(),
});
const LogLine = z.object({
  id: z.string(),
  at: z.string(),
  level: z.string(),
  source: z.string(),
  message: z.string(),
  deviceId: z.string(),
});

test("login → whoami → init → build → deploy → device → logs --tail --json → env set → status --json → logout", async (t) => {
  const w = await world(t);
  const login = await w.run(["login", "--host", w.url, "--email", "maker@example.com", "--password-stdin"], {
    input: `${password}\n`,
  });
  assert.equal(login.code, 0, login.stderr);
  const credentials = path.join(w.home, ".sdk", "credentials.json");
  assert.equal(fs.statSync(credentials).mode & 0o777, 0o600, "credentials are private");
  assert.ok(!fs.readFileSync(credentials, "utf8").includes(password), "the password is never saved");

  const who = await w.run(["whoami", "--json"]);
  assert.equal(who.code, 0);
  assert.equal(WhoAmI.parse(JSON.parse(who.stdout)).user.email, "maker@example.com");

  const init = await w.run(["init", "greenhouse"]);
  assert.equal(init.code, 0, init.stderr);
  const dir = path.join(w.work, "greenhouse");
  for (const file of [
    "AGENTS.md",
    ".cursor/rules/sdk.mdc",
    ".mcp.json",
    "README.md",
    "sdk.ts",
    "src/index.ts",
    "package.json",
    "tsconfig.json",
    ".gitignore",
  ]) {
    assert.ok(fs.existsSync(path.join(dir, file)), file);
  }
  // Nothing the project runs is fetched by a name we do not own: the installed sdk-mcp, no @sdk/* package.
  assert.deepEqual(JSON.parse(fs.readFileSync(path.join(dir, ".mcp.json"), "utf8")).mcpServers.sdk, {
    command: "sdk-mcp",
    args: [],
  });
  const manifest = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8"));
  assert.equal(manifest.dependencies, undefined);
  assert.equal(manifest.devDependencies, undefined);
  assert.equal(manifest.scripts.deploy, "sdk deploy");
  for (const file of ["README.md", "AGENTS.md"]) {
    assert.doesNotMatch(fs.readFileSync(path.join(dir, file), "utf8"), /npx/, `${file} says \`sdk …\``);
  }
  assert.doesNotMatch(init.stdout, /npx|npm install/);
  assert.ok(
    fs.existsSync(path.join(dir, ".sdk/types/node_modules/@sdk/device/globals.d.ts")),
    "init writes the library's types for editors",
  );
  assert.match(fs.readFileSync(path.join(dir, ".gitignore"), "utf8"), /^\.sdk\/$/m);
  const projectId = /project: "(prj_[a-z2-7]{20})"/.exec(
    fs.readFileSync(path.join(dir, "sdk.ts"), "utf8"),
  )?.[1];
  assert.ok(projectId, "sdk.ts is linked to a new server project");

  // the example script logs the env var, so the test can see the new value arrive
  fs.writeFileSync(
    path.join(dir, "src", "index.ts"),
    `import { DeviceScript } from "@sdk/device";
export default class Main extends DeviceScript<{ MODE: string }> {
  onDeviceConnect() { console.log("hello from the script"); }
  onMessage(msg) { console.log("mode is " + (this.env.MODE ?? "unset")); }
}
`,
  );
  const built = await w.run(["build"], { cwd: dir });
  assert.equal(built.code, 0, built.stderr);
  assert.match(built.stdout, /Built src\/index\.ts/);
  const again = await w.run(["build"], { cwd: dir });
  assert.match(again.stdout, /unchanged/, "an unchanged project is not rebuilt");

  const deployed = await w.run(["deploy", "--json"], { cwd: dir });
  assert.equal(deployed.code, 0, deployed.stderr);
  const deployment = Deploy.parse(JSON.parse(deployed.stdout));
  assert.equal(deployment.deployment.status, "active");
  assert.equal(deployment.homeAssistant?.enabled, false, "a server without MQTT_URL publishes nothing");

  const client = new SdkClient({
    baseUrl: w.url,
    token: JSON.parse(fs.readFileSync(credentials, "utf8")).hosts[w.url].token,
  });
  const { device, credentials: creds } = await client.api.createDevice({
    params: { projectId },
    body: { name: "bench", board: "pico_w" },
  });

  const sim = new SimulatedDevice({
    server: new URL(w.url).host,
    deviceId: creds.deviceId,
    secret: creds.secret,
    reconnect: false,
  });
  t.after(() => sim.stop());
  const tail2 = sdkLive(t, ["logs", "--tail", "--json"], { home: w.home, cwd: dir });
  await tail2.waitForOutput(
    (s) => s.stderr.includes("Streaming logs of 1 device"),
    10_000,
    "the stream to open",
  );
  sim.start();
  await tail2.waitForOutput(
    (s) => s.stdout.includes("hello from the script"),
    15_000,
    "the script's log line",
  );
  const lines = tail2.stdout().trim().split("\n");
  for (const line of lines) LogLine.parse(JSON.parse(line));
  const hello = lines.map((l) => JSON.parse(l)).find((l) => l.message === "hello from the script");
  assert.equal(hello.source, "script");
  assert.equal(hello.deviceId, device.id);

  const set = await w.run(["env", "set", "MODE"], { cwd: dir, input: "greenhouse-night\n" });
  assert.equal(set.code, 0, set.stderr);
  assert.doesNotMatch(set.stdout + set.stderr, /greenhouse-night/, "the value is never echoed");
  await client.api.sendDeviceMessage({
    params: { projectId, deviceId: device.id },
    body: { type: "what_mode" },
  });
  await tail2.waitForOutput(
    (s) => s.stdout.includes("mode is greenhouse-night"),
    10_000,
    "the new env value in the script",
  );
  tail2.child.kill("SIGINT");
  assert.equal((await tail2.exited).code, 0);

  const list = await w.run(["env", "list", "--json", "--show-values"], { cwd: dir });
  assert.deepEqual(
    EnvList.parse(JSON.parse(list.stdout)).env.map((e) => [e.name, e.value]),
    [["MODE", "greenhouse-night"]],
  );

  const status = await w.run(["status", "--json"], { cwd: dir });
  assert.equal(status.code, 0);
  const parsed = Status.parse(JSON.parse(status.stdout));
  assert.equal(parsed.deployment?.version, 1);
  assert.deepEqual(
    parsed.devices.map((d) => [d.id, d.status]),
    [[device.id, "online"]],
  );
  const human = await w.run(["status"], { cwd: dir });
  assert.match(human.stdout, /DEVICE\s+NAME\s+BOARD\s+STATUS/);
  assert.match(human.stdout, new RegExp(`${device.id}\\s+bench\\s+pico_w\\s+online`));

  const unset = await w.run(["env", "unset", "MODE", "--json"], { cwd: dir });
  assert.deepEqual(JSON.parse(unset.stdout), { projectId, name: "MODE", removed: true });

  const logout = await w.run(["logout"]);
  assert.equal(logout.code, 0);
  const after = await w.run(["whoami"]);
  assert.equal(after.code, 1);
  assert.match(after.stderr, /Not logged in/);
  // the token was revoked on the server too
  await assert.rejects(client.api.whoami(), (e: any) => e.code === "invalid_token");
});

test("SDK_TOKEN works without a credentials file; SDK_OUTPUT=json applies to every command", async (t) => {
  const w = await world(t);
  const anon = new SdkClient({ baseUrl: w.url });
  const { token } = await anon.api.login({
    body: { email: "maker@example.com", password, issueToken: true },
  });
  const env = { SDK_TOKEN: token!.token, SDK_HOST: w.url };
  const who = await w.run(["whoami", "--json"], { env });
  assert.equal(who.code, 0, who.stderr);
  assert.equal(WhoAmI.parse(JSON.parse(who.stdout)).source, "SDK_TOKEN");
  assert.ok(!fs.existsSync(path.join(w.home, ".sdk", "credentials.json")));

  const missingHost = await w.run(["whoami"], { env: { SDK_TOKEN: token!.token } });
  assert.equal(missingHost.code, 2, "a usage error");
  assert.match(missingHost.stderr, /SDK_HOST/);

  const project = await new SdkClient({ baseUrl: w.url, token: token!.token }).api.createProject({
    body: { name: "ci" },
  });
  const jsonEnv = { ...env, SDK_OUTPUT: "json" };
  for (const args of [
    ["whoami"],
    ["status", "--project", project.id],
    ["env", "list", "--project", project.id],
    ["env", "set", "A", "1", "--project", project.id],
    ["env", "unset", "A", "--project", project.id],
    ["logs", "--project", project.id],
    ["init", "proj", "--project", project.id],
    ["--version"],
  ]) {
    const result = await w.run(args, { env: jsonEnv });
    assert.equal(result.code, 0, `${args.join(" ")}: ${result.stderr}`);
    assert.doesNotThrow(
      () => JSON.parse(result.stdout),
      `${args.join(" ")} prints one JSON document:\n${result.stdout}`,
    );
  }
  const failure = await w.run(["status", "--project", "prj_aaaaaaaaaaaaaaaaaaaa"], { env: jsonEnv });
  assert.equal(failure.code, 1);
  const body = JSON.parse(failure.stdout);
  assert.equal(body.ok, false);
  assert.equal(body.error.code, "not_found");
  assert.match(body.error.docs, /\/docs\/errors#not_found$/);
});

test("a type error makes build and deploy fail with file:line and exit 1", async (t) => {
  const w = await world(t);
  const login = await w.run(["login", "--host", w.url, "--email", "maker@example.com", "--password-stdin"], {
    input: password,
  });
  assert.equal(login.code, 0);
  await w.run(["init", "broken"]);
  const dir = path.join(w.work, "broken");
  fs.writeFileSync(
    path.join(dir, "src", "index.ts"),
    `import { DeviceScript } from "@sdk/device";
export default class Main extends DeviceScript {
  onDeviceConnect() {
    const n: number = "not a number";
  }
}
`,
  );
  for (const command of ["build", "deploy"]) {
    const result = await w.run([command], { cwd: dir });
    assert.equal(result.code, 1, command);
    assert.match(
      result.stderr,
      /src\/index\.ts:4:11 - error TS2322: Type 'string' is not assignable to type 'number'/,
      command,
    );
  }
  const json = await w.run(["build", "--json"], { cwd: dir });
  const parsed = JSON.parse(json.stdout);
  assert.equal(parsed.ok, false);
  assert.deepEqual(
    parsed.diagnostics.map((d: { file: string; line: number }) => [d.file, d.line]),
    [["src/index.ts", 4]],
  );
});

test("usage errors exit 2 with a hint; server errors show code and docs; unreachable hosts are named", async (t) => {
  const w = await world(t);
  const unknown = await w.run(["frobnicate"]);
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /Unknown command "frobnicate"/);
  const badFlag = await w.run(["status", "--nope"]);
  assert.equal(badFlag.code, 2);
  assert.match(badFlag.stderr, /sdk status --help/);
  // (`login` without --host browses the network by mDNS: test/mdns.test.ts, in namespaces only.)
  const noHost = await w.run(["login", "--host"]);
  assert.equal(noHost.code, 2);
  assert.match(noHost.stderr, /--host <value>' argument missing/);

  const wrong = await w.run(["login", "--host", w.url, "--email", "maker@example.com", "--password-stdin"], {
    input: "wrong password",
  });
  assert.equal(wrong.code, 1);
  assert.match(wrong.stderr, /Invalid email or password \[invalid_credentials\]/);
  assert.match(wrong.stderr, /\/docs\/errors#invalid_credentials/);

  const down = await w.run(
    ["login", "--host", "http://127.0.0.1:9", "--email", "a@b.co", "--password-stdin"],
    { input: "x" },
  );
  assert.equal(down.code, 1);
  assert.match(down.stderr, /Could not reach http:\/\/127\.0\.0\.1:9/);

  const help = await w.run(["--help"]);
  assert.equal(help.code, 0);
  for (const c of [
    "login",
    "logout",
    "whoami",
    "init",
    "build",
    "deploy",
    "dev",
    "test",
    "status",
    "logs",
    "env list",
    "env set",
    "env unset",
    "flash",
  ]) {
    assert.match(help.stdout, new RegExp(`^  ${c}\\s`, "m"), c);
    const sub = await w.run([...c.split(" "), "--help"]);
    assert.equal(sub.code, 0, c);
    assert.match(sub.stdout, /^Usage: sdk /m, c);
  }
  const version = await w.run(["--version"]);
  assert.match(version.stdout.trim(), /^\d+\.\d+\.\d+$/);
});

test("init never overwrites existing files without asking", async (t) => {
  const w = await world(t);
  const dir = path.join(w.work, "mine");
  fs.mkdirSync(path.join(dir, "src"), { recursive: true });
  fs.writeFileSync(path.join(dir, "src", "index.ts"), "// my own work\n");
  const result = await w.run(["init", "mine", "--no-link", "--json"]);
  assert.equal(result.code, 0, result.stderr);
  const parsed = JSON.parse(result.stdout);
  assert.deepEqual(parsed.kept, ["src/index.ts"]);
  assert.equal(fs.readFileSync(path.join(dir, "src", "index.ts"), "utf8"), "// my own work\n");
  assert.ok(parsed.written.includes("sdk.ts"));
  // The example recording is a session of the template's script, not of this one: not written.
  assert.ok(!parsed.written.includes("test/recordings/example.jsonl"), parsed.written.join(", "));
  assert.equal(fs.existsSync(path.join(dir, "test", "recordings", "example.jsonl")), false);
  const again = await w.run(["init", "mine", "--no-link"]);
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.stdout, /example\.jsonl not written: .*src\/index\.ts/);
});
