import fs from "node:fs";
import path from "node:path";
import type { TestContext } from "node:test";
import { build } from "@sdk/build";
import type { RecordingEntry, RecordingHeader } from "@sdk/protocol";
import { tempDir } from "./helpers.ts";

export const header: RecordingHeader = {
  format: "sdk-recording",
  version: 1,
  device: { id: "dev_test", name: "bench", board: "pico_w", firmware: "1.0.0" },
  projectId: "prj_test",
  recordedAt: "2026-11-24T06:00:00.000Z",
  deploymentVersion: 3,
};

export const jsonl = (entries: RecordingEntry[], head: RecordingHeader = header) =>
  [head, ...entries].map((e) => `${JSON.stringify(e)}\n`).join("");

/** A one-file project (sdk.ts, src/index.ts) with these recordings in test/recordings. */
export function project(t: TestContext, script: string, recordings: Record<string, string> = {}): string {
  const dir = tempDir(t, "sdk-replay-");
  fs.mkdirSync(path.join(dir, "src"));
  fs.mkdirSync(path.join(dir, "test", "recordings"), { recursive: true });
  fs.writeFileSync(
    path.join(dir, "sdk.ts"),
    `import { defineConfig } from "@sdk/device";\nexport default defineConfig({ board: "pico_w", entry: "src/index.ts", ha: { entities: [] } });\n`,
  );
  fs.writeFileSync(path.join(dir, "src", "index.ts"), script);
  for (const [name, text] of Object.entries(recordings))
    fs.writeFileSync(path.join(dir, "test", "recordings", name), text);
  return dir;
}

/** The project's bundle, built as `sdk test` builds it (without the type-check). */
export async function bundleOf(dir: string): Promise<{ bundle: string; sourceMap: string }> {
  const result = await build({ projectDir: dir, skipTypeCheck: true });
  if (!result.ok) throw new Error(`build failed: ${JSON.stringify(result.diagnostics)}`);
  return { bundle: result.bundle, sourceMap: result.sourceMap };
}
