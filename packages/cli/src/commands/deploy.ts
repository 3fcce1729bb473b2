import type { HomeAssistantStatus } from "@sdk/protocol";
import type { Command } from "../command.ts";
import { connect, projectId } from "../context.ts";
import { localTime } from "../output.ts";
import { kb, runBuild } from "./build.ts";

/** What `sdk deploy` says about Home Assistant: the entities published, or why none are. */
export function homeAssistantLines(status: HomeAssistantStatus | null, declared: number): string[] {
  if (declared === 0 || !status) return [];
  if (!status.enabled)
    return [
      `Home Assistant: ${declared} entities declared; this server has no MQTT_URL, so none are published`,
    ];
  const where = `${status.broker}${status.connected ? "" : ", not connected: published once the broker answers"}`;
  if (status.devices.length === 0)
    return [`Home Assistant (${where}): no devices in this project yet; entities appear when you add one`];
  return [
    `Home Assistant (${where}):`,
    ...status.devices.map((d) => {
      const entities = d.entities.map((e) => e.defaultEntityId).join(", ");
      if (d.deletedInHomeAssistant)
        return `  ${d.name}: deleted in Home Assistant's UI, not published (the next deploy publishes ${entities} again)`;
      if (!d.published) return `  ${d.name}: pending, not on the broker yet: ${entities}`;
      return `  ${d.name}: ${entities}`;
    }),
  ];
}

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
    // The entities the server published to Home Assistant (a server without the bridge says enabled: false).
    const homeAssistant = ok
      ? await client.api.getHomeAssistant({ params: { projectId: id } }).catch(() => null)
      : null;
    g.out.result({ ok, deployment, homeAssistant, durationMs: Math.round(performance.now() - started) });
    if (ok) {
      g.out.line(
        `${g.out.green("✔")} Deployed v${deployment.version} to ${id} — live since ${localTime(deployment.activatedAt)}`,
      );
      for (const line of homeAssistantLines(homeAssistant, built.manifest.entities.length)) g.out.line(line);
      return 0;
    }
    g.out.info(g.out.red(`✖ Deployment v${deployment.version} failed; the previous version stays live:`));
    g.out.info(deployment.error ?? "(no error text)");
    return 1;
  },
};
