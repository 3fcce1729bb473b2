import { type Device, type TagCommandOutcome, type TagMessageOutcome, tagActionLimits } from "@sdk/protocol";
import { AppError } from "../errors.ts";
import { boundedAll } from "../lib/bounded-all.ts";
import type { Principal } from "./auth.ts";
import { validateCommand } from "./device-link/command-args.ts";
import type { DeviceLinkService } from "./device-link.ts";
import type { DevicesService } from "./devices.ts";
import type { ScriptHostService } from "./script-host.ts";

type Failure = { ok: false; deviceId: string; name: string; error: { code: string; message: string } };

const failure = (device: Device, error: unknown): Failure => ({
  ok: false,
  deviceId: device.id,
  name: device.name,
  error:
    error instanceof AppError
      ? { code: error.code, message: error.message }
      : { code: "internal_error", message: "Something went wrong on the server" },
});

/**
 * Commands and messages for every device of a project with a tag: the project's visibility is checked
 * once (the device list), then each device goes through the same path as a single-device request,
 * `tagActionLimits.concurrency` at a time, within an overall timeout. One answer per device.
 */
export function tagActionsService(deps: {
  devices: Pick<DevicesService, "list">;
  link: Pick<DeviceLinkService, "command">;
  scripts: Pick<ScriptHostService, "deliver">;
  onError: (error: unknown) => void;
}) {
  const { devices, link, scripts } = deps;

  const timedOut =
    (timeoutSeconds: number) =>
    (device: Device, started: boolean): Failure =>
      failure(
        device,
        new AppError(
          "device_timeout",
          started
            ? `no answer within the overall ${timeoutSeconds}s`
            : `not sent: the overall ${timeoutSeconds}s ran out first`,
        ),
      );

  return {
    async command(
      principal: Principal,
      projectId: string,
      input: { tag: string; type: string; args: Record<string, unknown>; timeoutSeconds: number },
    ): Promise<TagCommandOutcome> {
      const targets = await devices.list(principal, projectId, input.tag);
      // A command that is wrong for a board is refused (400) before any device gets it.
      for (const board of new Set(targets.map((d) => d.board)))
        validateCommand(board, input.type, input.args);
      const results = await boundedAll<Device, TagCommandOutcome["devices"][number]>(targets, {
        concurrency: tagActionLimits.concurrency,
        timeoutMs: input.timeoutSeconds * 1000,
        task: async (device) => {
          const ref = { projectId, deviceId: device.id, board: device.board };
          const value = await link.command(ref, input.type, input.args);
          return { ok: true, deviceId: device.id, name: device.name, value: value ?? null };
        },
        onError: (device, error) => {
          if (!(error instanceof AppError)) deps.onError(error);
          return failure(device, error);
        },
        onTimeout: timedOut(input.timeoutSeconds),
      });
      return { tag: input.tag, devices: results };
    },

    async message(
      principal: Principal,
      projectId: string,
      input: { tag: string; message: { type: string } & Record<string, unknown> },
    ): Promise<TagMessageOutcome> {
      const targets = await devices.list(principal, projectId, input.tag);
      const timeoutSeconds = tagActionLimits.defaultTimeoutSeconds;
      const results = await boundedAll<Device, TagMessageOutcome["devices"][number]>(targets, {
        concurrency: tagActionLimits.concurrency,
        timeoutMs: timeoutSeconds * 1000,
        task: async (device) => {
          await scripts.deliver({ projectId, deviceId: device.id }, input.message);
          return { ok: true, deviceId: device.id, name: device.name };
        },
        onError: (device, error) => {
          if (!(error instanceof AppError)) deps.onError(error);
          return failure(device, error);
        },
        onTimeout: timedOut(timeoutSeconds),
      });
      return { tag: input.tag, devices: results };
    },
  };
}
