import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { SdkClient, watchDevice } from "@sdk/client";
import { mintSignInToken, newSignInLinkKey, signInLinkPath } from "@sdk/protocol/sign-in-link";
import { attachControls, controlsHint, SimulatedDevice } from "@sdk/simulator";
import type { Command } from "../command.ts";
import { readProjectConfig } from "../context.ts";
import { CliError, UsageError } from "../errors.ts";
import { localTime } from "../output.ts";
import { openRecordingFile, reportRecording, SessionRecorder } from "../recorder.ts";
import { type TreeWatch, watchTree } from "../watch-tree.ts";
import { runBuild } from "./build.ts";

const serverMain = fileURLToPath(import.meta.resolve("@sdk/server/main"));
const signInLinkTtlMs = 10 * 60_000;

/**
 * The server's URL from its "listening on <url>" log line: with port 0 only the server knows
 * which port it got. Its other log lines are read and dropped.
 */
function listeningUrl(server: ChildProcess, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: server.stdout! });
    const done = (error?: Error, url?: string) => {
      clearTimeout(timer);
      server.off("exit", onExit);
      lines.off("line", onLine);
      if (error) reject(error);
      else resolve(url!);
    };
    const onLine = (line: string) => {
      try {
        const msg: unknown = JSON.parse(line).msg;
        const url = typeof msg === "string" ? /listening on (http:\/\/\S+)$/.exec(msg)?.[1] : undefined;
        if (url) done(undefined, url);
      } catch {
        // not a log line
      }
    };
    const onExit = (code: number | null) => done(new CliError(`the local server exited (code ${code})`));
    const timer = setTimeout(
      () => done(new CliError(`the local server did not start within ${timeoutMs / 1000}s`)),
      timeoutMs,
    );
    lines.on("line", onLine);
    server.once("exit", onExit);
  });
}

async function waitReady(url: string, server: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (server.exitCode !== null) throw new CliError(`the local server exited (code ${server.exitCode})`);
    try {
      if ((await fetch(`${url}/ready`)).ok) return;
    } catch {
      // not answering yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new CliError(`the local server did not become ready within ${timeoutMs / 1000}s`);
}

export const dev: Command = {
  name: "dev",
  summary: "Run the project locally: an embedded server, a simulated board, redeploy on save",
  usage: "sdk dev [--port <number>] [--record FILE [--force]] [--dir <project>]",
  details:
    "Starts a private server on this machine (its data in a temporary directory), a simulated board of the project's board type, and deploys the script to it. Device logs and state changes are shown as they happen. Saving a file rebuilds and redeploys (saves by rename, as editors and sed -i do, included). It prints a one-time link that opens the local dashboard signed in (once, within 10 minutes). On a terminal, b presses the button on GP15, l prints a new sign-in link, ? lists the keys; from a pipe, stdin takes press 15 [ms], set 15 0|1, release 15. Ctrl-C stops everything and removes the temporary data. With --record FILE the simulated board's session is recorded to FILE as sdk record does (docs/scripts.md, Recording a session), from its first hello until Ctrl-C.",
  options: { port: { type: "string" }, record: { type: "string" }, force: { type: "boolean" } },
  optionHelp: [
    "--port <number>   the local server's port (default 8787; 0 picks a free port)",
    "--record <file>   record the simulated board's session to this file (JSON Lines, for sdk test)",
    "--force           with --record: overwrite the file if it exists",
  ],
  async run({ values, g }) {
    const port = values.port === undefined ? 8787 : Number(values.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535)
      throw new UsageError("--port must be a number from 0 (a free port) to 65535", "dev");
    const config = await readProjectConfig(g, "run sdk dev in a project directory");
    const recordFile = values.record as string | undefined;
    if (recordFile === "") throw new UsageError("--record needs a file name", "dev");
    // Refused before anything starts when the file exists (without --force).
    const recordFd =
      recordFile === undefined ? undefined : openRecordingFile(recordFile, Boolean(values.force));
    let recorder: SessionRecorder | undefined;
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "sdk-dev-"));
    // Signs one-time sign-in links for this server only: it never leaves this process and its child.
    const signInKey = newSignInLinkKey();
    const server = spawn(process.execPath, [serverMain], {
      env: {
        ...process.env,
        PORT: String(port),
        HOST: "127.0.0.1",
        DATA_DIR: dataDir,
        // info: the "listening on <url>" line tells the port
        LOG_LEVEL: "info",
        LOG_FORMAT: "json",
        // A private server: not advertised on the network for sdk login to find.
        MDNS: "false",
        SIGN_IN_LINK_KEY: signInKey,
      },
      // The IPC channel ties the server to this process: it stops when this one goes, however.
      stdio: ["ignore", "pipe", "pipe", "ipc"],
    });
    let serverErrors = "";
    server.stderr?.on("data", (chunk) => {
      serverErrors += chunk;
    });
    let simulator: SimulatedDevice | undefined;
    let watcher: TreeWatch | undefined;
    let watch: { stop(): void } | undefined;
    let detachControls: (() => void) | undefined;
    const cleanup = async () => {
      detachControls?.();
      watcher?.close();
      watch?.stop();
      if (recorder) reportRecording(g.out, recorder.finish());
      else if (recordFd !== undefined) {
        // Nothing was recorded (the server or the first deploy did not come up): no empty file left.
        fs.closeSync(recordFd);
        fs.rmSync(recordFile!, { force: true });
      }
      await simulator?.stop();
      if (server.exitCode === null) {
        const exited = new Promise((r) => server.once("exit", r));
        server.kill("SIGTERM");
        await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
        if (server.exitCode === null) server.kill("SIGKILL");
      }
      fs.rmSync(dataDir, { recursive: true, force: true });
    };

    try {
      g.out.step(
        port === 0 ? "Starting a local server on a free port" : `Starting a local server on port ${port}`,
      );
      const withServerErrors = (error: Error) => {
        throw new CliError(`${error.message}${serverErrors ? `:\n${serverErrors.trim()}` : ""}`);
      };
      const url = await listeningUrl(server, 15_000).catch(withServerErrors);
      server.stdout?.resume();
      await waitReady(url, server, 15_000).catch(withServerErrors);
      const anon = new SdkClient({ baseUrl: url });
      const email = "dev@localhost.localdomain";
      const auth = await anon.api.register({
        body: {
          email,
          password: randomBytes(18).toString("base64url"),
          issueToken: true,
        },
      });
      const client = new SdkClient({ baseUrl: url, token: auth.token!.token });
      const project = await client.api.createProject({ body: { name: path.basename(path.resolve(g.dir)) } });
      const { device, credentials } = await client.api.createDevice({
        params: { projectId: project.id },
        body: { name: `simulated ${config.board}`, board: config.board },
      });

      const ids = { projectId: project.id, deviceId: device.id };
      let liveVersion: number | null = null;
      const deployOnce = async () => {
        const built = await runBuild(g);
        if (!built.ok) return;
        g.out.step("Deploying");
        const deployment = await client.api.createDeployment({
          params: { projectId: project.id },
          body: { bundle: built.bundle, sourceMap: built.sourceMap, manifest: built.manifest },
        });
        if (deployment.status === "active") {
          liveVersion = deployment.version;
          g.out.info(`${g.out.green("✔")} deployed v${deployment.version}`);
          if (recorder)
            g.out.warn(
              `the recording in ${recordFile} goes on with v${deployment.version}: it now holds more than one version's behaviour (restart sdk dev --record for a clean one)`,
            );
        } else g.out.info(`${g.out.red(`✖ v${deployment.version} failed to load:`)} ${deployment.error}`);
      };
      await deployOnce();
      if (recordFd !== undefined)
        recorder = new SessionRecorder(recordFd, {
          file: recordFile!,
          out: g.out,
          projectId: project.id,
          deploymentVersion: liveVersion,
          progress: false,
        });

      // The simulator starts once the watch is subscribed, so its first lines are shown.
      let subscribed: () => void = () => {};
      const snapshot = new Promise<void>((resolve) => {
        subscribed = resolve;
      });
      watch = watchDevice(url, auth.token!.token, ids, {
        record: recorder !== undefined,
        onEvent(event) {
          recorder?.handle(event);
          if (event.type === "snapshot") {
            subscribed();
          } else if (event.type === "log") {
            g.out.logEntry(event.entry);
          } else if (event.type === "state") {
            g.out.line(
              `${g.out.dim(localTime(event.at))} ${g.out.cyan("state")} ${event.entityId} = ${JSON.stringify(event.value)}`,
            );
          } else if (event.type === "status") {
            g.out.line(
              `${g.out.dim(localTime(event.at))} ${event.status === "online" ? g.out.green("online") : g.out.yellow("offline")}`,
            );
          }
        },
      });
      let noSnapshot: NodeJS.Timeout | undefined;
      await Promise.race([
        snapshot,
        new Promise((_, reject) => {
          noSnapshot = setTimeout(
            () => reject(new CliError("the local server did not answer the device watch within 15s")),
            15_000,
          );
        }),
      ]).finally(() => clearTimeout(noSnapshot));
      simulator = new SimulatedDevice({
        server: new URL(url).host,
        deviceId: credentials.deviceId,
        secret: credentials.secret,
        board: config.board,
      });
      simulator.start();

      g.out.line(
        `${g.out.bold("sdk dev")} running at ${g.out.cyan(url)} — project ${project.id}, simulated ${config.board} ${device.id}`,
      );
      const signInLink = () =>
        `${url}${signInLinkPath}?token=${mintSignInToken(signInKey, email, signInLinkTtlMs)}`;
      g.out.line(
        `Dashboard, signed in: ${g.out.cyan(signInLink())} ${g.out.dim("(works once, for 10 minutes)")}`,
      );
      const tty = Boolean(process.stdin.isTTY);
      detachControls = attachControls({
        input: process.stdin,
        print: (text) => g.out.line(g.out.dim(text)),
        devices: [simulator],
        keys: {
          l: {
            help: "print a new one-time dashboard sign-in link",
            run: () => g.out.line(`Dashboard, signed in: ${g.out.cyan(signInLink())}`),
          },
        },
      });
      g.out.line(g.out.dim(`Edit your files to redeploy; Ctrl-C to stop. ${controlsHint(tty)}`));

      // One redeploy at a time; saves made during one are picked up by a single next one.
      let busy: Promise<void> = Promise.resolve();
      let queued = false;
      watcher = watchTree(path.resolve(g.dir), (files) => {
        g.out.info(g.out.dim(`${files.join(", ")} changed`));
        if (queued) return;
        queued = true;
        busy = busy
          .then(() => {
            queued = false;
            return deployOnce();
          })
          .catch((error: Error) => g.out.warn(`redeploy failed: ${error.message}`));
      });

      await new Promise<void>((resolve) => {
        process.once("SIGINT", () => resolve());
        process.once("SIGTERM", () => resolve());
      });
      g.out.info("Stopping…");
      watcher.close();
      await busy;
      return 0;
    } finally {
      await cleanup();
    }
  },
};
