import type { Board, DeviceCredentials as Credentials, Device } from "@sdk/protocol";
import { useCallback, useState } from "react";
import { api } from "../../api.ts";
import { useLoad } from "../../hooks/useLoad.ts";
import { DataTable } from "../DataTable.tsx";
import { Form } from "../Form.tsx";
import { ListSection } from "../ListSection.tsx";
import { DeviceCredentials } from "./DeviceCredentials.tsx";
import { boardNames, DeviceRow } from "./DeviceRow.tsx";
import { TagFilter } from "./DeviceTags.tsx";
import { useLiveDevices } from "./useLiveDevices.ts";

const boardOptions = Object.entries(boardNames).map(([value, label]) => ({ value, label }));

function AddDeviceForm({
  projectId,
  onAdded,
}: {
  projectId: string;
  onAdded: (device: Device, credentials: Credentials) => void;
}) {
  return (
    <Form
      title="Add a device"
      fields={[
        {
          name: "name",
          label: "Device name",
          required: true,
          maxLength: 100,
          placeholder: "Sensor 1",
          grow: true,
        },
        { name: "board", label: "Board", type: "select", options: boardOptions },
      ]}
      submitLabel="Add device"
      busyLabel="Adding…"
      clearOnSuccess={["name"]}
      onSubmit={async ({ name, board }) => {
        const created = await api.createDevice({
          params: { projectId },
          body: { name, board: board as Board },
        });
        onAdded(created.device, created.credentials);
      }}
    />
  );
}

interface Shown {
  deviceName: string;
  credentials: Credentials;
  rotated: boolean;
}

/** The project's devices, live (devices added elsewhere too), with adding, new credentials and deleting. */
export function DevicesSection({ projectId }: { projectId: string }) {
  const devices = useLoad(() => api.listDevices({ params: { projectId } }), [projectId]);
  const [shown, setShown] = useState<Shown | null>(null);
  const [tag, setTag] = useState("");
  const { setData } = devices;
  const watch = useLiveDevices(projectId, setData);
  const onGone = useCallback(
    (deviceId: string) => setData((list) => list.filter((d) => d.id !== deviceId)),
    [setData],
  );

  return (
    <ListSection
      id="devices"
      title="Devices"
      list={devices}
      what="devices"
      empty={{
        title: "No devices yet",
        body: "Add one below: you get its credentials for a Pico W / Pico 2 W, or for the simulated board.",
      }}
      before={
        shown && (
          <DeviceCredentials
            deviceName={shown.deviceName}
            credentials={shown.credentials}
            rotated={shown.rotated}
            onDone={() => setShown(null)}
          />
        )
      }
      after={
        <AddDeviceForm
          projectId={projectId}
          onAdded={(device, credentials) => {
            setShown({ deviceName: device.name, credentials, rotated: false });
            setData((list) => [...list.filter((d) => d.id !== device.id), device]);
          }}
        />
      }
    >
      {(list) => (
        <>
          <TagFilter devices={list} value={tag} onChange={setTag} />
          <DataTable
            caption="Devices of this project, with live status"
            columns={["Device", "Status", "Last seen", "Firmware"]}
            actions
          >
            {list
              .filter((d) => tag === "" || d.tags.includes(tag))
              .sort((a, b) => a.name.localeCompare(b.name))
              .map((device) => (
                <DeviceRow
                  key={device.id}
                  device={device}
                  watch={watch}
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
        </>
      )}
    </ListSection>
  );
}
