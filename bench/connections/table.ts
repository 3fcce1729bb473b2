/**
 * Prints the Markdown table of a results file again: node bench/connections/table.ts FILE.json
 */
import fs from "node:fs";
import type { TargetResult } from "./phases.ts";
import { table } from "./report.ts";

const file = process.argv[2];
if (!file) {
  process.stderr.write("usage: node bench/connections/table.ts bench/results/connections-….json\n");
  process.exit(2);
}
const record = JSON.parse(fs.readFileSync(file, "utf8")) as { results: TargetResult[] };
process.stdout.write(`${table(record.results)}\n`);
