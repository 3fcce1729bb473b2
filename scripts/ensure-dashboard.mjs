// Builds the dashboard when packages/dashboard/dist is missing or older than its sources, so that
// `npm start` always serves an up-to-date dashboard. Run by `npm start` and by CI. A failed build is
// reported, and the server starts without the dashboard.
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const tool = fileURLToPath(new URL("ensure-built.ts", import.meta.resolve("@sdk/dashboard/package.json")));
spawnSync(process.execPath, [tool], { stdio: "inherit" });
