import { useEffect, useState } from "react";

/** What `GET /ready` says about disk use (see the README's "Disk use and retention"). */
export interface DiskStatus {
  databaseBytes: number;
  databaseFreeBytes: number;
  databaseWalBytes?: number;
  dataDirFreeBytes: number | null;
  databaseMaxBytes: number | null;
  diskLow: boolean;
}

const everyMs = 60_000;

/** Asks /ready now and every minute; `undefined` until it answered (or while the database is down). */
export function useDiskStatus(): DiskStatus | undefined {
  const [status, setStatus] = useState<DiskStatus>();
  useEffect(() => {
    let current = true;
    const load = async () => {
      try {
        const response = await fetch("/ready", { headers: { accept: "application/json" } });
        const body = (await response.json()) as { success: boolean; result?: DiskStatus };
        if (current && body.success && body.result) setStatus(body.result);
      } catch {
        // Unreachable or not ready: keep what was shown.
      }
    };
    void load();
    const timer = setInterval(() => void load(), everyMs);
    return () => {
      current = false;
      clearInterval(timer);
    };
  }, []);
  return status;
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024 * 1024) return `${Math.max(0, Math.round(bytes / 1024))} KB`;
  if (bytes < 1024 ** 3) return `${(bytes / 1024 ** 2).toFixed(1)} MB`;
  return `${(bytes / 1024 ** 3).toFixed(1)} GB`;
}
