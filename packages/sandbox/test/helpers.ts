import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { TestContext } from "node:test";
import { build } from "@sdk/build";
import { type LoadOptions, ProjectSandbox, type SandboxHost } from "../src/index.ts";

const built = new Map<string, Promise<string>>();

/** Bundles `src/index.ts` of a one-file project with the real build (once per source text). */
export function bundle(script: string): Promise<string> {
  let pending = built.get(script);
  if (!pending) {
    pending = (async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sdk-sandbox-"));
      try {
        fs.mkdirSync(path.join(dir, "src"));
        fs.writeFileSync(
          path.join(dir, "sdk.ts"),
          `import { defineConfig } from "@sdk/device";\nexport default defineConfig({ board: "pico_w", ha: { entities: [] } });\n`,
        );
        fs.writeFileSync(path.join(dir, "src", "index.ts"), script);
        const result = await build({ projectDir: dir, skipTypeCheck: true });
        if (!result.ok) throw new Error(`build failed: ${JSON.stringify(result.diagnostics)}`);
        return result.bundle;
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    })();
    built.set(script, pending);
  }
  return pending;
}

/** A bundle that answers every entry point with nothing, after running `connect` for each device. */
export function handWritten(connect: string, topLevel = ""): string {
  return `${topLevel}
const host = globalThis.__sdk_host;
export default {
  create() {},
  connect(deviceId) { ${connect} },
  message() {}, disconnect() {}, fire() {}, settle() {}, setEnv() {},
  count() { return 0; },
};`;
}

export interface LogLine {
  deviceId: string;
  level: string;
  message: string;
}

/** A SandboxHost that records what the guest asks for; `next` waits for a log line. */
export class RecordingHost implements SandboxHost {
  readonly logs: LogLine[] = [];
  readonly commands: { deviceId: string; type: string; args: Record<string, unknown> }[] = [];
  readonly states: { deviceId: string; entityId: string; value: unknown }[] = [];
  readonly sent: { deviceId: string; message: Record<string, unknown> }[] = [];
  #waiters: { match: (line: LogLine) => boolean; resolve: (line: LogLine) => void }[] = [];

  command(deviceId: string, type: string, args: Record<string, unknown>): Promise<unknown> {
    this.commands.push({ deviceId, type, args });
    return Promise.resolve({});
  }
  emitState(deviceId: string, entityId: string, value: unknown): void {
    this.states.push({ deviceId, entityId, value });
  }
  send(deviceId: string, message: Record<string, unknown>): void {
    this.sent.push({ deviceId, message });
  }
  log(deviceId: string, level: string, message: string): void {
    const line = { deviceId, level, message };
    this.logs.push(line);
    this.#waiters = this.#waiters.filter((w) => {
      if (!w.match(line)) return true;
      w.resolve(line);
      return false;
    });
  }

  /** The messages logged so far. */
  get messages(): string[] {
    return this.logs.map((l) => l.message);
  }

  /** The first log line (from now on, or already logged after `since`) whose message matches. */
  next(pattern: RegExp | string, since = 0): Promise<LogLine> {
    const match = (line: LogLine) =>
      typeof pattern === "string" ? line.message === pattern : pattern.test(line.message);
    const earlier = this.logs.slice(since).find(match);
    if (earlier) return Promise.resolve(earlier);
    return new Promise((resolve) => this.#waiters.push({ match, resolve }));
  }
}

/** Loads a sandbox that is disposed when the test ends. */
export async function load(
  t: TestContext,
  bundleText: string,
  options: Partial<LoadOptions> = {},
): Promise<{ sandbox: ProjectSandbox; host: RecordingHost }> {
  const host = new RecordingHost();
  const sandbox = await ProjectSandbox.load({
    projectId: "p1",
    bundle: bundleText,
    env: {},
    host,
    ...options,
  });
  t.after(() => sandbox.dispose());
  return { sandbox, host };
}

/** Timers this process has running (Node counts each active timer as one `Timeout` resource). */
export const activeTimers = () => process.getActiveResourcesInfo().filter((r) => r === "Timeout").length;
