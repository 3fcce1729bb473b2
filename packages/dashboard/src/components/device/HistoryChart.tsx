import { useEffect } from "react";
import { api } from "../../api.ts";
import type { LatestValue } from "../../hooks/useLiveDevice.ts";
import { useLoad } from "../../hooks/useLoad.ts";
import { ErrorMessage } from "../ErrorMessage.tsx";
import { Loading } from "../Feedback.tsx";
import { isChartable, type Point, TimeChart } from "./TimeChart.tsx";

const historyLength = 100;

/** Recent numeric or on/off values of one entity (REST history, then live values as they come). */
export function HistoryChart({
  projectId,
  deviceId,
  entityId,
  name,
  unit,
  latest,
}: {
  projectId: string;
  deviceId: string;
  entityId: string;
  name: string;
  unit?: string;
  latest: LatestValue | undefined;
}) {
  const history = useLoad(async () => {
    const entries = await api.getStateHistory({
      params: { projectId, deviceId, entityId },
      query: { limit: historyLength },
    });
    return entries
      .filter((e): e is typeof e & { value: number | boolean } => isChartable(e.value))
      .map((e): Point => ({ at: e.at, value: e.value }))
      .reverse();
  }, [projectId, deviceId, entityId]);
  const { setData } = history;

  useEffect(() => {
    if (!latest || !isChartable(latest.value)) return;
    const point = { at: latest.updatedAt, value: latest.value };
    setData((points) => {
      const last = points[points.length - 1];
      if (last && last.at >= point.at) return points;
      return [...points, point].slice(-historyLength);
    });
  }, [latest, setData]);

  return (
    <div className="history">
      <h3 id="history-title">
        History of {name}
        {unit ? ` (${unit})` : ""}
      </h3>
      {history.status === "loading" && <Loading what="history" />}
      {history.status === "error" && <ErrorMessage error={history.error} onRetry={history.reload} />}
      {history.status === "ready" && (
        <TimeChart points={history.data} label={name} unit={unit ? ` ${unit}` : ""} />
      )}
    </div>
  );
}
