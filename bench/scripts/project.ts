import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { build, formatDiagnostic, type Manifest } from "@sdk/build";

/** A built script, as `sdk deploy` uploads it. */
export interface Built {
  bundle: string;
  sourceMap: string;
  manifest: Manifest;
}

/** The handler-call script: it only counts (the brief's `this.n = (this.n ?? 0) + 1`). */
export const counterScript = `import { DeviceScript, type DeviceMessage } from "@sdk/device";

export default class Counter extends DeviceScript {
  n?: number;

  onMessage(_message: DeviceMessage) {
    this.n = (this.n ?? 0) + 1;
  }
}
`;

/** The end-to-end script: a \`tick\` from the device becomes state "v" = its seq. */
export const tickScript = `import { DeviceScript, type DeviceMessage } from "@sdk/device";

export default class Ticks extends DeviceScript {
  onMessage(message: DeviceMessage) {
    if (message.type === "tick") this.env.DEVICE.emitState("v", message.seq);
  }
}
`;

/**
 * Builds `source` as src/index.ts of a throw-away project (sdk.ts: board pico_w) with @sdk/build,
 * type check included, and removes the project again.
 */
export async function buildScript(source: string): Promise<Built> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sdk-bench-project-"));
  try {
    fs.mkdirSync(path.join(dir, "src"));
    fs.writeFileSync(
      path.join(dir, "sdk.ts"),
      `import { defineConfig } from "@sdk/device";\n\nexport default defineConfig({ board: "pico_w" });\n`,
    );
    fs.writeFileSync(path.join(dir, "src", "index.ts"), source);
    const result = await build({ projectDir: dir });
    if (!result.ok)
      throw new Error(
        `the bench script did not build:\n${result.diagnostics.map(formatDiagnostic).join("\n")}`,
      );
    return { bundle: result.bundle, sourceMap: result.sourceMap, manifest: result.manifest };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
