import type { ConnectionState } from "@sdk/protocol";

/** Online / offline as a coloured dot and a word (the word carries the meaning, not the colour). */
export function StatusBadge({ status }: { status: ConnectionState }) {
  return (
    <span className={`badge badge-${status}`} data-status={status}>
      <span className="dot" aria-hidden="true" />
      {status === "online" ? "Online" : "Offline"}
    </span>
  );
}
