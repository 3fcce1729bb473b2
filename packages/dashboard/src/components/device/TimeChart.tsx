/** A value at a time: numbers, or booleans (drawn as 0/1 and read as On/Off). */
export interface Point {
  at: string;
  value: number | boolean;
}

/** What a chart shows on its value axis: measurements, whole counts, or on/off. */
type Kind = "number" | "count" | "boolean";

const width = 320;
const height = 120;
const left = 44;
const right = 6;
const top = 8;
const bottom = 20;

const clock = new Intl.DateTimeFormat(undefined, {
  hour: "2-digit",
  minute: "2-digit",
  second: "2-digit",
  hour12: false,
});
const dayClock = new Intl.DateTimeFormat(undefined, {
  month: "short",
  day: "numeric",
  hour: "2-digit",
  minute: "2-digit",
  hour12: false,
});

/** True when a value can be charted. */
export const isChartable = (value: unknown): value is number | boolean =>
  (typeof value === "number" && Number.isFinite(value)) || typeof value === "boolean";

function kindOf(points: Point[]): Kind {
  if (points.every((p) => typeof p.value === "boolean")) return "boolean";
  if (points.every((p) => Number.isInteger(p.value))) return "count";
  return "number";
}

const numeric = (value: number | boolean) => (typeof value === "boolean" ? Number(value) : value);

function format(value: number, kind: Kind): string {
  if (kind === "boolean") return value ? "On" : "Off";
  if (kind === "count") return Math.round(value).toLocaleString("en-US");
  return Number.isInteger(value) ? String(value) : value.toFixed(2).replace(/\.?0+$/, "");
}

/**
 * A line chart of one entity's values over time, as inline SVG (no chart library): a time axis
 * (start, middle, end), the value axis in the value's own words (On/Off for booleans, whole numbers
 * for counts), and steps for booleans and counts, which hold their value until the next one.
 */
export function TimeChart({
  points: given,
  label,
  unit = "",
}: {
  points: Point[];
  label: string;
  unit?: string;
}) {
  const points = given.filter((p) => isChartable(p.value));
  if (points.length === 0) return <p className="muted">No values yet.</p>;
  const kind = kindOf(points);
  const times = points.map((p) => new Date(p.at).getTime());
  const values = points.map((p) => numeric(p.value));
  const [t0, t1] = [Math.min(...times), Math.max(...times)];
  let [min, max] = [Math.min(...values), Math.max(...values)];
  if (kind === "boolean") [min, max] = [0, 1];
  const x = (t: number) =>
    t1 === t0 ? left + (width - left - right) / 2 : left + ((t - t0) / (t1 - t0)) * (width - left - right);
  const y = (v: number) =>
    max === min
      ? (top + height - bottom) / 2
      : height - bottom - ((v - min) / (max - min)) * (height - top - bottom);
  const stepped = kind !== "number";
  const coords = points.flatMap((_, i) => {
    const here = `${x(times[i]!).toFixed(1)},${y(values[i]!).toFixed(1)}`;
    if (!stepped || i === 0) return [here];
    return [`${x(times[i]!).toFixed(1)},${y(values[i - 1]!).toFixed(1)}`, here];
  });
  const tickTimes = t1 === t0 ? [t0] : [t0, (t0 + t1) / 2, t1];
  const timeText = t1 - t0 > 86_400_000 ? dayClock : clock;
  const show = (v: number) => `${format(v, kind)}${kind === "boolean" ? "" : unit}`;
  const last = values[values.length - 1]!;
  const from = timeText.format(t0);
  const to = timeText.format(t1);
  const summary = `${label} from ${from} to ${to}: ${points.length} value${points.length === 1 ? "" : "s"}, lowest ${show(Math.min(...values))}, highest ${show(Math.max(...values))}, latest ${show(last)}`;
  const anchors = ["start", "middle", "end"] as const;
  return (
    <figure className="sparkline" data-kind={kind}>
      <svg viewBox={`0 0 ${width} ${height}`} role="img" aria-label={summary}>
        {[min, max].map((v, i) => (
          <g key={`v${i}`}>
            <line x1={left} x2={width - right} y1={y(v)} y2={y(v)} className="sparkline-guide" />
            <text x={left - 4} y={y(v)} className="chart-axis" textAnchor="end" dominantBaseline="middle">
              {show(v)}
            </text>
          </g>
        ))}
        {tickTimes.map((t, i) => (
          <text
            key={`t${t}`}
            x={x(t)}
            y={height - 4}
            className="chart-axis chart-time"
            textAnchor={tickTimes.length === 1 ? "middle" : anchors[i]}
          >
            {timeText.format(t)}
          </text>
        ))}
        {points.length > 1 ? <polyline points={coords.join(" ")} className="sparkline-line" /> : null}
        <circle cx={x(times[times.length - 1]!)} cy={y(last)} r="3" className="sparkline-dot" />
      </svg>
      <figcaption className="sparkline-caption">
        <span>
          min <strong>{show(Math.min(...values))}</strong>
        </span>
        <span>
          max <strong>{show(Math.max(...values))}</strong>
        </span>
        <span>
          latest <strong>{show(last)}</strong>
        </span>
        <span>
          from <time dateTime={new Date(t0).toISOString()}>{from}</time> to{" "}
          <time dateTime={new Date(t1).toISOString()}>{to}</time>
        </span>
      </figcaption>
    </figure>
  );
}
