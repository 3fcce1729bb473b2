/**
 * Prints the Markdown tables of a results file again: node bench/scripts/table.ts FILE.json
 */
import fs from "node:fs";
import type { CallsResult } from "./handler-calls.ts";
import type { TargetResult } from "./phases.ts";
import { report } from "./report.ts";

const file = process.argv[2];
if (!file) {
  process.stderr.write("usage: node bench/scripts/table.ts bench/results/scripts-….json\n");
  process.exit(2);
}
const record = JSON.parse(fs.readFileSync(file, "utf8")) as {
  calls: CallsResult | null;
  e2e: TargetResult[];
};
process.stdout.write(`${report(record)}\n`);
