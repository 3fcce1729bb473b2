// Builds the dashboard when packages/dashboard/dist is missing or older than its sources, so that
// `npm start` always serves an up-to-date dashboard. Run by `npm start` and by CI.
import { ensureBuilt } from "@sdk/dashboard/ensure-built";

if (!ensureBuilt()) process.stderr.write("The dashboard build failed; the server starts without it.\n");
