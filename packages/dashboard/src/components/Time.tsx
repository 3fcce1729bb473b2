import { useNow } from "../hooks/useNow.ts";

const absolute = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "medium" });
const relative = new Intl.RelativeTimeFormat(undefined, { numeric: "auto" });

function formatDateTime(iso: string): string {
  return absolute.format(new Date(iso));
}

function formatRelative(iso: string, now: number): string {
  const seconds = Math.round((new Date(iso).getTime() - now) / 1000);
  const abs = Math.abs(seconds);
  if (abs < 45) return "just now";
  if (abs < 3600) return relative.format(Math.round(seconds / 60), "minute");
  if (abs < 86_400) return relative.format(Math.round(seconds / 3600), "hour");
  if (abs < 30 * 86_400) return relative.format(Math.round(seconds / 86_400), "day");
  return absolute.format(new Date(iso));
}

/** "3 minutes ago", with the exact time on hover and for machines. */
export function RelativeTime({ iso, fallback = "never" }: { iso: string | null; fallback?: string }) {
  const now = useNow();
  if (!iso) return <span className="muted">{fallback}</span>;
  return (
    <time dateTime={iso} title={formatDateTime(iso)}>
      {formatRelative(iso, now)}
    </time>
  );
}

/** The exact date and time. */
export function DateTime({ iso }: { iso: string | null }) {
  if (!iso) return <span className="muted">—</span>;
  return <time dateTime={iso}>{formatDateTime(iso)}</time>;
}
