import { SdkApiError, type SdkClient, watchDevice } from "@sdk/client";
import { idPattern, idPrefixes, recordingsDir, watchCloseCodes } from "@sdk/protocol";
import type { Command } from "../command.ts";
import { connect, projectId } from "../context.ts";
import { CliError, UsageError } from "../errors.ts";
import { openRecordingFile, reportRecording, SessionRecorder } from "../recorder.ts";

/** The version of the project's live deployment (null: none). */
async function liveDeploymentVersion(client: SdkClient, projectId: string): Promise<number | null> {
  const deployments = await client.api.listDeployments({ params: { projectId } });
  return deployments.find((d) => d.status === "active")?.version ?? null;
}

export const record: Command = {
  name: "record",
  summary: "Record a device's session (events, commands and answers) to a file for sdk test",
  usage: "sdk record --device dev_… FILE [--seconds N] [--force] [--project prj_…] [--json]",
  details: `Watches the device on the server and writes what happens to FILE as JSON Lines (docs/scripts.md, Recording a session): its connects and disconnects, every message for its script (from the device or the API), every command the script sends it with the answer, the states the script emits, the messages it sends, and the script's log lines, each with its time. Commands users send (REST, MCP) are left out: a recording keeps what the script did. Start it before the device connects to record from its hello. Stops at Ctrl-C or after --seconds; sdk test replays the recordings under ${recordingsDir}/. If events were missed (the watch fell behind or reconnected), it warns that the recording is incomplete ("incomplete": true with --json) and still exits 0. A recording holds message payloads, command results and log lines: don't commit secrets.`,
  options: {
    device: { type: "string" },
    seconds: { type: "string" },
    force: { type: "boolean" },
  },
  optionHelp: [
    "--device <id>     the device to record (dev_…)",
    "--seconds <n>     stop after n seconds (default: at Ctrl-C)",
    "--force           overwrite FILE if it exists",
  ],
  json: true,
  async run({ args, values, g }) {
    const deviceId = values.device as string | undefined;
    if (!deviceId) throw new UsageError("Which device? sdk record --device dev_… FILE", "record");
    if (!idPattern(idPrefixes.device).test(deviceId))
      throw new UsageError(`"${deviceId}" is not a device id (dev_…)`, "record");
    const [file, ...extra] = args;
    if (!file) throw new UsageError("Where to? sdk record --device dev_… FILE", "record");
    if (extra.length > 0) throw new UsageError("Give one FILE", "record");
    const seconds = values.seconds === undefined ? undefined : Number(values.seconds);
    if (seconds !== undefined && !(Number.isFinite(seconds) && seconds > 0))
      throw new UsageError("--seconds must be a number above 0", "record");

    const { client, host } = await connect(g);
    const id = await projectId(g);
    try {
      await client.api.getDevice({ params: { projectId: id, deviceId } });
    } catch (error) {
      if (error instanceof SdkApiError && error.code === "not_found")
        throw new CliError(
          `No device ${deviceId} in project ${id} (or you may not see it): see sdk devices list`,
        );
      throw error;
    }
    const deploymentVersion = await liveDeploymentVersion(client, id);
    const fd = openRecordingFile(file, Boolean(values.force));
    const recorder = new SessionRecorder(fd, { file, out: g.out, projectId: id, deploymentVersion });

    let finish: (code: number) => void = () => {};
    let opened = false;
    const handle = watchDevice(
      host,
      client.token,
      { projectId: id, deviceId },
      {
        record: true,
        onEvent(event) {
          if (event.type === "snapshot" && !opened) {
            opened = true;
            g.out.info(
              g.out.dim(
                `Recording ${event.device.name} (${deviceId}) to ${file}: ${seconds ? `for ${seconds} s, ` : ""}Ctrl-C to stop`,
              ),
            );
          }
          recorder.handle(event);
        },
        onClose({ code, willReconnect }) {
          if (willReconnect) return recorder.dropped();
          if (code === watchCloseCodes.gone) g.out.warn("The device was deleted; the recording ended.");
          else if (code === watchCloseCodes.revoked)
            g.out.warn("The credentials were revoked; the recording ended. Run sdk login again.");
          finish(1);
        },
      },
    );
    const code = await new Promise<number>((resolve) => {
      const timer = seconds === undefined ? undefined : setTimeout(() => finish(0), seconds * 1000);
      const stop = () => finish(0);
      finish = (code) => {
        clearTimeout(timer);
        process.off("SIGINT", stop);
        process.off("SIGTERM", stop);
        resolve(code);
      };
      process.once("SIGINT", stop);
      process.once("SIGTERM", stop);
    });
    handle.stop();
    const summary = recorder.finish();
    reportRecording(g.out, summary);
    return summary.written ? code : 1;
  },
};
