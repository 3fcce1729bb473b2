export interface Point {
  at: string;
  value: number;
}

const width = 300;
const height = 80;
const pad = 4;

function format(value: number): string {
  return Number.isInteger(value) ? String(value) : value.toFixed(2).replace(/\.?0+$/, "");
}

/** A small line chart of numeric values over time, as inline SVG (no chart library). */
export function Sparkline({ points, label, unit = "" }: { points: Point[]; label: string; unit?: string }) {
  if (points.length === 0) return <p className="muted">No values yet.</p>;
  const times = points.map((p) => new Date(p.at).getTime());
  const values = points.map((p) => p.value);
  const [t0, t1] = [Math.min(...times), Math.max(...times)];
  const [min, max] = [Math.min(...values), Math.max(...values)];
  const x = (t: number) => (t1 === t0 ? width / 2 : pad + ((t - t0) / (t1 - t0)) * (width - 2 * pad));
  const y = (v: number) =>
    max === min ? height / 2 : height - pad - ((v - min) / (max - min)) * (height - 2 * pad);
  const coords = points.map((p, i) => `${x(times[i]!).toFixed(1)},${y(p.value).toFixed(1)}`);
  const last = points[points.length - 1]!;
  const summary = `${label}: ${points.length} value${points.length === 1 ? "" : "s"}, lowest ${format(min)}${unit}, highest ${format(max)}${unit}, latest ${format(last.value)}${unit}`;
  return (
    <figure className="sparkline">
      <svg viewBox={`0 0 ${width} ${height}`} role="img" aria-label={summary}>
        <line x1="0" x2={width} y1={y(min)} y2={y(min)} className="sparkline-guide" />
        <line x1="0" x2={width} y1={y(max)} y2={y(max)} className="sparkline-guide" />
        {points.length > 1 ? <polyline points={coords.join(" ")} className="sparkline-line" /> : null}
        <circle cx={x(times[times.length - 1]!)} cy={y(last.value)} r="3" className="sparkline-dot" />
      </svg>
      <figcaption className="sparkline-caption">
        <span>
          min{" "}
          <strong>
            {format(min)}
            {unit}
          </strong>
        </span>
        <span>
          max{" "}
          <strong>
            {format(max)}
            {unit}
          </strong>
        </span>
        <span>
          latest{" "}
          <strong>
            {format(last.value)}
            {unit}
          </strong>
        </span>
      </figcaption>
    </figure>
  );
}
