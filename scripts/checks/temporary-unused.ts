// TEMPORARY: what knip finds unused today, to be removed from the code (then from this list).
// Written when the unused-export check was added, so that it passes while the removal is done;
// scripts/checks/unused.ts fails on anything unused not listed here and on entries that went.
// The goal is an empty list: never add to it to silence a new finding.
// "devDependencies packages/dashboard/package.json: @sdk/server" goes when the dashboard's test
// reaches the server through a declared export instead of ../../server/src/app.ts.
export const temporaryUnused: string[] = [
  "duplicates packages/protocol/src/fields.ts: ConnectionState",
  "duplicates packages/protocol/src/fields.ts: DeviceStatus",
  "devDependencies packages/dashboard/package.json: @sdk/server",
  "exports packages/dashboard/src/api.ts: client",
  "exports packages/dashboard/src/components/Time.tsx: formatDateTime",
  "exports packages/dashboard/src/components/Time.tsx: formatRelative",
  "exports packages/dashboard/src/components/device/StateCards.tsx: formatValue",
  "exports packages/dashboard/src/components/project/DeviceCredentials.tsx: boardServerAddress",
  "exports packages/dashboard/src/hooks/useLiveDevice.ts: maxLogs",
  "exports packages/simulator/src/hardware/uart.ts: uartChunkBytes",
  "types packages/dashboard/src/hooks/useLoad.ts: Loaded",
  "types packages/simulator/src/cli-args.ts: CliDevice",
];
