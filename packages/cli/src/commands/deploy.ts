import { SdkApiError, type SdkClient } from "@sdk/client";
import type { Deployment, HomeAssistantStatus, RolloutOptions } from "@sdk/protocol";
import { followCanary, followHint } from "../canary-follow.ts";
import type { Command } from "../command.ts";
import { connect, projectId } from "../context.ts";
import { CliError, UsageError } from "../errors.ts";
import { localTime, type Output } from "../output.ts";
import { clock, parseCanary, parseWindow, rolledBackReason, targetText } from "../rollout-lines.ts";
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

/** The rollout the flags ask for (usage errors for flags that do not go together). */
function rolloutOptions(values: Record<string, string | boolean | undefined>): RolloutOptions | undefined {
  const canary = values.canary as string | undefined;
  if (canary === undefined) {
    if (values.window !== undefined) throw new UsageError("--window is the window of a --canary", "deploy");
    if (values["no-wait"])
      throw new UsageError("--no-wait is for a --canary (a plain deploy returns once it is live)", "deploy");
    return values["no-rollback"] ? { rollback: false } : undefined;
  }
  if (values["no-rollback"])
    throw new UsageError(
      "--no-rollback is for a plain deploy; a canary is always promoted or rolled back",
      "deploy",
    );
  return {
    canary: parseCanary(canary),
    ...(values.window === undefined ? {} : { windowSeconds: parseWindow(values.window as string) }),
  };
}

/** `--canary 25` found no device tagged "25": say how a share is written. */
function withShareHint(error: unknown, canary: RolloutOptions["canary"]): unknown {
  if (!(error instanceof SdkApiError) || error.code !== "no_canary_devices") return error;
  if (!canary || !("tag" in canary) || !/^\d+$/.test(canary.tag)) return error;
  return new CliError(
    `${error.message.replace(/\.$/, "")}. For a share of the connected devices, write --canary ${canary.tag}%`,
    { code: error.code, docs: error.docs },
  );
}

const homeAssistantOf = (client: SdkClient, id: string) =>
  client.api.getHomeAssistant({ params: { projectId: id } }).catch(() => null);

/** "on 2 devices (tag kitchen) for 5:00" */
function canaryStarted(out: Output, deployment: Deployment): string {
  const r = deployment.rollout;
  if (!r) return `Canary v${deployment.version} started`;
  const n = r.devices.length;
  return `${out.cyan("◐")} Canary v${deployment.version} started on ${n} device${n === 1 ? "" : "s"} (${targetText(r.target)}) for ${clock(r.windowSeconds)}, against ${r.stableDeploymentId ? "the live version" : "no live version"} on the others`;
}

export const deploy: Command = {
  name: "deploy",
  summary: "Build if needed, upload, and report the deployment's final status",
  usage:
    "sdk deploy [--canary <tag|N%>] [--window <90s|5m>] [--no-wait] [--no-rollback] [--verbose] [--project prj_…] [--dir <project>] [--json]",
  details: [
    "The server loads the new version in a sandbox before it goes live; connected devices switch to it without disconnecting. If it fails to load, the previous version stays live, the error is shown and the exit code is 1. The Home Assistant entities declared in sdk.ts (ha.entities) are published with it.",
    "A plain deploy is watched for its first minute: if every device's onDeviceConnect throws (a crash loop), the server puts the previous version back by itself. When that happens at once, sdk deploy shows the reason and exits 1.",
    "With --canary the new version runs only on the devices with the tag, or on that share of the connected devices; the others keep the live version. For the window (default 5 minutes, the server's CANARY_WINDOW_SECONDS) the server compares the canary's health with the live version's: script errors and timeouts per handler call, disconnects, command errors. Inside the thresholds it is promoted to every device; outside, it is rolled back at once. sdk deploy waits and shows both sides' figures and the time left, then the decision and its reason: exit 0 when promoted, 1 when rolled back. Exit 1 also when it stops waiting before the decision (Ctrl-C, the server unreachable for a minute, the canary undecided a minute after its window): the canary goes on on the server; --json then prints { ok: false, stopped: <why>, deployment } and sdk status shows how it is doing.",
  ].join("\n\n"),
  options: {
    verbose: { type: "boolean" },
    canary: { type: "string" },
    window: { type: "string" },
    "no-wait": { type: "boolean" },
    "no-rollback": { type: "boolean" },
  },
  optionHelp: [
    "--verbose          show each step with sizes and timings",
    "--canary <tag|N%>  run it first on the devices with this tag, or on N% of the connected devices (25%)",
    "--window <time>    how long the canary is compared before the decision: seconds (90), 90s, 5m, 1h",
    "--no-wait          with --canary: return once the canary started (exit 0); it decides by itself",
    "--no-rollback      a plain deploy: no automatic rollback when it crash-loops in its first minute",
  ],
  json: true,
  async run({ values, g }) {
    const verbose = Boolean(values.verbose) && !g.out.json;
    const rollout = rolloutOptions(values);
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
    let deployment = await client.api
      .createDeployment({
        params: { projectId: id },
        body: {
          bundle: built.bundle,
          sourceMap: built.sourceMap,
          manifest: built.manifest,
          ...(rollout ? { rollout } : {}),
        },
      })
      .catch((error: unknown) => {
        throw withShareHint(error, rollout?.canary);
      });
    g.out.stopSpinner();
    if (verbose) g.out.info(`upload + load check: ${Math.round(performance.now() - uploadStarted)} ms`);
    const durationMs = () => Math.round(performance.now() - started);

    if (deployment.status === "canary") {
      g.out.line(canaryStarted(g.out, deployment));
      if (values["no-wait"]) {
        g.out.result({ ok: true, deployment, homeAssistant: null, durationMs: durationMs() });
        g.out.line(followHint(deployment, host, id));
        return 0;
      }
      const followed = await followCanary(client, id, deployment, g.out);
      deployment = followed.deployment;
      if (followed.stopped) {
        g.out.result({
          ok: false,
          stopped: followed.stopped,
          deployment,
          homeAssistant: null,
          durationMs: durationMs(),
        });
        g.out.info(`Stopped waiting (${followed.stopped}).`);
        g.out.info(followHint(deployment, host, id));
        return 1;
      }
    }

    const ok = deployment.status === "active";
    // The entities the server published to Home Assistant (a server without the bridge says enabled: false).
    const homeAssistant = ok ? await homeAssistantOf(client, id) : null;
    g.out.result({ ok, deployment, homeAssistant, durationMs: durationMs() });
    if (ok) {
      const canary = deployment.rollout?.kind === "canary";
      g.out.line(
        canary
          ? `${g.out.green("✔")} Canary v${deployment.version} promoted: live on every device of ${id} since ${localTime(deployment.activatedAt)}`
          : `${g.out.green("✔")} Deployed v${deployment.version} to ${id} — live since ${localTime(deployment.activatedAt)}`,
      );
      if (canary && deployment.rollout?.reason) g.out.line(g.out.dim(deployment.rollout.reason));
      for (const line of homeAssistantLines(homeAssistant, built.manifest.entities.length)) g.out.line(line);
      return 0;
    }
    if (deployment.status === "rolled_back") {
      const what = deployment.rollout?.kind === "canary" ? "Canary" : "Deployment";
      g.out.info(
        g.out.red(`✖ ${what} v${deployment.version} was rolled back; the previous version stays live:`),
      );
      g.out.info(rolledBackReason(deployment));
      return 1;
    }
    g.out.info(g.out.red(`✖ Deployment v${deployment.version} failed; the previous version stays live:`));
    g.out.info(deployment.error ?? "(no error text)");
    return 1;
  },
};
