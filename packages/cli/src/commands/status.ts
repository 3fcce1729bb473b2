import type { Command } from "../command.ts";
import { connect, projectId } from "../context.ts";
import { localTime } from "../output.ts";
import { progressLine, rolledBackReason } from "../rollout-lines.ts";

export const status: Command = {
  name: "status",
  summary: "The project's live deployment and its devices",
  usage: "sdk status [--project prj_…] [--json]",
  json: true,
  async run({ g }) {
    const { client, host } = await connect(g);
    const id = await projectId(g);
    const [project, deployments, devices] = await Promise.all([
      client.api.getProject({ params: { projectId: id } }),
      client.api.listDeployments({ params: { projectId: id } }),
      client.api.listDevices({ params: { projectId: id } }),
    ]);
    const active = deployments.find((d) => d.status === "active") ?? null;
    const latest = deployments[0] ?? null;
    // The canary in its window, even when a newer deployment (a failed one, say) is listed above it.
    const canary = deployments.find((d) => d.status === "canary") ?? null;
    g.out.result({ host, project, deployment: active, latestDeployment: latest, devices });
    g.out.line(`${g.out.bold(project.name)} ${g.out.dim(`(${project.id} on ${host})`)}`);
    if (active) {
      g.out.line(
        `Deployment: v${active.version} ${g.out.green("active")} since ${localTime(active.activatedAt)}`,
      );
    } else g.out.line(`Deployment: ${g.out.yellow("none live")} — deploy with: sdk deploy`);
    if (canary?.rollout) g.out.line(g.out.cyan(progressLine(canary, canary.rollout, Date.now())));
    if (latest?.status === "rolled_back")
      g.out.line(`${g.out.red(`v${latest.version} rolled back`)}: ${rolledBackReason(latest)}`);
    if (latest && latest.status === "failed") {
      g.out.line(
        `${g.out.red(`v${latest.version} failed`)} at ${localTime(latest.createdAt)}: ${latest.error?.split("\n")[0]}`,
      );
    }
    g.out.line();
    if (devices.length === 0) g.out.line("No devices yet.");
    else {
      g.out.table(
        ["DEVICE", "NAME", "BOARD", "STATUS", "LAST SEEN", "FIRMWARE"],
        devices.map((d) => [
          d.id,
          d.name,
          d.board,
          d.status === "online" ? g.out.green("online") : g.out.dim("offline"),
          d.status === "online" ? "now" : localTime(d.lastSeenAt),
          d.firmwareUpdate
            ? `${d.firmwareVersion ?? "-"} ${g.out.yellow(`(${d.firmwareUpdate} available: sdk flash --device ${d.id})`)}`
            : (d.firmwareVersion ?? "-"),
        ]),
      );
    }
    return 0;
  },
};
