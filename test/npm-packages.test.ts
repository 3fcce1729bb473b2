// The published packages, as a user gets them: `npm run pack`'s tarballs installed with npm into a
// fresh prefix and a fresh project outside the repository (third-party packages from the registry,
// through npm's cache), then the installed `sdk` and `sdk-mcp` against a real server.
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { type TestContext, test } from "node:test";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { SdkClient } from "@sdk/client";
import { startServerProcess, tempDir, within } from "@sdk/test-helpers";
import { type Packed, pack } from "../scripts/pack/main.ts";

const repoRoot = fileURLToPath(new URL("../", import.meta.url));
const tsc = path.join(repoRoot, "node_modules", "typescript", "bin", "tsc");
const password = "correct horse battery";

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end with exactly `env`; fails after `timeoutMs` (killing it). */
async function run(
  command: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; input?: string; timeoutMs?: number },
): Promise<Ran> {
  const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: "pipe" });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d) => {
    stdout += d;
  });
  child.stderr.on("data", (d) => {
    stderr += d;
  });
  child.stdin.end(options.input ?? "");
  const exited = new Promise<number | null>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", resolve);
  });
  try {
    const code = await within(exited, options.timeoutMs ?? 60_000, `${command} ${args.join(" ")}`);
    return { code, stdout, stderr };
  } catch (error) {
    child.kill("SIGKILL");
    throw new Error(`${(error as Error).message}\nstdout: ${stdout}\nstderr: ${stderr}`);
  }
}

function walk(dir: string, visit: (file: string, stat: fs.Stats) => void): void {
  for (const name of fs.readdirSync(dir)) {
    const file = path.join(dir, name);
    const stat = fs.lstatSync(file);
    visit(file, stat);
    if (stat.isDirectory()) walk(file, visit);
  }
}

/** No link into the repository, and none of our files is TypeScript Node would have to strip. */
function assertSelfContained(root: string): void {
  walk(root, (file, stat) => {
    if (stat.isSymbolicLink()) {
      const target = fs.realpathSync(file);
      assert.ok(!target.startsWith(repoRoot), `${file} links into the repository (${target})`);
    }
    const ours =
      /[/\\]@sdk[/\\]/.test(path.relative(root, file)) || !path.relative(root, file).includes("node_modules");
    if (ours && stat.isFile() && /\.(ts|mts|cts|tsx)$/.test(file)) {
      assert.match(file, /\.d\.ts$/, `${file} is TypeScript that Node would not run from node_modules`);
    }
  });
}

/** An installed Node.js older than the packages need, if this machine has one. */
function oldNode(): { path: string; version: string } | null {
  for (const candidate of ["/usr/bin/node", "/usr/local/bin/node"]) {
    if (!fs.existsSync(candidate) || fs.realpathSync(candidate) === fs.realpathSync(process.execPath))
      continue;
    const result = spawnSync(candidate, ["-p", "process.versions.node"], {
      encoding: "utf8",
      timeout: 10_000,
    });
    const version = result.stdout?.trim();
    const [major = 0, minor = 0] = (version ?? "").split(".").map(Number);
    if (result.status === 0 && (major < 22 || (major === 22 && minor < 18)))
      return { path: candidate, version };
  }
  return null;
}

function tarball(packed: Packed[], name: string): string {
  const found = packed.find((p) => p.name === name);
  assert.ok(found, `npm run pack wrote no tarball for ${name}`);
  return found.tarball;
}

test("npm run pack: @sdk/cli, @sdk/mcp and @sdk/device install and work outside the repository", {
  timeout: 240_000,
}, async (t: TestContext) => {
  const started = performance.now();
  const packed = pack();
  const packSeconds = (performance.now() - started) / 1000;
  for (const p of packed) {
    t.diagnostic(
      `${path.basename(p.tarball)}: ${(p.bytes / 1024).toFixed(0)} KB, bundles ${p.bundled.join(", ")}`,
    );
    for (const bundled of p.bundled) {
      assert.ok(!/test-helpers|conformance|firmware-host/.test(bundled), `${p.name} bundles ${bundled}`);
    }
  }
  t.diagnostic(`packed in ${packSeconds.toFixed(1)} s`);

  const prefix = tempDir(t, "sdk-npm-prefix-");
  const home = tempDir(t, "sdk-npm-home-");
  const work = tempDir(t, "sdk-npm-work-");
  // npm runs with the caller's own configuration (registry, cache); only the prefix is new.
  const npmEnv = {
    ...process.env,
    PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH}`,
  };
  const installStarted = performance.now();
  const install = await run(
    "npm",
    [
      "install",
      "--global",
      "--prefix",
      prefix,
      "--prefer-offline",
      "--no-audit",
      "--no-fund",
      tarball(packed, "@sdk/cli"),
      tarball(packed, "@sdk/mcp"),
    ],
    { cwd: work, env: npmEnv, timeoutMs: 150_000 },
  );
  assert.equal(install.code, 0, `npm install -g failed:\n${install.stderr}`);
  t.diagnostic(
    `npm install -g @sdk/cli @sdk/mcp: ${((performance.now() - installStarted) / 1000).toFixed(1)} s`,
  );
  const installed = path.join(prefix, "lib", "node_modules");
  assertSelfContained(path.join(installed, "@sdk"));

  // What a user's shell has: the prefix's bin first, then a current Node; HOME is theirs alone.
  const userEnv = {
    PATH: [path.join(prefix, "bin"), path.dirname(process.execPath), "/usr/bin", "/bin"].join(path.delimiter),
    HOME: home,
  };
  const sdk = (args: string[], options: { cwd?: string; input?: string; timeoutMs?: number } = {}) =>
    run("sdk", args, {
      cwd: options.cwd ?? work,
      env: userEnv,
      input: options.input,
      timeoutMs: options.timeoutMs,
    });

  await t.test("sdk --version", async () => {
    const version = await sdk(["--version"]);
    assert.equal(version.code, 0, version.stderr);
    const manifest = JSON.parse(fs.readFileSync(path.join(installed, "@sdk", "cli", "package.json"), "utf8"));
    assert.equal(version.stdout.trim(), manifest.version);
  });

  const server = await startServerProcess(t, tempDir(t, "sdk-npm-server-"), { LOG_LEVEL: "warn" });
  const anon = new SdkClient({ baseUrl: server.url });
  await anon.api.register({ body: { email: "maker@example.com", password } });
  const dir = path.join(work, "greenhouse");
  let projectId = "";

  await t.test("sdk login, init, build; the project type-checks with plain tsc; sdk deploy", async () => {
    const login = await sdk(
      ["login", "--host", server.url, "--email", "maker@example.com", "--password-stdin"],
      {
        input: `${password}\n`,
      },
    );
    assert.equal(login.code, 0, login.stderr);

    const init = await sdk(["init", "greenhouse"]);
    assert.equal(init.code, 0, init.stderr);
    projectId =
      /project: "(prj_[a-z2-7]+)"/.exec(fs.readFileSync(path.join(dir, "sdk.ts"), "utf8"))?.[1] ?? "";
    assert.ok(projectId, "sdk.ts is linked to a new server project");
    const manifest = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8"));
    assert.deepEqual(
      Object.keys({ ...manifest.dependencies, ...manifest.devDependencies }),
      [],
      "the project needs no package",
    );
    assert.equal(
      JSON.parse(fs.readFileSync(path.join(dir, ".mcp.json"), "utf8")).mcpServers.sdk.command,
      "sdk-mcp",
    );

    const build = await sdk(["build"], { cwd: dir });
    assert.equal(build.code, 0, `${build.stdout}${build.stderr}`);
    assert.ok(fs.existsSync(path.join(dir, ".sdk", "build", "script.js")));

    // The editor's view: the generated tsconfig.json with the compiled declarations sdk wrote.
    const check = await run(process.execPath, [tsc, "-p", ".", "--listFilesOnly"], {
      cwd: dir,
      env: userEnv,
    });
    assert.equal(check.code, 0, check.stdout);
    assert.match(check.stdout, /\.sdk\/types\/node_modules\/@sdk\/device\/src\/index\.d\.ts/);
    const typed = await run(process.execPath, [tsc, "-p", "."], { cwd: dir, env: userEnv });
    assert.equal(typed.code, 0, `tsc -p . in the generated project:\n${typed.stdout}`);

    const deploy = await sdk(["deploy", "--json"], { cwd: dir });
    assert.equal(deploy.code, 0, deploy.stderr);
    const { token } = await anon.api.login({
      body: { email: "maker@example.com", password, issueToken: true },
    });
    const client = new SdkClient({ baseUrl: server.url, token: token!.token });
    const deployments = await client.api.listDeployments({ params: { projectId } });
    assert.equal(deployments[0]?.status, "active", "the deployment is live");
  });

  await t.test("sdk dev runs the bundled server (with the dashboard) and a simulated board", async (st) => {
    const env = { ...userEnv, TMPDIR: tempDir(t, "sdk-npm-dev-tmp-") };
    const dev = spawn("sdk", ["dev", "--port", "0"], { cwd: dir, env, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    dev.stdout.on("data", (d) => {
      out += d;
    });
    dev.stderr.on("data", (d) => {
      out += d;
    });
    const exited = new Promise<number | null>((resolve) => dev.on("close", resolve));
    st.after(() => {
      if (dev.exitCode === null) dev.kill("SIGKILL");
    });
    const seen = (pattern: RegExp, what: string) =>
      within(
        new Promise<RegExpExecArray>((resolve, reject) => {
          const check = () => {
            const match = pattern.exec(out);
            if (match) resolve(match);
          };
          dev.stdout.on("data", check);
          dev.stderr.on("data", check);
          dev.on("close", () => reject(new Error(`sdk dev exited before ${what}:\n${out}`)));
          check();
        }),
        60_000,
        `sdk dev: ${what} (output so far: ${out})`,
      );
    const url = (await seen(/running at (http:\/\/127\.0\.0\.1:\d+)/, "the local URL"))[1]!;
    await seen(/connected: dev_/, "the example script's log line from the simulated board");
    const page = await fetch(`${url}/`);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /<html/i, "the dashboard is served");
    dev.kill("SIGINT");
    assert.equal(await within(exited, 15_000, "sdk dev to stop after Ctrl-C"), 0, out);
  });

  await t.test("the installed sdk-mcp answers an MCP client", async (st) => {
    const transport = new StdioClientTransport({
      command: "sdk-mcp",
      args: [],
      cwd: dir,
      env: userEnv,
      stderr: "pipe",
    });
    const client = new Client({ name: "npm-packages-test", version: "1.0.0" });
    st.after(() => client.close());
    await within(client.connect(transport), 30_000, "sdk-mcp to answer initialize");
    const tools = await within(client.listTools(), 15_000, "tools/list");
    assert.ok(tools.tools.some((tool) => tool.name === "list_projects"));
    const result = await within(
      client.callTool({ name: "list_projects", arguments: {} }),
      15_000,
      "list_projects",
    );
    assert.ok(!result.isError, JSON.stringify(result.content));
    assert.match(JSON.stringify(result.content), new RegExp(projectId));
  });

  await t.test("@sdk/device installed alone type-checks a script in an editor's tsconfig", async () => {
    const project = tempDir(t, "sdk-npm-device-");
    fs.writeFileSync(path.join(project, "package.json"), '{ "private": true, "type": "module" }\n');
    const added = await run(
      "npm",
      ["install", "--prefer-offline", "--no-audit", "--no-fund", tarball(packed, "@sdk/device")],
      { cwd: project, env: npmEnv, timeoutMs: 120_000 },
    );
    assert.equal(added.code, 0, added.stderr);
    assertSelfContained(path.join(project, "node_modules", "@sdk"));
    const compilerOptions = {
      target: "es2023",
      module: "esnext",
      moduleResolution: "bundler",
      lib: ["es2023"],
      types: [],
      strict: true,
      noEmit: true,
    };
    fs.writeFileSync(
      path.join(project, "tsconfig.json"),
      JSON.stringify({ compilerOptions, include: ["src", "node_modules/@sdk/device/globals.d.ts"] }),
    );
    fs.mkdirSync(path.join(project, "src"));
    const script = `import { DeviceScript, OnboardLED } from "@sdk/device";
export default class Blink extends DeviceScript {
  async onDeviceConnect() { setInterval(() => this.env.DEVICE.gpioToggle(OnboardLED), 500); }
}
`;
    fs.writeFileSync(path.join(project, "src", "index.ts"), script);
    const ok = await run(process.execPath, [tsc, "-p", "."], { cwd: project, env: userEnv });
    assert.equal(ok.code, 0, ok.stdout);
    fs.writeFileSync(path.join(project, "src", "index.ts"), script.replace("gpioToggle(", "gpioFlip("));
    const wrong = await run(process.execPath, [tsc, "-p", "."], { cwd: project, env: userEnv });
    assert.notEqual(wrong.code, 0, "a wrong argument is a type error: the types are real");
    assert.match(wrong.stdout, /src\/index\.ts\(3,\d+\): error TS2339: Property 'gpioFlip'/);
  });

  await t.test("the installed bins refuse an old Node.js with one line naming the version", async (st) => {
    const old = oldNode();
    if (!old) {
      if (process.env.CI)
        assert.fail("CI needs a Node.js older than 22.18 (e.g. /usr/bin/node) for this check");
      st.skip("no Node.js older than 22.18 on this machine (looked at /usr/bin/node, /usr/local/bin/node)");
      return;
    }
    for (const [name, bin] of [
      ["sdk", path.join(installed, "@sdk", "cli", "bin", "sdk.mjs")],
      ["sdk-mcp", path.join(installed, "@sdk", "mcp", "bin", "sdk-mcp.mjs")],
    ] as const) {
      const result = await run(old.path, [bin, "--version"], { cwd: work, env: userEnv });
      assert.equal(result.code, 1);
      assert.equal(result.stdout, "");
      assert.match(
        result.stderr,
        new RegExp(`^${name} needs Node\\.js 22\\.18 or newer \\(this is ${old.version}\\)`),
      );
      assert.equal(result.stderr.trim().split("\n").length, 1, result.stderr);
    }
  });
  t.diagnostic(`whole test: ${((performance.now() - started) / 1000).toFixed(1)} s`);
});

test("from the repository's sources, sdk init's project type-checks with plain tsc (no zod, no Node types)", async (t) => {
  const work = tempDir(t, "sdk-init-sources-");
  const env = { PATH: process.env.PATH ?? "", HOME: tempDir(t, "sdk-init-home-") };
  const cli = path.join(repoRoot, "packages", "cli", "bin", "sdk.mjs");
  const init = await run(process.execPath, [cli, "init", "demo", "--no-link"], { cwd: work, env });
  assert.equal(init.code, 0, init.stderr);
  const dir = path.join(work, "demo");
  const files = await run(process.execPath, [tsc, "-p", ".", "--listFilesOnly"], { cwd: dir, env });
  assert.match(
    files.stdout,
    /\.sdk\/types\/node_modules\/@sdk\/device\/src\/index\.ts/,
    "the library's sources",
  );
  assert.doesNotMatch(files.stdout, /zod|@types\/node/);
  const check = await run(process.execPath, [tsc, "-p", "."], { cwd: dir, env });
  assert.equal(check.code, 0, check.stdout);
});
