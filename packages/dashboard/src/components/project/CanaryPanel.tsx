import type { CanaryTarget, Deployment, Device, Rollout, RolloutHealth } from "@sdk/protocol";
import { useEffect, useState } from "react";
import { api } from "../../api.ts";
import { useLoad } from "../../hooks/useLoad.ts";
import { Link, paths } from "../../router.tsx";
import { ConfirmButton } from "../ConfirmButton.tsx";

/** "tag kitchen" / "25% of the connected devices". */
function targetWords(target: CanaryTarget | null): string {
  if (!target) return "every device";
  return "tag" in target ? `tag ${target.tag}` : `${target.percent}% of the connected devices`;
}

/** "4:05" / "0:09" / "1:02:03" (as `sdk deploy --canary` prints it). */
function clock(seconds: number): string {
  const s = Math.max(0, Math.ceil(seconds));
  const pad = (n: number) => String(n).padStart(2, "0");
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  return h ? `${h}:${pad(m)}:${pad(s % 60)}` : `${m}:${pad(s % 60)}`;
}

/** Seconds until `iso`, ticking every second. */
function useSecondsLeft(iso: string): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, []);
  return (new Date(iso).getTime() - now) / 1000;
}

const figures: { label: string; value: (h: RolloutHealth) => string }[] = [
  { label: "Devices", value: (h) => String(h.devices) },
  { label: "Handler calls", value: (h) => String(h.calls) },
  {
    label: "Failed calls (errors + timeouts)",
    value: (h) =>
      `${h.errors + h.timeouts}${h.calls ? ` (${Math.round(((h.errors + h.timeouts) / h.calls) * 100)} %)` : ""}`,
  },
  { label: "onDeviceConnect threw", value: (h) => `${h.connectErrors} of ${h.connects}` },
  { label: "Disconnects", value: (h) => String(h.disconnects) },
  { label: "Commands failed", value: (h) => `${h.commandErrors} of ${h.commands}` },
];

/** The canary's and the stable version's figures side by side. */
function HealthTable({ rollout, version }: { rollout: Rollout; version: number }) {
  return (
    <table className="table health-table" data-testid="canary-health">
      <caption className="sr-only">Health of the canary and the stable version</caption>
      <thead>
        <tr>
          <th scope="col">Since the canary started</th>
          <th scope="col">Canary v{version}</th>
          <th scope="col">Stable</th>
        </tr>
      </thead>
      <tbody>
        {figures.map((f) => (
          <tr key={f.label}>
            <th scope="row">{f.label}</th>
            <td>{f.value(rollout.health.canary)}</td>
            <td>{f.value(rollout.health.stable)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** The canary's devices, by name, linking to their pages. */
function Members({ projectId, ids }: { projectId: string; ids: string[] }) {
  const devices = useLoad(() => api.listDevices({ params: { projectId } }), [projectId]);
  const byId = new Map<string, Device>((devices.data ?? []).map((d) => [d.id, d]));
  return (
    <ul className="inline-list" data-testid="canary-devices">
      {ids.map((id) => (
        <li key={id}>
          <Link to={paths.device(projectId, id)}>{byId.get(id)?.name ?? id}</Link>
        </li>
      ))}
    </ul>
  );
}

/**
 * A canary in its window: where it runs, the time left, both sides' health, and the buttons that
 * end it now. `onChanged` runs after Promote or Roll back.
 */
export function CanaryPanel({
  projectId,
  deployment,
  rollout,
  onChanged,
}: {
  projectId: string;
  deployment: Deployment;
  rollout: Rollout;
  onChanged: () => void;
}) {
  const left = useSecondsLeft(rollout.endsAt);
  const params = { projectId, deploymentId: deployment.id };
  const v = `v${deployment.version}`;
  return (
    <section className="canary-panel" aria-label={`Canary ${v}`}>
      <p>
        <strong>Canary {v}</strong> runs on {rollout.devices.length} device
        {rollout.devices.length === 1 ? "" : "s"} ({targetWords(rollout.target)}); the others keep the live
        version.{" "}
        <span data-testid="canary-time-left">
          {left > 0 ? `${clock(left)} left of ${clock(rollout.windowSeconds)}` : "Deciding…"}
        </span>
      </p>
      <Members projectId={projectId} ids={rollout.devices} />
      <HealthTable rollout={rollout} version={deployment.version} />
      <div className="actions">
        <ConfirmButton
          label={`Promote ${v}`}
          className="button-small"
          title={`Promote ${v} to every device?`}
          confirmLabel={`Promote ${v}`}
          onConfirm={async () => {
            await api.promoteDeployment({ params });
            onChanged();
          }}
        >
          The canary ends now and {v} goes live on every device, without waiting for the window.
        </ConfirmButton>{" "}
        <ConfirmButton
          label={`Roll back ${v}`}
          title={`Roll back ${v}?`}
          confirmLabel={`Roll back ${v}`}
          onConfirm={async () => {
            await api.rollBackDeployment({ params });
            onChanged();
          }}
        >
          The canary ends now; its devices go back to the live version.
        </ConfirmButton>
      </div>
    </section>
  );
}

/**
 * A decided canary (or a rolled-back plain deploy) in the deployment's row: how it ran and why it was
 * promoted or rolled back. `shown`: the deployment's error, already on the page (not repeated).
 */
export function RolloutOutcome({ rollout, shown }: { rollout: Rollout; shown: string | null }) {
  if (rollout.decision === null || (rollout.kind === "watch" && rollout.decision === "promoted")) return null;
  const how =
    rollout.kind === "canary"
      ? `Canary on ${rollout.devices.length} device${rollout.devices.length === 1 ? "" : "s"} (${targetWords(rollout.target)})`
      : "First-minute watch";
  const decided = rollout.decision === "promoted" ? "promoted" : "rolled back";
  // The reason is a sentence that starts with the decision ("promoted: …"); the error above may hold it already.
  const reason = rollout.reason && rollout.reason !== shown ? rollout.reason : null;
  return (
    <p className="small rollout-outcome" data-testid="rollout-outcome">
      <span className="muted">{how}: </span>
      {reason ?? decided}
    </p>
  );
}
