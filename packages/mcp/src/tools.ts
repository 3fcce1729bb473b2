import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { build, formatDiagnostic, loadProjectConfig } from "@sdk/build";
import { SdkApiError, SdkClient, SdkNetworkError } from "@sdk/client";
import { resolveCredentials } from "@sdk/client/credentials";
import {
  customTypePattern,
  idPattern,
  idPrefixes,
  type LogLevel,
  logLevels,
  pageLimits,
  RolloutOptions,
  rolloutLimits,
} from "@sdk/protocol";
import { z } from "zod";
import {
  CanaryAction,
  CanaryInput,
  canaryTarget,
  rolloutText,
  waitForDecision,
  waitForDecisionSeconds,
  windowEndsBefore,
} from "./canary.ts";

/** A tool failure to report to the agent (never a crash of the server). */
class ToolError extends Error {
  readonly code: string;
  readonly docs?: string;

  constructor(code: string, message: string, docs?: string) {
    super(message);
    this.code = code;
    this.docs = docs;
  }
}

export interface ToolContext {
  env: Record<string, string | undefined>;
  /** Aborts when the agent cancels the call (or the connection closes). */
  signal?: AbortSignal;
}

async function client(ctx: ToolContext): Promise<SdkClient> {
  const found = await resolveCredentials(ctx.env);
  if (found && "error" in found) {
    throw new ToolError(
      "not_logged_in",
      "SDK_TOKEN is set but SDK_HOST is not: set SDK_HOST to the server's URL (e.g. http://pi.local:8080).",
    );
  }
  if (!found) {
    throw new ToolError(
      "not_logged_in",
      "Not logged in to an sdk server. Ask the user to run `sdk login --host http://<server>:8080` in a terminal (or set SDK_TOKEN and SDK_HOST), then try again.",
    );
  }
  return new SdkClient({ baseUrl: found.host, token: found.token });
}

/** Readable text plus the same data as structured content. */
function ok(text: string, data: Record<string, unknown>): CallToolResult {
  return { content: [{ type: "text", text }], structuredContent: data };
}

export function failure(error: unknown): CallToolResult {
  let e: ToolError;
  if (error instanceof ToolError) e = error;
  else if (error instanceof SdkApiError) e = new ToolError(error.code, error.message, error.docs);
  else if (error instanceof SdkNetworkError) e = new ToolError("unreachable", error.message);
  else e = new ToolError("internal_error", error instanceof Error ? error.message : String(error));
  const detail = { code: e.code, message: e.message, ...(e.docs ? { docs: e.docs } : {}) };
  return {
    isError: true,
    content: [{ type: "text", text: `Error ${e.code}: ${e.message}${e.docs ? ` (see ${e.docs})` : ""}` }],
    structuredContent: { error: detail },
  };
}

const ProjectId = z
  .string()
  .regex(idPattern(idPrefixes.project))
  .describe("A project id, prj_… (from list_projects)");
const DeviceId = z
  .string()
  .regex(idPattern(idPrefixes.device))
  .describe("A device id, dev_… (from list_devices)");
const ProjectDir = z
  .string()
  .min(1)
  .describe("Absolute path of the local project directory (the one holding sdk.ts)");

/** canary "25" found no device tagged "25": say how a share is written. */
function withShareHint(error: unknown, canary: string | undefined): unknown {
  if (
    !(error instanceof SdkApiError) ||
    error.code !== "no_canary_devices" ||
    !canary ||
    !/^\d+$/.test(canary)
  )
    return error;
  return new ToolError(
    error.code,
    `${error.message.replace(/\.$/, "")}. For a share of the connected devices, write canary "${canary}%".`,
    error.docs,
  );
}

/** The deploy tool's canaryAction: the project's running canary (or newest rollout), or end it now. */
async function canaryAction(c: SdkClient, projectId: string, action: CanaryAction): Promise<CallToolResult> {
  const deployments = await c.api.listDeployments({ params: { projectId } });
  const running = deployments.find((d) => d.status === "canary");
  if (action === "status") {
    const latest = running ?? deployments.find((d) => d.rollout?.kind === "canary") ?? deployments[0];
    if (!latest) return ok("Nothing deployed yet.", { deployment: null, rollout: null });
    return ok(rolloutText(latest), { deployment: latest, rollout: latest.rollout });
  }
  if (!running)
    throw new ToolError("no_canary", "The project has no canary running; nothing to promote or roll back.");
  const params = { projectId, deploymentId: running.id };
  const deployment =
    action === "promote"
      ? await c.api.promoteDeployment({ params })
      : await c.api.rollBackDeployment({ params });
  return ok(rolloutText(deployment), { deployment, rollout: deployment.rollout });
}

/** The seven tools: name, description for the agent, input shape, and what they do. */
export const tools = {
  list_projects: {
    description:
      "List the sdk projects the logged-in user can see (id, name). Start here to find a projectId.",
    input: {},
    async run(ctx: ToolContext) {
      const projects = await (await client(ctx)).api.listProjects();
      const text = projects.length
        ? projects.map((p) => `${p.id}  ${p.name}`).join("\n")
        : "No projects yet.";
      return ok(text, { projects });
    },
  },
  list_devices: {
    description:
      "List the devices of a project with their status (online/offline), board, last-seen time and tags.",
    input: { projectId: ProjectId },
    async run(ctx: ToolContext, args: { projectId: string }) {
      const devices = await (await client(ctx)).api.listDevices({ params: { projectId: args.projectId } });
      const text = devices.length
        ? devices
            .map(
              (d) =>
                `${d.id}  ${d.name}  ${d.board}  ${d.status}  last seen ${d.lastSeenAt ?? "never"}${d.tags.length ? `  tags ${d.tags.join(" ")}` : ""}`,
            )
            .join("\n")
        : "The project has no devices.";
      return ok(text, { devices });
    },
  },
  get_device: {
    description:
      "One device in detail: status, firmware, the latest state values its script emitted (emitState), and its recent errors (script exceptions, timeouts, protocol errors).",
    input: { projectId: ProjectId, deviceId: DeviceId },
    async run(ctx: ToolContext, args: { projectId: string; deviceId: string }) {
      const c = await client(ctx);
      const params = { projectId: args.projectId, deviceId: args.deviceId };
      const [device, state, logs] = await Promise.all([
        c.api.getDevice({ params }),
        c.api.getDeviceState({ params }),
        c.api.listDeviceLogs({ params, query: { limit: 200 } }),
      ]);
      const recentErrors = logs.filter((l) => l.level === "error").slice(0, 10);
      const text = [
        `${device.name} (${device.id}): ${device.status}, ${device.board}, firmware ${device.firmwareVersion ?? "unknown"}${device.firmwareUpdate ? ` (release ${device.firmwareUpdate} is newer: sdk flash --device ${device.id})` : ""}, last seen ${device.lastSeenAt ?? "never"}`,
        `State: ${state.length ? state.map((s) => `${s.entityId}=${JSON.stringify(s.value)}`).join(", ") : "none"}`,
        `Recent errors: ${recentErrors.length ? `\n${recentErrors.map((e) => `${e.at} ${e.message}`).join("\n")}` : "none"}`,
      ].join("\n");
      return ok(text, { device, state, recentErrors });
    },
  },
  get_logs: {
    description:
      "Recent log entries (newest last) of one device or of every device in a project: the script's console output, device logs and system entries. Filter by minimum level and time.",
    input: {
      projectId: ProjectId,
      deviceId: DeviceId.optional().describe("One device; all of the project's devices when omitted"),
      level: z.enum(logLevels).optional().describe("Minimum level"),
      since: z.string().datetime().optional().describe("Only entries at or after this ISO time"),
      limit: z
        .number()
        .int()
        .min(1)
        .max(pageLimits.max)
        .optional()
        .describe(`At most this many entries (default ${pageLimits.default})`),
    },
    async run(
      ctx: ToolContext,
      args: { projectId: string; deviceId?: string; level?: LogLevel; since?: string; limit?: number },
    ) {
      const c = await client(ctx);
      const limit = args.limit ?? pageLimits.default;
      const deviceIds = args.deviceId
        ? [args.deviceId]
        : (await c.api.listDevices({ params: { projectId: args.projectId } })).map((d) => d.id);
      const min = logLevels.indexOf(args.level ?? "debug");
      const lists = await Promise.all(
        deviceIds.map(async (deviceId) =>
          (
            await c.api.listDeviceLogs({
              params: { projectId: args.projectId, deviceId },
              query: { limit: pageLimits.max },
            })
          ).map((l) => ({
            ...l,
            deviceId,
          })),
        ),
      );
      const logs = lists
        .flat()
        .filter(
          (l) =>
            logLevels.indexOf(l.level) >= min && (!args.since || l.at >= new Date(args.since).toISOString()),
        )
        .sort((a, b) => (a.id < b.id ? -1 : 1))
        .slice(-limit);
      const text = logs.length
        ? logs.map((l) => `${l.at} ${l.deviceId} ${l.level} [${l.source}] ${l.message}`).join("\n")
        : "No matching log entries.";
      return ok(text, { logs });
    },
  },
  build: {
    description:
      "Type-check and bundle a local sdk project (sdk.ts + src/). Returns ok, or diagnostics with file, line and column to fix. Run this after editing the script and before deploy.",
    input: { projectDir: ProjectDir },
    async run(_ctx: ToolContext, args: { projectDir: string }) {
      const result = await build({ projectDir: args.projectDir });
      if (!result.ok) {
        return {
          isError: true,
          content: [
            { type: "text", text: `Build failed:\n${result.diagnostics.map(formatDiagnostic).join("\n")}` },
          ],
          structuredContent: { ok: false, diagnostics: result.diagnostics },
        } satisfies CallToolResult;
      }
      return ok(
        `Built ${result.manifest.entry} (${result.bundle.length} bytes${result.cached ? ", unchanged" : ""}).`,
        {
          ok: true,
          diagnostics: [],
          manifest: result.manifest,
        },
      );
    },
  },
  deploy: {
    description:
      "Build a local project and deploy it to its server project (projectId from sdk.ts unless given). Waits for the final status: active, or failed with the error (the previous version then stays live), or rolled_back with the reason (a crash loop: every device's onDeviceConnect threw). With canary, the new version first runs only on some devices and the server promotes or rolls it back after windowSeconds by comparing their errors with the live version's; a window that ends within 50 s of the call is waited for, a longer one returns once the canary started (status canary; it decides by itself). canaryAction reports on or ends the project's canary instead of deploying.",
    input: {
      projectDir: ProjectDir,
      projectId: ProjectId.optional().describe("Overrides `project` in sdk.ts"),
      canary: CanaryInput.optional(),
      windowSeconds: RolloutOptions.shape.windowSeconds.describe(
        `With canary: how long the server compares the canary's health with the live version's before deciding (default ${rolloutLimits.defaultWindowSeconds}).`,
      ),
      rollback: z
        .boolean()
        .optional()
        .describe(
          "false: a plain deploy is not rolled back when it crash-loops in its first minute. Default true.",
        ),
      canaryAction: CanaryAction.optional(),
    },
    async run(
      ctx: ToolContext,
      args: {
        projectDir: string;
        projectId?: string;
        canary?: string;
        windowSeconds?: number;
        rollback?: boolean;
        canaryAction?: CanaryAction;
      },
    ) {
      const deadline = performance.now() + waitForDecisionSeconds * 1000;
      const c = await client(ctx);
      const projectId = args.projectId ?? (await loadProjectConfig(args.projectDir)).project;
      if (!projectId)
        throw new ToolError("no_project", "sdk.ts has no `project`; pass projectId (see list_projects).");
      if (args.canaryAction) return canaryAction(c, projectId, args.canaryAction);
      if (args.windowSeconds !== undefined && !args.canary)
        throw new ToolError("bad_input", "windowSeconds is the window of a canary: give canary too.");
      if (args.rollback === false && args.canary)
        throw new ToolError(
          "bad_input",
          "rollback:false is for a plain deploy; a canary is always promoted or rolled back.",
        );
      const built = await build({ projectDir: args.projectDir });
      if (!built.ok) {
        return {
          isError: true,
          content: [
            {
              type: "text",
              text: `Build failed, nothing deployed:\n${built.diagnostics.map(formatDiagnostic).join("\n")}`,
            },
          ],
          structuredContent: { ok: false, stage: "build", diagnostics: built.diagnostics },
        } satisfies CallToolResult;
      }
      const rollout = {
        ...(args.canary ? { canary: canaryTarget(args.canary) } : {}),
        ...(args.windowSeconds !== undefined ? { windowSeconds: args.windowSeconds } : {}),
        ...(args.rollback !== undefined ? { rollback: args.rollback } : {}),
      };
      let deployment = await c.api
        .createDeployment({
          params: { projectId },
          body: {
            bundle: built.bundle,
            sourceMap: built.sourceMap,
            manifest: built.manifest,
            ...(Object.keys(rollout).length ? { rollout } : {}),
          },
        })
        .catch((error: unknown) => {
          throw withShareHint(error, args.canary);
        });
      let stopped: string | null = null;
      if (windowEndsBefore(deployment, deadline))
        ({ deployment, stopped } = await waitForDecision(c, projectId, deployment, {
          deadline,
          signal: ctx.signal,
        }));
      if (deployment.status === "canary") {
        const note = stopped
          ? `\nStopped waiting for the decision: ${stopped}. The canary goes on on the server; call deploy with canaryAction "status" later.`
          : "";
        return ok(`${rolloutText(deployment)}${note}`, {
          ok: true,
          deployment,
          rollout: deployment.rollout,
          ...(stopped ? { stopped } : {}),
        });
      }
      if (deployment.status !== "active") {
        return {
          isError: true,
          content: [
            {
              type: "text",
              text:
                deployment.status === "rolled_back"
                  ? rolloutText(deployment)
                  : `Deployment v${deployment.version} failed; the previous version stays live:\n${deployment.error}`,
            },
          ],
          structuredContent: {
            ok: false,
            stage: deployment.status === "rolled_back" ? "rollout" : "load",
            deployment,
            rollout: deployment.rollout,
          },
        } satisfies CallToolResult;
      }
      const promoted = deployment.rollout?.kind === "canary" ? `\n${rolloutText(deployment)}` : "";
      return ok(`Deployed v${deployment.version} to ${projectId}: active.${promoted}`, {
        ok: true,
        deployment,
        rollout: deployment.rollout,
      });
    },
  },
  send_message: {
    description:
      "Send a message to a device's running script; it arrives in the script's onMessage(message). Reports whether it was delivered (the device must be online and a script deployed).",
    input: {
      projectId: ProjectId,
      deviceId: DeviceId,
      message: z
        .object({
          type: z.string().regex(customTypePattern).describe("lower_snake_case message type"),
        })
        .catchall(z.unknown())
        .describe('The message, e.g. { "type": "set_mode", "mode": "night" }'),
    },
    async run(
      ctx: ToolContext,
      args: { projectId: string; deviceId: string; message: { type: string } & Record<string, unknown> },
    ) {
      const c = await client(ctx);
      const result = await c.api.sendDeviceMessage({
        params: { projectId: args.projectId, deviceId: args.deviceId },
        body: args.message,
      });
      return ok(`Delivered ${args.message.type} to ${args.deviceId}.`, result);
    },
  },
} as const;
