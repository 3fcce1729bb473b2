import type { Board, Device } from "@sdk/protocol";
import { api } from "../../api.ts";
import type { WatchState } from "../../hooks/useDeviceWatch.ts";
import { Link, paths } from "../../router.tsx";
import { ConfirmButton } from "../ConfirmButton.tsx";
import { StatusBadge } from "../StatusBadge.tsx";
import { RelativeTime } from "../Time.tsx";
import { TagPills } from "./DeviceTags.tsx";

export const boardNames: Record<Board, string> = { pico_w: "Pico W", pico2_w: "Pico 2 W" };

/** One device; its status is kept live by the project's watch socket (DevicesSection). */
export function DeviceRow({
  device,
  watch,
  onGone,
  onRotated,
}: {
  device: Device;
  watch: WatchState;
  onGone: (deviceId: string) => void;
  onRotated: (device: Device, secret: string) => void;
}) {
  const { projectId, id } = device;

  return (
    <tr data-device-id={id}>
      <td data-label="Device">
        <Link to={paths.device(projectId, id)} className="strong-link">
          {device.name}
        </Link>
        <span className="muted small block">
          {boardNames[device.board]} · <code>{id}</code>
        </span>
        <TagPills tags={device.tags} />
      </td>
      <td data-label="Status">
        <span aria-live="polite" data-testid="device-status">
          <span className="sr-only">{device.name} is </span>
          <StatusBadge status={device.status} />
        </span>
        {watch === "reconnecting" && (
          <span className="muted small block">live updates paused, reconnecting…</span>
        )}
      </td>
      <td data-label="Last seen">
        {device.status === "online" ? (
          <span>
            now{" "}
            <span className="muted small">
              (since <RelativeTime iso={device.lastSeenAt} />)
            </span>
          </span>
        ) : (
          <RelativeTime iso={device.lastSeenAt} fallback="never connected" />
        )}
      </td>
      <td data-label="Firmware">
        {device.firmwareVersion ?? <span className="muted">—</span>}
        {device.firmwareUpdate && (
          <span className="muted small"> (update available: {device.firmwareUpdate})</span>
        )}
      </td>
      <td data-label="Actions" className="actions">
        <ConfirmButton
          label="New credentials"
          ariaLabel={`New credentials for ${device.name}`}
          className="button-small"
          title={`Issue new credentials for “${device.name}”?`}
          confirmLabel="Issue new credentials"
          onConfirm={async () => {
            const credentials = await api.rotateDeviceCredentials({ params: { projectId, deviceId: id } });
            onRotated(device, credentials.secret);
          }}
        >
          The current secret stops working at once: the board disconnects and stays offline until it has the
          new secret.
        </ConfirmButton>
        <ConfirmButton
          label="Delete"
          ariaLabel={`Delete ${device.name}`}
          title={`Delete “${device.name}”?`}
          confirmLabel="Delete device"
          onConfirm={async () => {
            await api.deleteDevice({ params: { projectId, deviceId: id } });
            onGone(id);
          }}
        >
          The device, its logs and its state are removed, and its credentials stop working. This cannot be
          undone.
        </ConfirmButton>
      </td>
    </tr>
  );
}
