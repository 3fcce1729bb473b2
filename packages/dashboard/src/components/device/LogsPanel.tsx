import type { LogEntry, LogLevel } from "@sdk/protocol";
import { useEffect, useLayoutEffect, useRef, useState } from "react";
import { Empty } from "../Feedback.tsx";
import { Options } from "../Form.tsx";

/** The levels, least severe first: each choice shows its level and the ones after it. */
const levelChoices: { value: LogLevel; label: string }[] = [
  { value: "debug", label: "All levels" },
  { value: "info", label: "Info and above" },
  { value: "warn", label: "Warnings and errors" },
  { value: "error", label: "Errors only" },
];
const levels = levelChoices.map((choice) => choice.value);

const clock = new Intl.DateTimeFormat(undefined, {
  hour: "2-digit",
  minute: "2-digit",
  second: "2-digit",
  fractionalSecondDigits: 3,
  hour12: false,
});
const day = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "medium" });

function LogLine({ entry }: { entry: LogEntry }) {
  const at = new Date(entry.at);
  return (
    <li className={`log-line log-${entry.level}`}>
      <time dateTime={entry.at} title={day.format(at)} className="log-time">
        {clock.format(at)}
      </time>
      <span className={`log-level level-${entry.level}`}>{entry.level}</span>
      <span className="log-source">{entry.source}</span>
      <span className="log-message">{entry.message}</span>
    </li>
  );
}

/** Live logs with a minimum level, a text search and a pause (new lines wait until resumed). */
export function LogsPanel({ logs }: { logs: LogEntry[] }) {
  const [minLevel, setMinLevel] = useState<LogLevel>("debug");
  const [search, setSearch] = useState("");
  const [frozen, setFrozen] = useState<LogEntry[] | null>(null);
  const box = useRef<HTMLElement>(null);
  const atBottom = useRef(true);

  const source = frozen ?? logs;
  const needle = search.trim().toLowerCase();
  const shown = source.filter(
    (e) =>
      levels.indexOf(e.level) >= levels.indexOf(minLevel) &&
      (!needle || e.message.toLowerCase().includes(needle) || e.source.includes(needle)),
  );
  const lastFrozen = frozen?.[frozen.length - 1]?.id ?? "";
  const waiting = frozen ? logs.filter((e) => e.id > lastFrozen).length : 0;

  // Follow new lines while the reader is at the bottom; stay put when they scrolled up to read.
  useLayoutEffect(() => {
    const el = box.current;
    if (el && atBottom.current) el.scrollTop = el.scrollHeight;
  });
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const onScroll = () => {
      atBottom.current = el.scrollHeight - el.scrollTop - el.clientHeight < 24;
    };
    el.addEventListener("scroll", onScroll, { passive: true });
    return () => el.removeEventListener("scroll", onScroll);
  }, []);

  return (
    <section className="card section" aria-labelledby="logs-title">
      <div className="section-header">
        <h2 id="logs-title">Logs</h2>
        <div className="toolbar">
          <div className="field field-inline">
            <label htmlFor="log-level">Level</label>
            <select id="log-level" value={minLevel} onChange={(e) => setMinLevel(e.target.value as LogLevel)}>
              <Options choices={levelChoices} />
            </select>
          </div>
          <div className="field field-inline">
            <label htmlFor="log-search">Search</label>
            <input
              id="log-search"
              type="search"
              placeholder="text in the message"
              value={search}
              onChange={(e) => setSearch(e.target.value)}
            />
          </div>
          <button
            type="button"
            className="button-small"
            aria-pressed={frozen !== null}
            onClick={() => setFrozen(frozen ? null : logs)}
          >
            {frozen ? "Resume" : "Pause"}
          </button>
        </div>
      </div>
      <p className="muted small" role="status">
        {frozen
          ? `Paused: ${waiting} new line${waiting === 1 ? "" : "s"} waiting.`
          : `Showing ${shown.length} of ${source.length} recent lines, live.`}
      </p>
      {source.length === 0 ? (
        <Empty title="No logs yet">
          Lines the device, the server or your script write appear here as they happen.
        </Empty>
      ) : (
        <section className="log-box" ref={box} aria-label="Log lines, oldest first">
          {shown.length === 0 ? (
            <p className="muted log-none">No line matches the level and search.</p>
          ) : null}
          <ol className="log-list" role="log" aria-live={frozen ? "off" : "polite"} aria-relevant="additions">
            {shown.map((entry) => (
              <LogLine key={entry.id} entry={entry} />
            ))}
          </ol>
        </section>
      )}
    </section>
  );
}
