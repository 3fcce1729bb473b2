import { parseArgs } from "node:util";
import { positive } from "../lib/options.ts";

export interface Options {
  devices: number;
  /** Handshakes in flight at once during the initial connect (over all workers). */
  concurrency: number;
  /** Load-generator processes. */
  workers: number;
  /** The idle window over which heartbeat CPU is measured. */
  idleSeconds: number;
  targets: ("sdk" | "reference")[];
  timeoutMinutes: number;
  /** Where to write the JSON results (default bench/results/connections-<date>.json). */
  out: string | undefined;
  /** Measure the sdk server of this commit (exported), not the working tree. */
  serverRef: string | undefined;
  /** Write V8 CPU profiles of the servers here (diagnosis only: profiling slows them down). */
  profileDir: string | undefined;
  /** sdk only: deploy a small script to the project before the devices connect (one instance per device). */
  script: boolean;
}

const usage = `usage: node bench/connections/run.ts [--devices N] [--concurrency N] [--workers N]
       [--idle-seconds S] [--only sdk|reference] [--timeout-minutes M] [--out FILE]
       [--server-ref GIT-REF] [--profile DIR] [--no-script]`;

export function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      devices: { type: "string" },
      concurrency: { type: "string" },
      workers: { type: "string" },
      "idle-seconds": { type: "string" },
      only: { type: "string" },
      "timeout-minutes": { type: "string" },
      out: { type: "string" },
      profile: { type: "string" },
      "server-ref": { type: "string" },
      script: { type: "boolean", default: true },
      "no-script": { type: "boolean" },
      help: { type: "boolean" },
    },
  });
  if (values.help) {
    console.log(usage);
    process.exit(0);
  }
  const only = values.only;
  if (only !== undefined && only !== "sdk" && only !== "reference") {
    throw new Error(`--only must be sdk or reference\n${usage}`);
  }
  return {
    devices: positive("devices", values.devices, 10_000, usage),
    concurrency: positive("concurrency", values.concurrency, 200, usage),
    workers: positive("workers", values.workers, 1, usage),
    idleSeconds: positive("idle-seconds", values["idle-seconds"], 30, usage),
    targets: only ? [only] : ["sdk", "reference"],
    timeoutMinutes: positive("timeout-minutes", values["timeout-minutes"], 30, usage),
    out: values.out,
    profileDir: values.profile,
    serverRef: values["server-ref"],
    script: values.script === true && values["no-script"] !== true,
  };
}
