import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, type TestContext, test } from "node:test";
import {
  type BuildOptions,
  type BuildResult,
  build,
  type Diagnostic,
  formatDiagnostic,
} from "../src/index.ts";

const devicePackage = JSON.parse(
  await fs.readFile(new URL(import.meta.resolve("@sdk/device/package.json")), "utf8"),
) as { version: string };

const entities = [
  { id: "temperature", kind: "sensor", name: "Temperature", unit: "°C", stateClass: "measurement" },
  { id: "relay", kind: "switch", name: "Relay" },
];

const sdkTs = (config: Record<string, unknown> = { board: "pico2_w", ha: { entities } }) =>
  `import { defineConfig } from "@sdk/device";\n\nexport default defineConfig(${JSON.stringify(config, null, 2)});\n`;

const indexTs = `import { DeviceScript, OnboardLED } from "@sdk/device";
import { label } from "./label.ts";

export default class Blink extends DeviceScript<{ GREETING: string }> {
  override async onDeviceConnect() {
    console.log(label(this.env.GREETING));
    this.env.DEVICE.emitState("temperature", 21.5);
    await this.env.DEVICE.gpioToggle(OnboardLED);
  }
}
`;
const labelTs = 'export const label = (greeting: string): string => greeting + " from the blink";\n';

/** Writes a project into a fresh temp dir (removed after the test); `depth` nests it further down. */
async function project(t: TestContext, files: Record<string, string>, depth = 0): Promise<string> {
  const root = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), "sdk-build-test-")));
  t.after(() => fs.rm(root, { recursive: true, force: true }));
  const dir = path.join(root, ...Array.from({ length: depth }, (_, i) => `level${i}`));
  for (const [name, text] of Object.entries(files)) {
    await fs.mkdir(path.dirname(path.join(dir, name)), { recursive: true });
    await fs.writeFile(path.join(dir, name), text);
  }
  await fs.mkdir(dir, { recursive: true });
  return dir;
}

const validFiles = () => ({ "sdk.ts": sdkTs(), "src/index.ts": indexTs, "src/label.ts": labelTs });

async function run(options: BuildOptions) {
  const steps: string[] = [];
  const result = await build({ ...options, onStep: (step) => steps.push(step) });
  return { result, steps };
}

function ok(result: BuildResult): Extract<BuildResult, { ok: true }> {
  if (!result.ok) assert.fail(`build failed:\n${result.diagnostics.map(formatDiagnostic).join("\n")}`);
  return result;
}

function failed(result: BuildResult): Diagnostic[] {
  if (result.ok) assert.fail("the build should have failed");
  assert.ok(result.diagnostics.length > 0);
  assert.equal(typeof result.durationMs, "number");
  return result.diagnostics;
}

/** 1-based line and column of the first occurrence of `marker` in `source`. */
function positionOf(source: string, marker: string) {
  const index = source.indexOf(marker);
  assert.ok(index >= 0, `marker ${marker} not in source`);
  const lines = source.slice(0, index).split("\n");
  return { line: lines.length, column: lines.at(-1)!.length + 1 };
}

/** Loads a bundle in a separate Node process with a recording `__sdk_host`, and connects one device. */
function runBundle(file: string): Promise<{ keys: string[]; hostHidden: boolean; calls: unknown[][] }> {
  const code = `
    import fs from "node:fs";
    const calls = [];
    const record = (name) => (...args) => calls.push([name, ...args]);
    globalThis.__sdk_host = {
      command: record("command"), emitState: record("emitState"), send: record("send"), log: record("log"),
      error: record("error"), setTimer: record("setTimer"), clearTimer: record("clearTimer"),
    };
    const bundle = fs.readFileSync(process.env.SDK_BUNDLE, "utf8");
    const runtime = (await import("data:text/javascript;base64," + Buffer.from(bundle).toString("base64"))).default;
    runtime.create("dev_1", "prj_1", "pico2_w", JSON.stringify({ GREETING: "hi" }));
    runtime.connect("dev_1");
    await new Promise((resolve) => setImmediate(resolve));
    process.stdout.write(JSON.stringify({ keys: Object.keys(runtime).sort(), hostHidden: !("__sdk_host" in globalThis), calls }));
  `;
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ["--input-type=module", "-e", code],
      { env: { ...process.env, SDK_BUNDLE: file } },
      (error, stdout, stderr) =>
        error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(JSON.parse(stdout)),
    );
  });
}

describe("a valid project", () => {
  test("builds an ES module with a source map and a manifest, written to .sdk/build", async (t) => {
    const dir = await project(t, {
      ...validFiles(),
      "sdk.ts": sdkTs({ project: "prj_abcdefghijklmnopqrs2", board: "pico2_w", ha: { entities } }),
    });
    const { result, steps } = await run({ projectDir: dir });
    const built = ok(result);
    assert.deepEqual(steps, ["config", "typecheck", "bundle"]);
    assert.equal(built.cached, false);
    assert.equal(typeof built.durationMs, "number");
    const outDir = path.join(dir, ".sdk", "build");
    assert.equal(built.outDir, outDir);

    // An ES module whose default export is the runtime wrapping the script.
    assert.match(built.bundle, /\bexport\s*\{\s*[\w$]+ as default\s*\};?\s*$/);
    assert.match(built.bundle, /\bBlink = class extends DeviceScript\b|\bclass Blink extends DeviceScript\b/);
    assert.doesNotMatch(built.bundle, /\brequire\(|from\s*"node:/);

    const map = JSON.parse(built.sourceMap) as {
      version: number;
      sources: string[];
      sourcesContent: string[];
    };
    assert.equal(map.version, 3);
    const sources = map.sources.map((s) => path.resolve(outDir, s));
    for (const file of ["src/index.ts", "src/label.ts"]) {
      const at = sources.indexOf(path.join(dir, file));
      assert.ok(at >= 0, `${file} is in the source map's sources: ${map.sources.join(", ")}`);
      assert.equal(map.sourcesContent[at], file === "src/index.ts" ? indexTs : labelTs);
    }

    assert.deepEqual(built.manifest, {
      board: "pico2_w",
      project: "prj_abcdefghijklmnopqrs2",
      entry: "src/index.ts",
      entities,
      libraryVersion: devicePackage.version,
      sha256: createHash("sha256").update(built.bundle).digest("hex"),
    });

    assert.equal(await fs.readFile(path.join(outDir, "script.js"), "utf8"), built.bundle);
    assert.equal(await fs.readFile(path.join(outDir, "script.js.map"), "utf8"), built.sourceMap);
    assert.deepEqual(
      JSON.parse(await fs.readFile(path.join(outDir, "manifest.json"), "utf8")),
      built.manifest,
    );

    // The bundle runs: the runtime takes the host off the global object and drives the script.
    const ran = await runBundle(path.join(outDir, "script.js"));
    assert.deepEqual(ran.keys, [
      "connect",
      "count",
      "create",
      "disconnect",
      "fire",
      "message",
      "setEnv",
      "settle",
    ]);
    assert.equal(ran.hostHidden, true);
    assert.deepEqual(ran.calls, [
      ["log", "dev_1", "info", "hi from the blink"],
      ["emitState", "dev_1", "temperature", "21.5"],
      ["command", "dev_1", 1, "gpio_toggle", '{"pin":"LED"}'],
    ]);
  });

  test("defaults: no project id, no entities; a custom entry", async (t) => {
    const dir = await project(t, {
      "sdk.ts": sdkTs({ board: "pico_w", entry: "app/main.ts" }),
      "app/main.ts": indexTs,
      "app/label.ts": labelTs,
    });
    const built = ok(await build({ projectDir: dir }));
    assert.equal(built.manifest.board, "pico_w");
    assert.equal(built.manifest.project, null);
    assert.equal(built.manifest.entry, "app/main.ts");
    assert.deepEqual(built.manifest.entities, []);
  });
});

describe("the build cache", () => {
  test("an unchanged project is reused; changes to sources or sdk.ts rebuild", async (t) => {
    const dir = await project(t, validFiles());
    const first = await run({ projectDir: dir });
    const built = ok(first.result);
    assert.equal(built.cached, false);

    const second = await run({ projectDir: dir });
    const cached = ok(second.result);
    assert.equal(cached.cached, true);
    assert.deepEqual(second.steps, ["config", "cached"], "no type check, no bundling");
    assert.ok(
      cached.durationMs < built.durationMs,
      `the cached build (${cached.durationMs} ms) is faster than the first (${built.durationMs} ms)`,
    );
    assert.equal(cached.bundle, built.bundle);
    assert.equal(cached.sourceMap, built.sourceMap);
    assert.deepEqual(cached.manifest, built.manifest);
    assert.equal(cached.outDir, built.outDir);

    // A changed source file (not the entry) rebuilds.
    await fs.writeFile(
      path.join(dir, "src/label.ts"),
      labelTs.replace("from the blink", "from the new blink"),
    );
    const third = await run({ projectDir: dir });
    const rebuilt = ok(third.result);
    assert.equal(rebuilt.cached, false);
    assert.deepEqual(third.steps, ["config", "typecheck", "bundle"]);
    assert.match(rebuilt.bundle, /from the new blink/);
    assert.notEqual(rebuilt.manifest.sha256, built.manifest.sha256);
    assert.equal(await fs.readFile(path.join(dir, ".sdk/build/script.js"), "utf8"), rebuilt.bundle);
    assert.equal(ok(await build({ projectDir: dir })).cached, true);

    // A changed sdk.ts rebuilds, with the new manifest.
    await fs.writeFile(path.join(dir, "sdk.ts"), sdkTs({ board: "pico_w", ha: { entities: [entities[1]] } }));
    const reconfigured = ok(await build({ projectDir: dir }));
    assert.equal(reconfigured.cached, false);
    assert.equal(reconfigured.manifest.board, "pico_w");
    assert.deepEqual(reconfigured.manifest.entities, [entities[1]]);

    // A bundle-only build does not stand in for a type-checked one.
    await fs.writeFile(path.join(dir, "src/index.ts"), `${indexTs}// touched\n`);
    const bundleOnly = await run({ projectDir: dir, skipTypeCheck: true });
    assert.equal(ok(bundleOnly.result).cached, false);
    assert.deepEqual(bundleOnly.steps, ["config", "bundle"]);
    const typed = await run({ projectDir: dir });
    assert.deepEqual(typed.steps, ["config", "typecheck", "bundle"]);

    // Missing output is rebuilt rather than served from the stamp.
    await fs.rm(path.join(dir, ".sdk/build/script.js"));
    const restored = ok(await build({ projectDir: dir }));
    assert.equal(restored.cached, false);
    assert.equal(await fs.readFile(path.join(dir, ".sdk/build/script.js"), "utf8"), restored.bundle);
  });

  test("a changed file imported from outside the project dir rebuilds", {}, async (t) => {
    const root = await project(t, {
      "shared/label.ts": labelTs,
      "app/sdk.ts": sdkTs(),
      "app/src/index.ts": indexTs.replace("./label.ts", "../../shared/label.ts"),
    });
    const dir = path.join(root, "app");
    ok(await build({ projectDir: dir, skipTypeCheck: true }));
    await fs.writeFile(path.join(root, "shared/label.ts"), labelTs.replace("the blink", "the shared blink"));
    const again = ok(await build({ projectDir: dir, skipTypeCheck: true }));
    assert.equal(again.cached, false);
    assert.match(again.bundle, /the shared blink/);
  });
});

describe("type errors", () => {
  test("are located in the project's files with a TS code, and nothing is written", async (t) => {
    const source = indexTs.replace(
      "    await this.env",
      '    const count: number = "three";\n    await this.env.DEVICE.gpioWrite(23, 1);\n    await this.env',
    );
    const dir = await project(t, { ...validFiles(), "src/index.ts": source });
    const diagnostics = failed(await build({ projectDir: dir }));
    assert.equal(diagnostics.length, 2, JSON.stringify(diagnostics));
    const [assign, pin] = diagnostics as [Diagnostic, Diagnostic];

    assert.deepEqual(
      { file: assign.file, code: assign.code, message: assign.message },
      { file: "src/index.ts", code: "TS2322", message: "Type 'string' is not assignable to type 'number'." },
    );
    const at = positionOf(source, "count: number");
    assert.equal(assign.line, at.line);
    assert.equal(assign.column, at.column);
    assert.equal(
      formatDiagnostic(assign),
      `src/index.ts:${at.line}:${at.column} - error TS2322: Type 'string' is not assignable to type 'number'.`,
    );

    // The library's pin types reject a GPIO the board does not have.
    assert.equal(pin.file, "src/index.ts");
    assert.match(pin.code, /^TS\d{4}$/);
    assert.deepEqual({ line: pin.line, column: pin.column }, positionOf(source, "23, 1)"));
    assert.match(pin.message, /23/);
    assert.match(
      formatDiagnostic(pin),
      new RegExp(`^src/index\\.ts:${pin.line}:${pin.column} - error TS\\d{4}: `),
    );

    await assert.rejects(fs.access(path.join(dir, ".sdk/build/script.js")));
    await assert.rejects(fs.access(path.join(dir, ".sdk/build/manifest.json")));
  });

  test("in another file name that file", async (t) => {
    const label = "export const label = (greeting: string): number => greeting;\n";
    const dir = await project(t, { ...validFiles(), "src/label.ts": label });
    const diagnostics = failed(await build({ projectDir: dir }));
    const files = diagnostics.map((d) => d.file);
    assert.ok(files.includes("src/label.ts"), JSON.stringify(diagnostics));
    const d = diagnostics.find((x) => x.file === "src/label.ts")!;
    assert.equal(d.line, 1);
    assert.equal(d.code, "TS2322");
  });
});

describe("Node APIs are not available to scripts", () => {
  const source = `import fs from "node:fs";
import { DeviceScript } from "@sdk/device";

const home = process.env.HOME;
const os = require("node:os");

export default class Reader extends DeviceScript {
  override onDeviceConnect() {
    console.log(fs, home, os);
  }
}
`;

  test("process, require and node:fs are type errors", async (t) => {
    const dir = await project(t, { "sdk.ts": sdkTs(), "src/index.ts": source });
    const diagnostics = failed(await build({ projectDir: dir }));
    for (const [marker, name] of [
      ['"node:fs"', /node:fs/],
      ["process", /process/],
      ["require", /require/],
    ] as const) {
      const at = positionOf(source, marker);
      const d = diagnostics.find((x) => x.line === at.line);
      assert.ok(d, `a diagnostic on line ${at.line}: ${JSON.stringify(diagnostics)}`);
      assert.equal(d.file, "src/index.ts");
      assert.equal(d.column, at.column);
      assert.match(d.code, /^TS\d+$/);
      assert.match(d.message, name);
    }
  });

  test("with skipTypeCheck the bundler refuses node:fs", async (t) => {
    const dir = await project(t, { "sdk.ts": sdkTs(), "src/index.ts": source });
    const { result, steps } = await run({ projectDir: dir, skipTypeCheck: true });
    const diagnostics = failed(result);
    assert.deepEqual(steps, ["config", "bundle"]);
    const d = diagnostics.find((x) => /node:fs/.test(x.message));
    assert.ok(d, JSON.stringify(diagnostics));
    assert.equal(d.code, "esbuild");
    assert.equal(d.message, 'Could not resolve "node:fs"');
    // The file is src/index.ts (see the todo test below for where the path goes wrong).
    assert.equal(path.basename(d.file), "index.ts");
    assert.deepEqual({ line: d.line, column: d.column }, positionOf(source, '"node:fs"'));
  });
});

describe("project configuration errors", () => {
  test("no sdk.ts", async (t) => {
    const dir = await project(t, { "src/index.ts": indexTs });
    const diagnostics = failed(await build({ projectDir: dir }));
    assert.deepEqual(diagnostics, [
      {
        file: "sdk.ts",
        line: 1,
        column: 1,
        code: "config",
        message: "no sdk.ts in this directory; run `sdk init` to make a project here",
      },
    ]);
    assert.equal(
      formatDiagnostic(diagnostics[0]!),
      "sdk.ts:1:1 - error: no sdk.ts in this directory; run `sdk init` to make a project here",
    );
  });

  test("defineConfig throws: the diagnostic names sdk.ts and the field", async (t) => {
    const cases: [config: Record<string, unknown>, message: RegExp][] = [
      [{ board: "pico3" }, /^sdk\.ts: board must be "pico_w" or "pico2_w" \(got "pico3"\)$/],
      [
        { board: "pico_w", ha: { entities: [{ id: "relay", kind: "switch", name: "Relay", unit: "W" }] } },
        /^sdk\.ts: ha\.entities\[0\]\.unit does not belong to a switch: only sensor entities have unit/,
      ],
      [
        { board: "pico_w", ha: { entities: [{ id: "bad id", kind: "sensor", name: "X" }] } },
        /^sdk\.ts: ha\.entities\[0\]\.id must be/,
      ],
    ];
    for (const [config, message] of cases) {
      const dir = await project(t, {
        "sdk.ts": sdkTs(config),
        "src/index.ts": indexTs,
        "src/label.ts": labelTs,
      });
      const { result, steps } = await run({ projectDir: dir });
      const diagnostics = failed(result);
      assert.deepEqual(steps, ["config"]);
      assert.equal(diagnostics.length, 1);
      const [d] = diagnostics as [Diagnostic];
      assert.equal(d.file, "sdk.ts");
      assert.equal(d.code, "config");
      assert.match(d.message, message);
      assert.match(formatDiagnostic(d), /^sdk\.ts:\d+:\d+ - error: sdk\.ts: /);
    }
  });

  test("ha.entities rules: the diagnostic points at the entity's line in sdk.ts", async (t) => {
    const source = `import { defineConfig } from "@sdk/device";

export default defineConfig({
  board: "pico_w",
  ha: {
    entities: [
      { id: "led", kind: "switch", name: "LED" },
      { id: "temp.inside", kind: "sensor", name: "Inside", unit: "°C", deviceClass: "temperature" },
      { id: "outside", kind: "sensor", name: "Outside", unit: "C", deviceClass: "temperature" },
    ],
  },
});
`;
    const cases: [sdk: string, line: number, message: RegExp][] = [
      [
        source,
        8,
        /^sdk\.ts: ha\.entities\[1\]\.id "temp\.inside" contains "\.", which Home Assistant's MQTT discovery topics and unique ids do not allow: rename it, e\.g\. to "temp_inside"/,
      ],
      [
        source.replace("temp.inside", "temp_inside"),
        9,
        /^sdk\.ts: ha\.entities\[2\]\.unit "C" is not valid with deviceClass "temperature": Home Assistant \(2025\.7 and later\) rejects the entity; use one of "°C", "°F", "K"/,
      ],
      [
        source
          .replace("temp.inside", "temp_inside")
          .replace('unit: "C"', 'unit: "°F"')
          .replace('name: "LED" }', 'name: "LED", rgb: true }'),
        7,
        /^sdk\.ts: ha\.entities\[0\]\.rgb does not belong to a switch: only light entities have rgb/,
      ],
    ];
    for (const [sdk, line, message] of cases) {
      const dir = await project(t, { "sdk.ts": sdk, "src/index.ts": indexTs, "src/label.ts": labelTs });
      const [d, ...more] = failed(await build({ projectDir: dir })) as [Diagnostic];
      assert.deepEqual(more, []);
      assert.match(d.message, message);
      assert.deepEqual(
        { file: d.file, line: d.line, code: d.code },
        { file: "sdk.ts", line, code: "config" },
      );
      assert.equal(d.column, sdk.split("\n")[line - 1]!.indexOf('"') + 1, "the column of the entity's id");
      assert.match(
        formatDiagnostic(d),
        new RegExp(`^sdk\\.ts:${line}:\\d+ - error: sdk\\.ts: ha\\.entities`),
      );
    }
    // Fixed, the same project builds, and the manifest carries the entities as declared.
    const fixed = source.replace("temp.inside", "temp_inside").replace('unit: "C"', 'unit: "°F"');
    const dir = await project(t, { "sdk.ts": fixed, "src/index.ts": indexTs, "src/label.ts": labelTs });
    const built = ok(await build({ projectDir: dir }));
    assert.deepEqual(
      built.manifest.entities.map((e) => [e.id, e.kind, e.unit]),
      [
        ["led", "switch", undefined],
        ["temp_inside", "sensor", "°C"],
        ["outside", "sensor", "°F"],
      ],
    );
  });

  test("a syntax error or a missing default export in sdk.ts", async (t) => {
    const broken =
      'import { defineConfig } from "@sdk/device";\nexport default defineConfig({ board: , });\n';
    let dir = await project(t, { "sdk.ts": broken, "src/index.ts": indexTs });
    let [d] = failed(await build({ projectDir: dir })) as [Diagnostic];
    assert.deepEqual(
      { file: d.file, code: d.code, line: d.line },
      { file: "sdk.ts", code: "config", line: 2 },
    );
    assert.equal(d.column, positionOf(broken, ", }").column);

    dir = await project(t, {
      "sdk.ts": 'export const config = { board: "pico_w" };\n',
      "src/index.ts": indexTs,
    });
    [d] = failed(await build({ projectDir: dir })) as [Diagnostic];
    assert.equal(d.file, "sdk.ts");
    assert.match(d.message, /export default defineConfig/);
  });

  test("a missing entry file", async (t) => {
    let dir = await project(t, { "sdk.ts": sdkTs() });
    assert.deepEqual(failed(await build({ projectDir: dir })), [
      {
        file: "src/index.ts",
        line: 1,
        column: 1,
        code: "config",
        message: "the entry file src/index.ts does not exist",
      },
    ]);

    dir = await project(t, {
      "sdk.ts": sdkTs({ board: "pico_w", entry: "src/main.ts" }),
      "src/index.ts": indexTs,
    });
    const [d] = failed(await build({ projectDir: dir })) as [Diagnostic];
    assert.equal(d.file, "src/main.ts");
    assert.equal(formatDiagnostic(d), "src/main.ts:1:1 - error: the entry file src/main.ts does not exist");
  });
});

describe("syntax errors", () => {
  const source = indexTs.replace("    await this.env", "    const = ;\n    await this.env");

  test("the type checker reports them first", async (t) => {
    const dir = await project(t, { ...validFiles(), "src/index.ts": source });
    const [d] = failed(await build({ projectDir: dir })) as [Diagnostic];
    assert.equal(d.file, "src/index.ts");
    assert.equal(d.line, positionOf(source, "const = ;").line);
    assert.match(d.code, /^TS1\d{3}$/);
  });

  test("with skipTypeCheck the bundler reports them with file and line", async (t) => {
    const dir = await project(t, { ...validFiles(), "src/index.ts": source });
    const [d] = failed(await build({ projectDir: dir, skipTypeCheck: true })) as [Diagnostic];
    const at = positionOf(source, "= ;");
    assert.equal(path.basename(d.file), "index.ts");
    assert.deepEqual({ line: d.line, column: d.column, code: d.code }, { ...at, code: "esbuild" });
    assert.equal(d.message, 'Expected identifier but found "="');
    assert.equal(
      formatDiagnostic({ ...d, file: "src/index.ts" }),
      `src/index.ts:${at.line}:${at.column} - error: Expected identifier but found "="`,
    );
  });

  test("bundler diagnostics are relative to the project dir wherever it is", {}, async (t) => {
    // esbuild reports paths relative to process.cwd(); they only come out right when the
    // project happens to sit at the same depth as the cwd.
    const dir = await project(t, { ...validFiles(), "src/index.ts": source }, 5);
    const [d] = failed(await build({ projectDir: dir, skipTypeCheck: true })) as [Diagnostic];
    assert.equal(d.file, "src/index.ts");
  });
});
