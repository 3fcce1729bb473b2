import type { HomeAssistantStatus } from "@sdk/protocol";
import { api } from "../../api.ts";
import { useLoad } from "../../hooks/useLoad.ts";
import { DataTable } from "../DataTable.tsx";
import { ErrorMessage } from "../ErrorMessage.tsx";
import { Loading } from "../Feedback.tsx";

const docs = "/docs/home-assistant";

function Summary({ status }: { status: HomeAssistantStatus }) {
  if (!status.enabled)
    return (
      <p className="muted">
        Off: this server has no <code>MQTT_URL</code>. Set it to your broker to publish the entities of{" "}
        <code>ha.entities</code> to Home Assistant (<a href={docs}>how</a>).
      </p>
    );
  return (
    <p data-testid="home-assistant-broker">
      {status.connected ? "Connected to" : "Not connected to"} <code>{status.broker}</code> · discovery{" "}
      <code>{status.discoveryPrefix}</code> ({status.mode === "device" ? "per device" : "per entity"}) ·
      topics <code>{status.baseTopic}</code>
      {!status.connected && (
        <span className="muted"> — retrying; everything is published once it answers</span>
      )}
    </p>
  );
}

/** The Home Assistant bridge as this project sees it: the broker, and the entities published per device. */
export function HomeAssistantSection({ projectId, reloadKey }: { projectId: string; reloadKey?: unknown }) {
  const status = useLoad(() => api.getHomeAssistant({ params: { projectId } }), [projectId, reloadKey]);
  return (
    <section className="card section" aria-labelledby="home-assistant-title">
      <h2 id="home-assistant-title">Home Assistant</h2>
      {status.status === "loading" && <Loading what="the Home Assistant bridge" />}
      {status.status === "error" && <ErrorMessage error={status.error} onRetry={status.reload} />}
      {status.status === "ready" && (
        <>
          <Summary status={status.data} />
          {status.data.enabled && status.data.devices.length > 0 && (
            <DataTable caption="Entities published per device" columns={["Device", "Entities", "Published"]}>
              {status.data.devices.map((device) => (
                <tr key={device.deviceId}>
                  <td data-label="Device">{device.name}</td>
                  <td data-label="Entities">
                    {device.entities.map((e) => (
                      <code key={e.id} title={e.name}>
                        {e.defaultEntityId}{" "}
                      </code>
                    ))}
                  </td>
                  <td data-label="Published">
                    {device.deletedInHomeAssistant
                      ? "Deleted in Home Assistant (deploy to publish again)"
                      : device.published
                        ? "Yes"
                        : "Pending"}
                  </td>
                </tr>
              ))}
            </DataTable>
          )}
        </>
      )}
    </section>
  );
}
