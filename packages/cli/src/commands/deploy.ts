import type { Command } from "../command.ts";
import { connect, projectId } from "../context.ts";
import { localTime } from "../output.ts";
import { kb, runBuild } from "./build.ts";

export const deploy: Command = {
  name: "deploy",
  summary: "Build if needed, upload, and report the deployment's final status",
  usage: "sdk deploy [--verbose] [--project prj_…] [--dir <project>] [--json]",
  details:
    "The server loads the new version in a sandbox before it goes live; connected devices switch to it without disconnecting. If it fails to load, the previous version stays live, the error is shown and the exit code is 1. The Home Assistant entities declared in sdk.ts (ha.entities) are published with it.",
  options: { verbose: { type: "boolean" } },
  optionHelp: ["--verbose   show each step with sizes and timings"],
  json: true,
  async run({ values, g }) {
    const verbose = Boolean(values.verbose) && !g.out.json;
    const { client, host } = await connect(g);
    const id = await projectId(g);
    const started = performance.now();
    const built = await runBuild(g);
    if (!built.ok) {
      g.out.result({ ok: false, stage: "build", diagnostics: built.diagnostics });
      return 1;
    }
    if (verbose) {
      g.out.info(
        `build: ${built.manifest.entry}, ${kb(Buffer.byteLength(built.bundle))} bundle, ${kb(Buffer.byteLength(built.sourceMap))} source map, ${built.durationMs} ms${built.cached ? " (unchanged)" : ""}`,
      );
      g.out.info(
        `sha256: ${built.manifest.sha256}; board ${built.manifest.board}; ${built.manifest.entities.length} Home Assistant entities`,
      );
    }
    g.out.step(`Uploading to ${host}`);
    const uploadStarted = performance.now();
    const deployment = await client.api.createDeployment({
      params: { projectId: id },
      body: { bundle: built.bundle, sourceMap: built.sourceMap, manifest: built.manifest },
    });
    g.out.stopSpinner();
    if (verbose) g.out.info(`upload + load check: ${Math.round(performance.now() - uploadStarted)} ms`);
    const ok = deployment.status === "active";
    g.out.result({ ok, deployment, durationMs: Math.round(performance.now() - started) });
    if (ok) {
      g.out.line(
        `${g.out.green("✔")} Deployed v${deployment.version} to ${id} — live since ${localTime(deployment.activatedAt)}`,
      );
      return 0;
    }
    g.out.info(g.out.red(`✖ Deployment v${deployment.version} failed; the previous version stays live:`));
    g.out.info(deployment.error ?? "(no error text)");
    return 1;
  },
};
