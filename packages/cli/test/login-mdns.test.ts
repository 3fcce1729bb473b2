// `sdk login` without --host, for real: servers advertise by mDNS in one network namespace, the CLI
// browses from another, joined by a veth pair. Multicast never leaves the two namespaces.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { type TestContext, test } from "node:test";
import { fileURLToPath } from "node:url";
import { type Child, runNode, spawnNode, tempDir, within } from "@sdk/test-helpers";
import { sdkBin } from "./helpers.ts";

/** The CLI's package: the browse script below resolves bonjour-service from here, as the CLI does. */
const cliDir = fileURLToPath(new URL("..", import.meta.url));
const serverMain = fileURLToPath(import.meta.resolve("@sdk/server/main"));
const ipTool = ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"].find((p) => fs.existsSync(p));
const password = "correct horse battery";

/** Two namespaces joined by a veth pair, with a multicast route on each side; removed at the end. */
function namespaces(t: TestContext): { server: string; client: string; serverIp: string } | string {
  if (process.getuid?.() !== 0) return "network namespaces need root";
  if (!ipTool) return "the ip tool (iproute2) is not installed";
  const id = `${process.pid % 100_000}`;
  const [server, client] = [`sdk-mdns-${id}-s`, `sdk-mdns-${id}-c`];
  const [vs, vc] = [`sdkm${id}s`, `sdkm${id}c`];
  const ip = (...args: string[]) => execFileSync(ipTool, args, { stdio: "pipe", timeout: 10_000 });
  try {
    ip("netns", "add", server);
  } catch (error) {
    return `cannot create a network namespace (${(error as Error).message.split("\n")[0]})`;
  }
  t.after(() => {
    for (const ns of [server, client]) {
      try {
        ip("netns", "del", ns); // the veth pair goes with its namespaces
      } catch {}
    }
  });
  const subnet = `10.77.${(process.pid % 250) + 1}`;
  ip("netns", "add", client);
  ip("link", "add", vs, "type", "veth", "peer", "name", vc);
  ip("link", "set", vs, "netns", server);
  ip("link", "set", vc, "netns", client);
  for (const [ns, dev, host] of [
    [server, vs, 1],
    [client, vc, 2],
  ] as const) {
    ip("-n", ns, "addr", "add", `${subnet}.${host}/24`, "dev", dev);
    ip("-n", ns, "link", "set", "lo", "up");
    ip("-n", ns, "link", "set", dev, "up");
    // No default route in a fresh namespace: multicast (224.0.0.251) needs one of its own.
    ip("-n", ns, "route", "add", "224.0.0.0/4", "dev", dev);
  }
  return { server, client, serverIp: `${subnet}.1` };
}

const inNs = (ns: string) => [ipTool!, "netns", "exec", ns];

async function startServer(t: TestContext, ns: string, port: number, name: string): Promise<Child> {
  const server = spawnNode(t, {
    via: inNs(ns),
    args: [serverMain],
    cwd: path.dirname(path.dirname(serverMain)),
    env: {
      PATH: process.env.PATH ?? "",
      DATA_DIR: tempDir(t, "sdk-mdns-data-"),
      PORT: String(port),
      HOST: "0.0.0.0",
      MDNS: "true",
      MDNS_NAME: name,
      ALLOW_REGISTRATION: "true",
      LOG_FORMAT: "json",
    },
  });
  await server.waitForOutput(({ stdout }) => stdout.includes("listening on"), 20_000, `${name} listening`);
  assert.match(
    server.stdout(),
    new RegExp(`mDNS: advertising \\\\"${name}\\\\" as _sdk._tcp on port ${port}`),
  );
  return server;
}

/**
 * `sdk login` on a pseudo-terminal (script(1) makes one and copies our pipe to it) with two servers
 * answering: chooses the second listed, then types the password. Returns the URLs listed and the output.
 */
async function loginOnTerminal(t: TestContext, ns: string, home: string) {
  const command = [process.execPath, sdkBin, "login", "--email", "maker@example.com"]
    .map((a) => `'${a}'`)
    .join(" ");
  const login = spawnNode(t, {
    via: inNs(ns),
    cwd: cliDir,
    env: { PATH: process.env.PATH ?? "", HOME: home, TERM: "dumb" },
    openStdin: true,
    args: [
      "-e",
      `process.exit(require("node:child_process").spawnSync("script", ["-qfec", ${JSON.stringify(command)}, "/dev/null"], { stdio: "inherit" }).status ?? 1)`,
    ],
  });
  await login.waitForOutput(
    (o) => /Which one\? \[1-2\]: /.test(o.stdout),
    15_000,
    "the question which server",
  );
  const listed = [1, 2].map((n) => new RegExp(` {2}${n}\\) .*?(http://\\S+)`).exec(login.stdout())?.[1]);
  assert.ok(listed[0] && listed[1], `two servers listed: ${login.stdout()}`);
  login.child.stdin!.write("2\n");
  await login.waitForOutput((o) => /Password: /.test(o.stdout), 10_000, "the password question");
  login.child.stdin!.write(`${password}\n`);
  const exit = await within(login.exited, 20_000, "sdk login on a terminal to finish");
  assert.equal(exit.code, 0, login.stdout());
  assert.ok(!login.stdout().includes(password), "the password is not echoed");
  return { listed: listed as string[], output: login.stdout() };
}

test("sdk login without --host finds the server by mDNS, lists several, and sees the goodbye", async (t) => {
  const net = namespaces(t);
  if (typeof net === "string") {
    if (process.env.CI) assert.fail(`mDNS test cannot run in CI: ${net}`);
    t.skip(`mDNS login test skipped: ${net}`);
    return;
  }
  const home = tempDir(t, "sdk-mdns-home-");
  const run = (args: string[], input?: string, timeoutMs = 20_000) =>
    runNode(t, {
      via: inNs(net.client),
      args,
      cwd: cliDir,
      env: { PATH: process.env.PATH ?? "", HOME: home },
      input,
      timeoutMs,
    });
  const login = (...extra: string[]) =>
    run([sdkBin, "login", "--email", "maker@example.com", "--password-stdin", ...extra], `${password}\n`);

  const first = await startServer(t, net.server, 8080, "Garage sdk");
  const url = `http://${net.serverIp}:8080`;
  const register = async (server: string) => {
    const registered = await run([
      "--input-type=module",
      "-e",
      `const r = await fetch(${JSON.stringify(`${server}/v1/auth/register`)}, { method: "POST", headers: { "content-type": "application/json" }, body: ${JSON.stringify(JSON.stringify({ email: "maker@example.com", password }))} }); process.exit(r.status === 201 ? 0 : 1);`,
    ]);
    assert.equal(registered.code, 0, `register on ${server} from the other namespace: ${registered.stderr}`);
  };
  await register(url);

  // A browser in the client namespace, with the same library, reports services coming and going.
  const browser = spawnNode(t, {
    via: inNs(net.client),
    cwd: cliDir,
    env: { PATH: process.env.PATH ?? "" },
    args: [
      "--input-type=module",
      "-e",
      `import { Bonjour } from "bonjour-service";
       const browser = new Bonjour().find({ type: "sdk" });
       for (const event of ["up", "down"]) browser.on(event, (s) => console.log(JSON.stringify({ event, name: s.name, at: Date.now() })));`,
    ],
  });
  const seen = (event: string, name: string) => (o: { stdout: string }) =>
    o.stdout.includes(JSON.stringify({ event, name }).slice(0, -1));
  await browser.waitForOutput(seen("up", "Garage sdk"), 10_000, "the browser to see Garage sdk");

  // One server: found and logged in, no prompt (no terminal here).
  const one = await login("--json");
  assert.equal(one.code, 0, one.stdout + one.stderr);
  assert.equal(JSON.parse(one.stdout).host, url);
  const saved = JSON.parse(fs.readFileSync(path.join(home, ".sdk", "credentials.json"), "utf8"));
  assert.ok(JSON.stringify(saved).includes(url), "the credentials file names the discovered server");
  const text = await login();
  assert.equal(text.code, 0, text.stderr);
  assert.match(text.stderr, /Found Garage sdk {2}http:\/\/10\.77\.\d+\.1:8080 {2}\(version \d+\.\d+\.\d+/);

  // Two servers: no terminal and --json never prompt; the answer is an error listing both.
  const second = await startServer(t, net.server, 8081, "Shed sdk");
  await browser.waitForOutput(seen("up", "Shed sdk"), 10_000, "the browser to see Shed sdk");
  await register(`http://${net.serverIp}:8081`); // either may be listed second
  const several = await login("--json");
  assert.equal(several.code, 1);
  const answer = JSON.parse(several.stdout);
  assert.equal(answer.error.code, "several_servers");
  assert.deepEqual(answer.servers.map((s: { name: string; url: string }) => [s.name, s.url]).sort(), [
    ["Garage sdk", url],
    ["Shed sdk", `http://${net.serverIp}:8081`],
  ]);
  const severalText = await login();
  assert.equal(severalText.code, 1);
  assert.match(severalText.stderr, /2 sdk servers answered; name one with --host <url>:\n {2}1\) /);
  assert.match(severalText.stderr, /Garage sdk/);
  assert.match(severalText.stderr, /Shed sdk/);

  // On a terminal: asked which one; the second chosen is the one logged in to and saved.
  const credentials = path.join(home, ".sdk", "credentials.json");
  fs.rmSync(credentials);
  const { listed, output } = await loginOnTerminal(t, net.client, home);
  t.diagnostic(`listed ${listed.join(", ")}; chose the second`);
  assert.deepEqual([...listed].sort(), [url, `http://${net.serverIp}:8081`]);
  const shownAt = output.indexOf(`Logging in to ${listed[1]}: your password goes to this server`);
  assert.ok(
    shownAt >= 0 && shownAt < output.indexOf("Password: "),
    `the URL shown before the password: ${output}`,
  );
  const afterChoice = fs.readFileSync(credentials, "utf8");
  assert.ok(afterChoice.includes(listed[1]!), `the credentials name the second server: ${afterChoice}`);
  assert.ok(!afterChoice.includes(listed[0]!), `and not the first: ${afterChoice}`);

  // SIGTERM: the goodbye (TTL 0) removes the service at once; its PTR record would live 8 hours.
  const stoppedAt = Date.now();
  assert.deepEqual(await first.stop("SIGTERM", 10_000), { code: 0, signal: null });
  await browser.waitForOutput(seen("down", "Garage sdk"), 5_000, "the goodbye of Garage sdk");
  const down = JSON.parse(
    browser
      .stdout()
      .split("\n")
      .find((l) => l.includes('"down"'))!,
  );
  assert.ok(down.at - stoppedAt < 5_000, `removed ${down.at - stoppedAt} ms after SIGTERM`);
  assert.deepEqual(await second.stop("SIGTERM", 10_000), { code: 0, signal: null });
  await browser.waitForOutput(seen("down", "Shed sdk"), 5_000, "the goodbye of Shed sdk");

  // None left: a clear error that says what to do.
  const none = await login();
  assert.equal(none.code, 1);
  assert.match(none.stderr, /No sdk server answered on the local network within 3 s/);
  assert.match(none.stderr, /sdk login --host http:\/\/<server>:8080/);
  assert.match(none.stderr, /MDNS=false/);
  await within(browser.stop("SIGTERM"), 10_000, "the browser to exit");
});
