import type { Board, DeviceCredentials as Credentials, Device } from "@sdk/protocol";
import { type FormEvent, useCallback, useState } from "react";
import { api } from "../../api.ts";
import { useAction } from "../../hooks/useAction.ts";
import { useLoad } from "../../hooks/useLoad.ts";
import { DataTable } from "../DataTable.tsx";
import { ErrorMessage } from "../ErrorMessage.tsx";
import { Empty, Loading } from "../Feedback.tsx";
import { DeviceCredentials } from "./DeviceCredentials.tsx";
import { boardNames, DeviceRow } from "./DeviceRow.tsx";

function AddDeviceForm({
  projectId,
  onAdded,
}: {
  projectId: string;
  onAdded: (device: Device, credentials: Credentials) => void;
}) {
  const [name, setName] = useState("");
  const [board, setBoard] = useState<Board>("pico_w");
  const add = useAction(async () => {
    const created = await api.createDevice({ params: { projectId }, body: { name, board } });
    setName("");
    onAdded(created.device, created.credentials);
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    void add.run();
  };
  return (
    <form className="form subcard" onSubmit={submit} aria-labelledby="add-device-title">
      <h3 id="add-device-title">Add a device</h3>
      <div className="inline-fields">
        <div className="field grow">
          <label htmlFor="device-name">Device name</label>
          <input
            id="device-name"
            required
            maxLength={100}
            placeholder="Sensor 1"
            value={name}
            onChange={(e) => setName(e.target.value)}
          />
        </div>
        <div className="field">
          <label htmlFor="device-board">Board</label>
          <select id="device-board" value={board} onChange={(e) => setBoard(e.target.value as Board)}>
            {Object.entries(boardNames).map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </div>
        <button type="submit" className="button-primary" disabled={add.busy}>
          {add.busy ? "Adding…" : "Add device"}
        </button>
      </div>
      {add.error != null && <ErrorMessage error={add.error} />}
    </form>
  );
}

interface Shown {
  deviceName: string;
  credentials: Credentials;
  rotated: boolean;
}

/** The project's devices, live, with adding, new credentials and deleting. */
export function DevicesSection({ projectId }: { projectId: string }) {
  const devices = useLoad(() => api.listDevices({ params: { projectId } }), [projectId]);
  const [shown, setShown] = useState<Shown | null>(null);
  const { setData } = devices;
  const onGone = useCallback(
    (deviceId: string) => setData((list) => list.filter((d) => d.id !== deviceId)),
    [setData],
  );

  return (
    <section className="card section" aria-labelledby="devices-title">
      <h2 id="devices-title">Devices</h2>
      {shown && (
        <DeviceCredentials
          deviceName={shown.deviceName}
          credentials={shown.credentials}
          rotated={shown.rotated}
          onDone={() => setShown(null)}
        />
      )}
      {devices.status === "loading" && <Loading what="devices" />}
      {devices.status === "error" && <ErrorMessage error={devices.error} onRetry={devices.reload} />}
      {devices.status === "ready" &&
        (devices.data.length === 0 ? (
          <Empty title="No devices yet">
            Add one below: you get its credentials for a Pico W / Pico 2 W, or for the simulated board.
          </Empty>
        ) : (
          <DataTable
            caption="Devices of this project, with live status"
            columns={["Device", "Status", "Last seen", "Firmware"]}
            actions
          >
            {[...devices.data]
              .sort((a, b) => a.name.localeCompare(b.name))
              .map((device) => (
                <DeviceRow
                  key={device.id}
                  device={device}
                  onGone={onGone}
                  onRotated={(d, secret) =>
                    setShown({
                      deviceName: d.name,
                      credentials: { deviceId: d.id, secret },
                      rotated: true,
                    })
                  }
                />
              ))}
          </DataTable>
        ))}
      <AddDeviceForm
        projectId={projectId}
        onAdded={(device, credentials) => {
          setShown({ deviceName: device.name, credentials, rotated: false });
          setData((list) => [...list.filter((d) => d.id !== device.id), device]);
        }}
      />
    </section>
  );
}
