import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { ProjectConfig } from "@sdk/device";
import type { BuiltManifest } from "@sdk/protocol";
import * as esbuild from "esbuild";
import { scriptTsconfig, writeScriptTypes } from "./types.ts";

const require = createRequire(import.meta.url);
const deviceEntry = fileURLToPath(import.meta.resolve("@sdk/device"));
const deviceRuntime = fileURLToPath(import.meta.resolve("@sdk/device/runtime"));
const hardwareEntry = fileURLToPath(import.meta.resolve("@sdk/protocol/hardware"));
const deviceRoot = path.dirname(path.dirname(deviceEntry));
const libraryVersion: string = JSON.parse(
  await fs.readFile(path.join(deviceRoot, "package.json"), "utf8"),
).version;

/** A problem found by the type checker or the bundler, located in the project's files. */
export interface Diagnostic {
  /** Path relative to the project directory. */
  file: string;
  line: number;
  column: number;
  message: string;
  /** e.g. TS2322, or "esbuild", or "config". */
  code: string;
}

/** What the server stores with a deployment (`sha256` is the bundle's). */
export type Manifest = BuiltManifest;

export type BuildResult =
  | {
      ok: true;
      bundle: string;
      sourceMap: string;
      manifest: Manifest;
      /** Where the files were written (`<project>/.sdk/build`). */
      outDir: string;
      /** True when nothing changed since the last build and its output was reused. */
      cached: boolean;
      durationMs: number;
    }
  | { ok: false; diagnostics: Diagnostic[]; durationMs: number };

export interface BuildOptions {
  /** The project directory (holding sdk.ts). */
  projectDir: string;
  /** Skip the type check (bundle only). */
  skipTypeCheck?: boolean;
  /** Reports each step, for progress output. */
  onStep?: (step: "config" | "typecheck" | "bundle" | "cached") => void;
}

const aliases = {
  "@sdk/device": deviceEntry,
  "@sdk/device/runtime": deviceRuntime,
  "@sdk/protocol/hardware": hardwareEntry,
};

export function formatDiagnostic(d: Diagnostic): string {
  return `${d.file}:${d.line}:${d.column} - ${d.code === "esbuild" || d.code === "config" ? "error" : `error ${d.code}`}: ${d.message}`;
}

async function exists(file: string): Promise<boolean> {
  return fs.access(file).then(
    () => true,
    () => false,
  );
}

/** Loads sdk.ts (bundled by esbuild, so it needs no installed packages) and validates it. */
async function loadConfig(projectDir: string, cacheDir: string): Promise<ProjectConfig | Diagnostic> {
  const file = path.join(projectDir, "sdk.ts");
  if (!(await exists(file))) {
    return {
      file: "sdk.ts",
      line: 1,
      column: 1,
      code: "config",
      message: noConfigMessage,
    };
  }
  try {
    const out = await esbuild.build({
      entryPoints: [file],
      bundle: true,
      write: false,
      format: "esm",
      platform: "neutral",
      alias: aliases,
      logLevel: "silent",
    });
    const compiled = path.join(cacheDir, `config-${process.pid}-${Date.now()}.mjs`);
    await fs.writeFile(compiled, out.outputFiles[0]!.text);
    try {
      const loaded = (await import(pathToFileURL(compiled).href)) as { default?: ProjectConfig };
      if (!loaded.default) throw new Error("sdk.ts must `export default defineConfig({ … })`");
      return loaded.default;
    } finally {
      await fs.rm(compiled, { force: true });
    }
  } catch (error) {
    const entityId = (error as { entityId?: unknown }).entityId;
    if (typeof entityId === "string") {
      // A rule of ha.entities: point at the line that declares the entity.
      const lines = (await fs.readFile(file, "utf8")).split("\n");
      const quotes = [`"${entityId}"`, `'${entityId}'`, `\`${entityId}\``];
      const line = lines.findIndex((l) => quotes.some((q) => l.includes(q)));
      if (line >= 0) {
        const column = Math.min(...quotes.map((q) => lines[line]!.indexOf(q)).filter((c) => c >= 0)) + 1;
        return { file: "sdk.ts", line: line + 1, column, code: "config", message: (error as Error).message };
      }
    }
    const first = (error as esbuild.BuildFailure).errors?.[0];
    return {
      file:
        path.relative(projectDir, first?.location?.file ? path.resolve(first.location.file) : file) ||
        "sdk.ts",
      line: first?.location?.line ?? 1,
      column: (first?.location?.column ?? 0) + 1,
      code: "config",
      message: first?.text ?? (error as Error).message,
    };
  }
}

/** What a build says when the directory has no sdk.ts. */
const noConfigMessage = "no sdk.ts in this directory; run `sdk init` to make a project here";

/** sdk.ts is missing or cannot be loaded; the message is the diagnostic as `file:line:column - error: …`. */
export class ProjectConfigError extends Error {
  readonly diagnostic: Diagnostic;
  /** There is no sdk.ts at all (rather than one that does not load). */
  readonly missing: boolean;

  constructor(diagnostic: Diagnostic) {
    super(formatDiagnostic(diagnostic));
    this.name = "ProjectConfigError";
    this.diagnostic = diagnostic;
    this.missing = diagnostic.message === noConfigMessage;
  }
}

/** Reads a project's sdk.ts; throws a ProjectConfigError whose message names the problem (file:line: …). */
export async function loadProjectConfig(projectDir: string): Promise<ProjectConfig> {
  const dir = path.resolve(projectDir);
  const cacheDir = path.join(dir, ".sdk");
  await fs.mkdir(cacheDir, { recursive: true });
  const config = await loadConfig(dir, cacheDir);
  if ("message" in config) throw new ProjectConfigError(config);
  return config;
}

async function inputHash(projectDir: string, entries: string[]): Promise<string> {
  const hash = createHash("sha256").update(libraryVersion);
  const walk = async (dir: string): Promise<string[]> => {
    const items = await fs.readdir(dir, { withFileTypes: true }).catch(() => []);
    const files: string[] = [];
    for (const item of items) {
      if (item.name === "node_modules" || item.name.startsWith(".")) continue;
      const full = path.join(dir, item.name);
      if (item.isDirectory()) files.push(...(await walk(full)));
      else if (/\.(ts|mts|js|mjs|json)$/.test(item.name)) files.push(full);
    }
    return files;
  };
  const files = [...new Set([...entries, ...(await walk(projectDir))])].sort();
  for (const file of files) {
    hash.update(path.relative(projectDir, file)).update("\0");
    hash.update(await fs.readFile(file).catch(() => Buffer.alloc(0))).update("\0");
  }
  return hash.digest("hex");
}

/**
 * Runs the TypeScript checker over the project, against the library's types in `.sdk/types` and the
 * sandbox's globals only: what an editor sees with the tsconfig.json `sdk init` writes.
 */
async function typeCheck(projectDir: string, cacheDir: string): Promise<Diagnostic[]> {
  const tsconfig = path.join(cacheDir, "tsconfig.json");
  const { compilerOptions, globals } = scriptTsconfig(".sdk");
  await fs.writeFile(
    tsconfig,
    JSON.stringify(
      {
        compilerOptions,
        include: [path.join(projectDir, "**/*.ts"), globals],
        exclude: [path.join(projectDir, "node_modules")],
      },
      null,
      2,
    ),
  );
  const tsc = path.join(path.dirname(require.resolve("typescript/package.json")), "bin", "tsc");
  const output = await new Promise<string>((resolve) => {
    execFile(
      process.execPath,
      [tsc, "-p", tsconfig, "--pretty", "false"],
      { cwd: projectDir, maxBuffer: 16 * 1024 * 1024 },
      (_err, stdout, stderr) => resolve(`${stdout}${stderr}`),
    );
  });
  const diagnostics: Diagnostic[] = [];
  for (const line of output.split("\n")) {
    const m = /^(.+?)\((\d+),(\d+)\): error (TS\d+): (.*)$/.exec(line.trim());
    if (!m) continue;
    const file = path.relative(projectDir, path.resolve(projectDir, m[1]!));
    if (file.startsWith("..")) continue; // only the project's own files
    diagnostics.push({ file, line: Number(m[2]), column: Number(m[3]), code: m[4]!, message: m[5]! });
  }
  if (diagnostics.length === 0 && /error TS\d+/.test(output)) {
    diagnostics.push({
      file: "tsconfig.json",
      line: 1,
      column: 1,
      code: "config",
      message: output.trim().split("\n")[0]!,
    });
  }
  return diagnostics;
}

/**
 * Builds a project: loads `sdk.ts`, type-checks the sources, and bundles the entry with
 * `@sdk/device` into one ES module with a source map. Output goes to `<project>/.sdk/build/`;
 * an unchanged project reuses the previous output.
 */
export async function build(options: BuildOptions): Promise<BuildResult> {
  const started = performance.now();
  const projectDir = path.resolve(options.projectDir);
  const cacheDir = path.join(projectDir, ".sdk");
  const outDir = path.join(cacheDir, "build");
  await fs.mkdir(outDir, { recursive: true });
  await writeScriptTypes(projectDir);
  const elapsed = () => Math.round(performance.now() - started);

  options.onStep?.("config");
  const config = await loadConfig(projectDir, cacheDir);
  if ("message" in config) return { ok: false, diagnostics: [config], durationMs: elapsed() };
  const entry = path.join(projectDir, config.entry ?? "src/index.ts");
  if (!(await exists(entry))) {
    const file = path.relative(projectDir, entry);
    return {
      ok: false,
      diagnostics: [
        { file, line: 1, column: 1, code: "config", message: `the entry file ${file} does not exist` },
      ],
      durationMs: elapsed(),
    };
  }

  // Files the last bundle read (some may live outside the project) count as inputs too.
  const inputsFile = path.join(outDir, "inputs.json");
  const previousInputs = JSON.parse(await fs.readFile(inputsFile, "utf8").catch(() => "[]")) as string[];
  const key = await inputHash(projectDir, [entry, path.join(projectDir, "sdk.ts"), ...previousInputs]);
  const stamp = path.join(outDir, "inputs.sha256");
  if (
    (await fs.readFile(stamp, "utf8").catch(() => "")) === `${key}${options.skipTypeCheck ? "" : "+types"}`
  ) {
    try {
      const [bundle, sourceMap, manifest] = await Promise.all([
        fs.readFile(path.join(outDir, "script.js"), "utf8"),
        fs.readFile(path.join(outDir, "script.js.map"), "utf8"),
        fs.readFile(path.join(outDir, "manifest.json"), "utf8"),
      ]);
      options.onStep?.("cached");
      return {
        ok: true,
        bundle,
        sourceMap,
        manifest: JSON.parse(manifest),
        outDir,
        cached: true,
        durationMs: elapsed(),
      };
    } catch {
      // fall through and rebuild
    }
  }

  if (!options.skipTypeCheck) {
    options.onStep?.("typecheck");
    const diagnostics = await typeCheck(projectDir, cacheDir);
    if (diagnostics.length > 0) return { ok: false, diagnostics, durationMs: elapsed() };
  }

  options.onStep?.("bundle");
  let result: esbuild.BuildResult & { outputFiles: esbuild.OutputFile[] };
  try {
    result = await esbuild.build({
      stdin: {
        // The runtime first: it takes the host functions off the global object before user code runs.
        contents: `import { createRuntime } from "@sdk/device/runtime";\nimport Script from ${JSON.stringify(entry)};\nexport default createRuntime(Script);\n`,
        resolveDir: projectDir,
        sourcefile: "sdk-entry.js",
        loader: "js",
      },
      bundle: true,
      write: false,
      format: "esm",
      platform: "neutral",
      target: "es2022",
      sourcemap: "external",
      sourcesContent: true,
      keepNames: true,
      outfile: path.join(outDir, "script.js"),
      metafile: true,
      alias: aliases,
      logLevel: "silent",
    });
  } catch (error) {
    const failure = error as esbuild.BuildFailure;
    return {
      ok: false,
      diagnostics: (failure.errors ?? [{ text: String(error), location: null }]).map((e) => ({
        file: e.location?.file ? path.relative(projectDir, path.resolve(e.location.file)) : "(bundle)",
        line: e.location?.line ?? 1,
        column: (e.location?.column ?? 0) + 1,
        code: "esbuild",
        message: e.text,
      })),
      durationMs: elapsed(),
    };
  }
  const bundle = result.outputFiles.find((f) => f.path.endsWith(".js"))!.text;
  const sourceMap = result.outputFiles.find((f) => f.path.endsWith(".map"))!.text;
  const manifest: Manifest = {
    board: config.board,
    project: config.project ?? null,
    entry: path.relative(projectDir, entry),
    entities: config.ha?.entities ?? [],
    libraryVersion,
    sha256: createHash("sha256").update(bundle).digest("hex"),
  };
  await Promise.all([
    fs.writeFile(path.join(outDir, "script.js"), bundle),
    fs.writeFile(path.join(outDir, "script.js.map"), sourceMap),
    fs.writeFile(path.join(outDir, "manifest.json"), `${JSON.stringify(manifest, null, 2)}\n`),
  ]);
  const inputs = Object.keys(result.metafile?.inputs ?? {})
    .filter((f) => !f.startsWith("<") && !f.includes("node_modules"))
    .map((f) => path.resolve(f))
    .filter((f) => !f.startsWith(deviceRoot));
  await fs.writeFile(inputsFile, JSON.stringify(inputs));
  const newKey = await inputHash(projectDir, [entry, path.join(projectDir, "sdk.ts"), ...inputs]);
  await fs.writeFile(stamp, `${newKey}${options.skipTypeCheck ? "" : "+types"}`);
  return { ok: true, bundle, sourceMap, manifest, outDir, cached: false, durationMs: elapsed() };
}
