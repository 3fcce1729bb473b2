import type { EntityConfig } from "@sdk/protocol";
import { useEffect, useRef, useState } from "react";
import { api, isNotFound } from "../api.ts";
import { CommandForm } from "../components/device/CommandForm.tsx";
import { HistoryChart } from "../components/device/HistoryChart.tsx";
import { LogsPanel } from "../components/device/LogsPanel.tsx";
import { MessageForm } from "../components/device/MessageForm.tsx";
import { PinsPanel } from "../components/device/PinsPanel.tsx";
import { SimulatorControls } from "../components/device/SimulatorControls.tsx";
import { StateCards } from "../components/device/StateCards.tsx";
import { isChartable } from "../components/device/TimeChart.tsx";
import { ErrorMessage } from "../components/ErrorMessage.tsx";
import { Loading } from "../components/Feedback.tsx";
import { PageHeader } from "../components/PageHeader.tsx";
import { boardNames } from "../components/project/DeviceRow.tsx";
import { DeviceTagsEditor } from "../components/project/DeviceTags.tsx";
import { StatusBadge } from "../components/StatusBadge.tsx";
import { RelativeTime } from "../components/Time.tsx";
import { useLiveDevice } from "../hooks/useLiveDevice.ts";
import { useLoad } from "../hooks/useLoad.ts";
import { Link, paths } from "../router.tsx";
import { NotFoundPage } from "./NotFoundPage.tsx";

const watchWords = {
  connecting: "Connecting for live updates…",
  live: "Live",
  reconnecting: "Live updates interrupted: reconnecting…",
  gone: "This device was deleted.",
};

export function DevicePage({ projectId, deviceId }: { projectId: string; deviceId: string }) {
  const live = useLiveDevice(projectId, deviceId);
  const project = useLoad(() => api.getProject({ params: { projectId } }), [projectId]);
  const entities = useLoad(
    async () => new Map((await api.listEntities({ params: { projectId } })).map((e) => [e.id, e])),
    [projectId],
  );
  const entityMap = entities.data ?? new Map<string, EntityConfig>();
  const [chartChoice, setChartChoice] = useState<string | null>(null);

  // A value for an entity not known yet may come from a new deployment: read the entities again
  // (once per such id) for its name and unit.
  const asked = useRef(new Set<string>());
  const unknown =
    entities.status === "ready" ? Object.keys(live.state).filter((id) => !entityMap.has(id)) : [];
  const unknownKey = unknown.filter((id) => !asked.current.has(id)).join();
  const { reload: reloadEntities } = entities;
  useEffect(() => {
    if (!unknownKey) return;
    for (const id of unknownKey.split(",")) asked.current.add(id);
    void reloadEntities();
  }, [unknownKey, reloadEntities]);

  // The chart shows the first chartable entity until the user picks another; new ones do not steal it.
  const firstNumeric = Object.keys(live.state).find((id) => isChartable(live.state[id]?.value));
  useEffect(() => {
    if (chartChoice === null && firstNumeric) setChartChoice(firstNumeric);
  }, [chartChoice, firstNumeric]);

  const trail = (
    <>
      <Link to="/">Projects</Link>
      <Link to={paths.project(projectId)}>{project.data?.name ?? "Project"}</Link>
    </>
  );

  if (live.status === "error") {
    if (isNotFound(live.error)) return <NotFoundPage what="device" />;
    return (
      <>
        <PageHeader title="Device" trail={trail} />
        <ErrorMessage error={live.error} />
      </>
    );
  }
  if (!live.device)
    return (
      <>
        <PageHeader title="Device" trail={trail} />
        <Loading what="the device" />
      </>
    );

  const { device } = live;
  const charted = chartChoice && isChartable(live.state[chartChoice]?.value) ? chartChoice : null;
  const chartedEntity = charted ? entityMap.get(charted) : undefined;

  return (
    <>
      <PageHeader title={device.name} trail={trail}>
        <div className="device-summary">
          <span aria-live="polite" data-testid="device-status">
            <span className="sr-only">Status: </span>
            <StatusBadge status={device.status} />
          </span>
          <span>
            {device.status === "online" ? "connected " : "last seen "}
            <RelativeTime iso={device.lastSeenAt} fallback="never" />
          </span>
          <span>{boardNames[device.board]}</span>
          <span>firmware {device.firmwareVersion ?? "unknown"}</span>
          {device.firmwareUpdate && (
            <span className="notice-inline" data-testid="firmware-update">
              update available: {device.firmwareUpdate}
            </span>
          )}
          <code className="small">{device.id}</code>
          <span className={`watch-state watch-${live.watch}`} role="status">
            {watchWords[live.watch]}
          </span>
        </div>
      </PageHeader>
      {live.dropped > 0 && (
        <p className="notice notice-info" role="status">
          {live.dropped} live event{live.dropped === 1 ? " was" : "s were"} skipped because this page fell
          behind. Reload for the full picture.
        </p>
      )}
      <div className="device-grid">
        <section className="card section" aria-labelledby="state-title">
          <h2 id="state-title">State</h2>
          <StateCards state={live.state} entities={entityMap} charted={charted} onChart={setChartChoice} />
          {charted && (
            <HistoryChart
              projectId={projectId}
              deviceId={deviceId}
              entityId={charted}
              name={chartedEntity?.name ?? charted}
              unit={chartedEntity?.unit}
              latest={live.state[charted]}
            />
          )}
        </section>
        <DeviceTagsEditor projectId={projectId} device={device} />
        <MessageForm projectId={projectId} deviceId={deviceId} />
        <PinsPanel pins={live.pins} online={device.status === "online"} />
        <CommandForm projectId={projectId} deviceId={deviceId} />
        <SimulatorControls projectId={projectId} device={device} />
      </div>
      <LogsPanel logs={live.logs} />
    </>
  );
}
