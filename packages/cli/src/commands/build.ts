import path from "node:path";
import { type BuildResult, build as buildProject, formatDiagnostic } from "@sdk/build";
import type { Command } from "../command.ts";
import type { Globals } from "../context.ts";

const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;

/** Runs the shared build function with progress output; prints diagnostics on failure. */
export async function runBuild(g: Globals): Promise<BuildResult> {
  const result = await buildProject({
    projectDir: g.dir,
    onStep: (step) => {
      if (step === "config") g.out.step("Reading sdk.ts");
      if (step === "typecheck") g.out.step("Type-checking");
      if (step === "bundle") g.out.step("Bundling");
    },
  });
  g.out.stopSpinner();
  if (!result.ok) {
    for (const d of result.diagnostics) g.out.info(`${g.out.red(formatDiagnostic(d))}`);
    g.out.info(
      g.out.red(
        `✖ Build failed with ${result.diagnostics.length} error${result.diagnostics.length === 1 ? "" : "s"}`,
      ),
    );
  }
  return result;
}

export const build: Command = {
  name: "build",
  summary: "Type-check and bundle the project's device script",
  usage: "sdk build [--dir <project>] [--json]",
  details:
    "Reads sdk.ts, type-checks the project against @sdk/device, and bundles the entry into one ES module with a source map in .sdk/build/. Unchanged input reuses the last build. Errors are printed as file:line:column and the exit code is 1.",
  json: true,
  async run({ g }) {
    const result = await runBuild(g);
    if (!result.ok) {
      g.out.result({ ok: false, diagnostics: result.diagnostics });
      return 1;
    }
    const out = path.relative(process.cwd(), result.outDir) || ".";
    g.out.result({
      ok: true,
      cached: result.cached,
      durationMs: result.durationMs,
      outDir: result.outDir,
      manifest: result.manifest,
      bytes: Buffer.byteLength(result.bundle),
    });
    g.out.line(
      `${g.out.green("✔")} Built ${result.manifest.entry} → ${path.join(out, "script.js")} (${kb(Buffer.byteLength(result.bundle))}, ${result.durationMs} ms${result.cached ? ", unchanged" : ""})`,
    );
    return 0;
  },
};

export { kb };
