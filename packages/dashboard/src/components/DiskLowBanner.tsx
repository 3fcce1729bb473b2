import { formatBytes, useDiskStatus } from "../hooks/useDiskStatus.ts";

/** On every page while DATA_DIR is low on space: writes fail once the disk is full. */
export function DiskLowBanner() {
  const disk = useDiskStatus();
  if (!disk?.diskLow) return null;
  return (
    <div className="banner banner-warning" role="alert" data-testid="disk-low">
      <strong>The server is low on disk space:</strong>{" "}
      {disk.dataDirFreeBytes === null ? "little" : formatBytes(disk.dataDirFreeBytes)} free. Device logs,
      state and deploys stop being saved when it is full. Free some space or shorten retention.
    </div>
  );
}
