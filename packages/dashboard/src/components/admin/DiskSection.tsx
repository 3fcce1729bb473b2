import { formatBytes, useDiskStatus } from "../../hooks/useDiskStatus.ts";

/** The database's size and DATA_DIR's free space, from /ready. */
export function DiskSection() {
  const disk = useDiskStatus();
  if (!disk) return null;
  return (
    <section className="card section" aria-labelledby="disk-title">
      <h2 id="disk-title">Disk use</h2>
      <dl className="facts">
        <div>
          <dt>Database</dt>
          <dd data-testid="database-size">
            {formatBytes(disk.databaseBytes)}
            {disk.databaseMaxBytes !== null && <> of at most {formatBytes(disk.databaseMaxBytes)}</>}
            {(disk.databaseWalBytes ?? 0) > 0 && (
              <span className="muted small block">
                plus {formatBytes(disk.databaseWalBytes ?? 0)} of write-ahead log
              </span>
            )}
            {disk.databaseFreeBytes > 0 && (
              <span className="muted small block">
                {formatBytes(disk.databaseFreeBytes)} of it free for reuse
              </span>
            )}
          </dd>
        </div>
        <div>
          <dt>Free in DATA_DIR</dt>
          <dd data-testid="data-dir-free">
            {disk.dataDirFreeBytes === null ? "unknown" : formatBytes(disk.dataDirFreeBytes)}
            {disk.diskLow && <strong> — low: writes fail when it runs out</strong>}
          </dd>
        </div>
      </dl>
    </section>
  );
}
