import type { EntityConfig } from "@sdk/protocol";
import type { LatestValue } from "../../hooks/useLiveDevice.ts";
import { Empty } from "../Feedback.tsx";
import { RelativeTime } from "../Time.tsx";
import { isChartable } from "./TimeChart.tsx";

function formatValue(value: unknown): string {
  if (typeof value === "number")
    return Number.isInteger(value) ? String(value) : value.toFixed(2).replace(/\.?0+$/, "");
  if (typeof value === "boolean") return value ? "On" : "Off";
  if (typeof value === "string") return value;
  if (value === null || value === undefined) return "—";
  return JSON.stringify(value);
}

/** The latest value of each state entity, one card each; numbers and on/off values can be charted. */
export function StateCards({
  state,
  entities,
  charted,
  onChart,
}: {
  state: Record<string, LatestValue>;
  entities: Map<string, EntityConfig>;
  charted: string | null;
  onChart: (entityId: string) => void;
}) {
  const ids = Object.keys(state).sort();
  if (ids.length === 0)
    return (
      <Empty title="No state yet">
        Values your script reports with <code>this.env.DEVICE.emitState(id, value)</code> appear here.
      </Empty>
    );
  return (
    <ul className="state-grid">
      {ids.map((id) => {
        const entry = state[id]!;
        const entity = entities.get(id);
        const numeric = typeof entry.value === "number";
        const chartable = isChartable(entry.value);
        const text = formatValue(entry.value);
        const unit = numeric ? entity?.unit : undefined;
        return (
          <li
            key={id}
            className={`state-card${charted === id ? " state-card-charted" : ""}`}
            data-entity={id}
          >
            <span className="state-name">{entity?.name ?? id}</span>
            <span
              className={`state-value${text.length > 24 ? " state-value-long" : ""}`}
              data-testid={`state-${id}`}
            >
              {text}
              {unit && <span className="state-unit"> {unit}</span>}
            </span>
            <span className="muted small">
              <RelativeTime iso={entry.updatedAt} />
              {entity && (
                <>
                  {" "}
                  · <code>{id}</code>
                </>
              )}
            </span>
            {chartable && (
              <button
                type="button"
                className="button-small"
                aria-pressed={charted === id}
                aria-label={`Chart the history of ${entity?.name ?? id}`}
                onClick={() => onChart(id)}
              >
                Chart
              </button>
            )}
          </li>
        );
      })}
    </ul>
  );
}
