// The container image as users get it: built for both architectures by `npm run image`'s script,
// loaded and run with podman (a private store), reached only through the published port.
import assert from "node:assert/strict";
import { execFile, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { SdkClient } from "@sdk/client";
import { SimulatedDevice } from "@sdk/simulator";
import { deployScript, syntheticRelease, waitUntil, within } from "@sdk/test-helpers";
import { mountsUnder } from "../scripts/image/store.ts";

const exec = promisify(execFile);
const repo = fileURLToPath(new URL("..", import.meta.url));
const version = JSON.parse(fs.readFileSync(path.join(repo, "package.json"), "utf8")).version as string;
const binfmt = "/proc/sys/fs/binfmt_misc";

const onPath = (command: string) => spawnSync("sh", ["-c", `command -v ${command}`]).status === 0;
const missing = [
  "buildah",
  "podman",
  "skopeo",
  "runc",
  "qemu-aarch64-static",
  "aarch64-linux-gnu-strip",
].filter((c) => !onPath(c));
const why =
  missing.length > 0
    ? `needs ${missing.join(", ")} (sudo apt-get install -y buildah skopeo podman runc qemu-user-static binutils-aarch64-linux-gnu)`
    : process.getuid?.() !== 0
      ? "needs root (buildah and podman with a private store)"
      : null;

if (why !== null) {
  test("container image", (t) => {
    if (process.env.CI) assert.fail(`the image test cannot run in CI: it ${why}`);
    t.skip(`skipped: the image test ${why}`);
  });
} else {
  defineTests();
}

function defineTests(): void {
  const temp = fs.mkdtempSync(path.join(os.tmpdir(), "sdk-image-test-"));
  const archive = path.join(temp, "sdk-image.oci.tar");
  const store = ["--root", path.join(temp, "root"), "--runroot", path.join(temp, "run")];
  const podmanArgs = [
    ...store,
    "--storage-driver",
    "overlay",
    "--cgroup-manager",
    "cgroupfs",
    "--events-backend",
    "file",
  ];
  const created = { containers: [] as string[], volumes: [] as string[] };
  let buildOutput = "";

  // Generous bounds: the machine may be a busy 2-core one, and arm64 runs under emulation.
  async function podman(args: string[], timeoutMs = 120_000): Promise<string> {
    try {
      const { stdout } = await exec("podman", [...podmanArgs, ...args], {
        timeout: timeoutMs,
        maxBuffer: 64 << 20,
      });
      return stdout.trim();
    } catch (error) {
      const e = error as { stderr?: string; message: string };
      throw new Error(`podman ${args.join(" ")}: ${e.stderr?.trim() || e.message}`);
    }
  }
  const logs = async (name: string) => podman(["logs", name]).catch((e: Error) => e.message);

  before(async () => {
    const firmware = path.join(temp, "firmware");
    for (const board of ["pico_w", "pico2_w"] as const) {
      fs.mkdirSync(path.join(firmware, "1.2.3"), { recursive: true });
      fs.writeFileSync(
        path.join(firmware, "1.2.3", `${board}.uf2`),
        syntheticRelease({ board, version: "1.2.3" }),
      );
    }
    const script = path.join(repo, "scripts/image/build.ts");
    const args = [script, "--firmware", firmware, "--output", archive, "--work", path.join(temp, "work")];
    try {
      const { stdout } = await exec(process.execPath, args, { cwd: repo, timeout: 600_000 });
      buildOutput = stdout;
    } catch (error) {
      const e = error as { stdout?: string; stderr?: string; message: string };
      throw new Error(`npm run image failed:\n${e.stdout ?? ""}${e.stderr ?? e.message}`);
    }
  });

  after(async () => {
    for (const name of created.containers)
      await podman(["rm", "--force", "--time", "0", name]).catch(() => {});
    for (const name of created.volumes) await podman(["volume", "rm", "--force", name]).catch(() => {});
    await podman(["rmi", "--all", "--force"]).catch(() => {});
    for (const mount of mountsUnder(temp)) spawnSync("umount", [mount]);
    fs.rmSync(temp, { recursive: true, force: true });
  });

  /**
   * Starts a container and answers the URL of its published port. Without `port`, podman picks a
   * free one (no gap between choosing a port and binding it); a restart passes the port it had, so
   * that a board reconnecting to the old address finds the new container.
   */
  async function run(
    name: string,
    image: string,
    volume: string,
    options: { port?: number; extra?: string[] } = {},
  ): Promise<{ url: string; port: number }> {
    created.containers.push(name);
    await podman([
      "run",
      "--detach",
      "--name",
      name,
      "--runtime",
      "runc",
      "--ulimit",
      "nofile=4096:4096",
      "--ulimit",
      "nproc=1000:1000",
      "--publish",
      `127.0.0.1:${options.port ?? ""}:8080`,
      "--volume",
      `${volume}:/data`,
      "--env",
      "MDNS=false",
      "--env",
      "ALLOW_REGISTRATION=true",
      ...(options.extra ?? []),
      image,
    ]);
    const published = await podman(["port", name, "8080/tcp"]);
    const port = Number(/^127\.0\.0\.1:(\d+)$/m.exec(published)?.[1]);
    assert.ok(port > 0, `podman port ${name} 8080/tcp: ${published}`);
    return { url: `http://127.0.0.1:${port}`, port };
  }

  async function waitForHealth(name: string, url: string, timeoutMs: number): Promise<void> {
    const ok = async () => {
      try {
        return (await fetch(`${url}/health`, { signal: AbortSignal.timeout(2_000) })).ok;
      } catch {
        return false;
      }
    };
    await waitUntil(ok, timeoutMs, `${name} answering /health`, 200).catch(async (error: Error) => {
      throw new Error(`${error.message}\n${await logs(name)}`);
    });
  }

  test("the archive holds one manifest list with linux/amd64 and linux/arm64, named sdk:<version>", async () => {
    assert.match(buildOutput, /linux\/amd64: [\d.]+ MB compressed/);
    const raw = JSON.parse((await exec("skopeo", ["inspect", "--raw", `oci-archive:${archive}`])).stdout);
    const platforms = raw.manifests.map(
      (m: { platform: { architecture: string } }) => m.platform.architecture,
    );
    assert.deepEqual(platforms.sort(), ["amd64", "arm64"]);
    const loaded = await podman(["load", "--input", archive], 300_000);
    assert.match(loaded, new RegExp(`Loaded image: localhost/sdk:${version.replaceAll(".", "\\.")}`));
    const config = JSON.parse(await podman(["image", "inspect", `sdk:${version}`]))[0];
    assert.equal(config.Architecture, "amd64");
    assert.equal(config.Config.User, "1000:1000");
    assert.deepEqual(Object.keys(config.Config.Volumes), ["/data"]);
    assert.deepEqual(Object.keys(config.Config.ExposedPorts), ["8080/tcp"]);
    assert.ok(config.Config.Env.includes("DATA_DIR=/data"));
    assert.deepEqual(config.Healthcheck.Test, ["CMD", "/usr/local/bin/node", "/app/healthcheck.mjs"]);
    assert.equal(config.Labels["org.opencontainers.image.version"], version);
    assert.equal(config.Labels["org.opencontainers.image.licenses"], "AGPL-3.0-only");
  });

  test("amd64: serves, keeps its state on the volume, stops on SIGTERM, and the board comes back", async (t) => {
    const volume = `sdk-image-test-${process.pid}`;
    created.volumes.push(volume);
    await podman(["volume", "create", volume]);
    const first = `sdk-image-test-a-${process.pid}`;
    // The group commit in its thread, whose entry the image ships compiled too (the default, auto,
    // keeps it on the main thread on a quick disk).
    const { url, port } = await run(first, `sdk:${version}`, volume, {
      extra: ["--env", "SQLITE_COMMIT_THREAD=on"],
    });
    await waitForHealth(first, url, 120_000);
    await waitUntil(
      async () => /"commitThread":true/.test(await logs(first)),
      10_000,
      "the listening line: commits in the writer thread",
    );

    assert.equal((await fetch(`${url}/ready`)).status, 200);
    const home = await fetch(`${url}/`);
    assert.equal(home.status, 200);
    assert.match(await home.text(), /<div id="root"|<script/);

    const anon = new SdkClient({ baseUrl: url });
    const auth = await anon.api.register({
      body: { email: "owner@example.com", password: "correct horse battery", issueToken: true },
    });
    const client = new SdkClient({ baseUrl: url, token: auth.token!.token });
    const project = await client.api.createProject({ body: { name: "greenhouse" } });
    const { device, credentials } = await client.api.createDevice({
      params: { projectId: project.id },
      body: { name: "pump", board: "pico_w" },
    });
    const ids = { projectId: project.id, deviceId: device.id };
    const firmware = await client.api.listFirmware();
    assert.deepEqual(
      firmware.map((r) => [r.version, r.boards.map((b) => b.board).sort()]),
      [["1.2.3", ["pico2_w", "pico_w"]]],
    );

    const sim = new SimulatedDevice({
      server: `127.0.0.1:${port}`,
      deviceId: device.id,
      secret: credentials.secret,
      board: "pico_w",
      reconnect: { baseMs: 200, capMs: 1_000 },
    });
    t.after(() => sim.stop());
    sim.start();
    await sim.waitFor("connected");
    await waitUntil(
      async () => (await client.api.getDevice({ params: ids })).status === "online",
      30_000,
      "online",
    );

    // Scripts run in a worker thread, whose entry the image ships compiled like the rest.
    const deployment = await deployScript(
      t,
      client,
      project.id,
      `import { DeviceScript } from "@sdk/device";
export default class Answer extends DeviceScript {
  onMessage(msg) { if (msg.type === "sample") this.env.DEVICE.emitState("answer", 42); }
}`,
    );
    assert.equal(deployment.status, "active", deployment.error ?? "");
    await waitUntil(
      async () => (await client.api.sendDeviceMessage({ params: ids, body: { type: "sample" } })).delivered,
      30_000,
      "the script instance takes messages",
      250,
    );
    await waitUntil(
      async () => (await client.api.getDeviceState({ params: ids })).some((v) => v.value === 42),
      30_000,
      "the script's state",
    );

    const probe = `
      const fs = require("node:fs");
      const out = { uid: process.getuid(), pid1: fs.readFileSync("/proc/1/cmdline", "utf8").split("\\0")[0] };
      for (const dir of ["/", "/etc", "/app", "/firmware", "/data", "/tmp"]) {
        try { fs.writeFileSync(dir + "/probe", "x"); fs.rmSync(dir + "/probe"); out[dir] = "ok"; }
        catch (e) { out[dir] = e.code; }
      }
      out.devTools = ["typescript", "esbuild", "@biomejs", "vite", "playwright-core", "knip", "@types"]
        .filter((name) => fs.existsSync("/app/node_modules/" + name));
      out.sources = fs.readdirSync("/app", { recursive: true })
        .filter((f) => !f.includes("node_modules") && f.endsWith(".ts") && !f.endsWith(".d.ts"));
      console.log(JSON.stringify(out));`;
    const seen = JSON.parse(await podman(["exec", first, "/usr/local/bin/node", "-e", probe]));
    assert.equal(seen.uid, 1000);
    assert.equal(seen.pid1, "/usr/local/bin/node");
    for (const dir of ["/", "/etc", "/app", "/firmware"]) assert.match(seen[dir], /^(EACCES|EROFS)$/, dir);
    assert.equal(seen["/data"], "ok");
    assert.equal(seen["/tmp"], "ok");
    assert.deepEqual(seen.devTools, [], "development tools in the image");
    assert.deepEqual(seen.sources, [], "the image runs compiled JavaScript, not TypeScript sources");
    assert.equal(await podman(["healthcheck", "run", first]).catch((e: Error) => e.message), "");

    const stopStarted = performance.now();
    await podman(["stop", "--time", "10", first], 60_000);
    const stopSeconds = (performance.now() - stopStarted) / 1000;
    // Exit code 0 is the server's own exit: podman sends SIGKILL (137) if it is not gone after 10 s.
    // podman's own overhead is in stopSeconds, so it is reported, not bounded.
    const exitCode = await podman(["inspect", first, "--format", "{{.State.ExitCode}}"]);
    assert.equal(exitCode, "0", `exit code after SIGTERM\n${await logs(first)}`);
    t.diagnostic(`podman stop (SIGTERM): exit code 0 after ${stopSeconds.toFixed(1)} s`);
    assert.match(await logs(first), /stopped cleanly/);

    const second = `sdk-image-test-b-${process.pid}`;
    await run(second, `sdk:${version}`, volume, { port });
    await waitForHealth(second, url, 120_000);
    assert.equal((await client.api.whoami()).email, "owner@example.com");
    assert.deepEqual(
      (await client.api.listProjects()).map((p) => p.name),
      ["greenhouse"],
    );
    assert.ok(
      (await client.api.getDeviceState({ params: ids })).some((v) => v.value === 42),
      "the script's state, committed by the first container's writer thread, kept on the volume",
    );
    await waitUntil(
      async () => (await client.api.getDevice({ params: ids }).catch(() => undefined))?.status === "online",
      60_000,
      "the simulated board back online after the restart",
      250,
    );
    await within(sim.stop(), 15_000, "simulator stop");
  });

  test("arm64 under emulation: /health and one registration", async (t) => {
    const registered = registerAarch64();
    t.after(registered.undo);
    const id = (await podman(["pull", "--quiet", "--arch", "arm64", `oci-archive:${archive}`], 300_000))
      .split("\n")
      .at(-1)!;
    const config = JSON.parse(await podman(["image", "inspect", id]))[0];
    assert.equal(config.Architecture, "arm64");
    const volume = `sdk-image-test-arm-${process.pid}`;
    created.volumes.push(volume);
    await podman(["volume", "create", volume]);
    const name = `sdk-image-test-arm64-${process.pid}`;
    const { url } = await run(name, id, volume, { extra: ["--arch", "arm64"] });
    await waitForHealth(name, url, 300_000);
    const arch = await podman(["exec", name, "/usr/local/bin/node", "-p", "process.arch"]);
    assert.equal(arch, "arm64");
    const auth = await new SdkClient({ baseUrl: url }).api.register({
      body: { email: "arm@example.com", password: "correct horse battery", issueToken: true },
    });
    assert.equal(auth.user.email, "arm@example.com");
    await podman(["stop", "--time", "10", name], 60_000);
  });
}

/** Registers Debian's qemu-aarch64 with binfmt_misc where it is missing; `undo` removes only that. */
function registerAarch64(): { undo: () => void } {
  let mounted = false;
  if (!fs.existsSync(`${binfmt}/register`)) {
    const result = spawnSync("mount", ["-t", "binfmt_misc", "binfmt_misc", binfmt]);
    assert.equal(result.status, 0, `mounting binfmt_misc: ${result.stderr}`);
    mounted = true;
  }
  let registered = false;
  if (!fs.existsSync(`${binfmt}/qemu-aarch64`)) {
    const conf = fs.readFileSync("/usr/lib/binfmt.d/qemu-aarch64.conf", "utf8").trim();
    fs.writeFileSync(`${binfmt}/register`, conf);
    registered = true;
  }
  return {
    undo() {
      if (registered) fs.writeFileSync(`${binfmt}/qemu-aarch64`, "-1");
      if (mounted) spawnSync("umount", [binfmt]);
    },
  };
}
