import { parseArgs } from "node:util";
import { positive } from "../lib/options.ts";

export interface Options {
  /** Fleet sizes of the end-to-end part, one after the other (e.g. [100, 1000]). */
  devices: number[];
  /** Offered rates (messages/s over the whole fleet), each held for `seconds`. */
  rates: number[];
  seconds: number;
  /** How many devices of each fleet get a watch socket (the first ones); the others send unmeasured. */
  watch: number;
  /** After a step, how long to wait for the watchers to get the last messages. */
  drainSeconds: number;
  /** Seconds each handler-call variant is measured (after a warm-up of a quarter of that). */
  callSeconds: number;
  /** Which parts to run. */
  calls: boolean;
  e2e: boolean;
  /** `sdk-pg` and `sdk-cluster` (PostgresTarget) with `--instances` 2 or more. */
  targets: ("sdk" | "reference" | "sdk-pg" | "sdk-cluster")[];
  /**
   * 1: the sdk on SQLite against the reference (the default). N ≥ 2: the sdk on PostgreSQL as one
   * instance, then as a cluster of N on PostgreSQL and NATS (devices on the first, watchers on the
   * last): the cost of the bus per message.
   */
  instances: number;
  /** PostgreSQL for `--instances` (a schema is created and dropped). */
  databaseUrl: string;
  /** NATS for `--instances` 2 or more. */
  natsUrl: string;
  timeoutMinutes: number;
  /** Where to write the JSON results (default bench/results/scripts-<date>.json). */
  out: string | undefined;
  /** Write V8 CPU profiles of the servers here (diagnosis only: profiling slows them down). */
  profileDir: string | undefined;
  /** Do not wait for other benchmark runs to end before starting. */
  noWait: boolean;
  /**
   * The overload step of each fleet offers this many times the most the sdk got through at that
   * fleet size (the reference gets the same offered rate); 0 leaves it out.
   */
  overloadFactor: number;
  /** How long the overload step offers its rate (default: `seconds`). */
  overloadSeconds: number;
  /** After the overload step, how long to wait at most for the last messages to come through. */
  overloadDrainSeconds: number;
  /** Before each step, how long to wait at most for other work on the machine to stop. */
  quietTimeoutSeconds: number;
  /** Measure the sdk server of this commit (exported), not the working tree. */
  serverRef: string | undefined;
  /** Each fsync of the sdk server takes this much longer (ms; 0: as the disk is). */
  fsyncDelayMs: number;
}

const usage = `usage: node bench/scripts/run.ts [--devices 100,1000] [--rates 1000,5000,10000] [--seconds S]
       [--watch N] [--drain-seconds S] [--call-seconds S] [--only calls|e2e|sdk|reference]
       [--timeout-minutes M] [--out FILE] [--profile DIR] [--no-wait]
       [--overload-factor F] [--overload-seconds S] [--overload-drain-seconds S] [--quiet-timeout S]
       [--instances N] [--database-url postgres://…] [--nats-url nats://…] [--server-ref GIT-REF]
       [--fsync-delay-ms MS]`;

function list(name: string, raw: string | undefined, fallback: number[]): number[] {
  if (raw === undefined) return fallback;
  return raw.split(",").map((item) => positive(name, item.trim(), 0, usage));
}

export function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      devices: { type: "string" },
      rates: { type: "string" },
      seconds: { type: "string" },
      watch: { type: "string" },
      "drain-seconds": { type: "string" },
      "call-seconds": { type: "string" },
      only: { type: "string" },
      "timeout-minutes": { type: "string" },
      out: { type: "string" },
      profile: { type: "string" },
      "no-wait": { type: "boolean" },
      "overload-factor": { type: "string" },
      "overload-seconds": { type: "string" },
      "overload-drain-seconds": { type: "string" },
      "quiet-timeout": { type: "string" },
      instances: { type: "string" },
      "database-url": { type: "string" },
      "nats-url": { type: "string" },
      "server-ref": { type: "string" },
      "fsync-delay-ms": { type: "string" },
      help: { type: "boolean" },
    },
  });
  if (values.help) {
    console.log(usage);
    process.exit(0);
  }
  const only = values.only;
  if (only !== undefined && !["calls", "e2e", "sdk", "reference"].includes(only)) {
    throw new Error(`--only must be calls, e2e, sdk or reference\n${usage}`);
  }
  const instances = positive("instances", values.instances, 1, usage);
  if (instances > 1 && only === "reference")
    throw new Error(`--instances compares sdk instances: not with --only reference\n${usage}`);
  return {
    devices: list("devices", values.devices, [100, 1000]),
    rates: list("rates", values.rates, [1000, 5000, 10_000]),
    seconds: positive("seconds", values.seconds, 10, usage),
    watch: positive("watch", values.watch, 1000, usage),
    drainSeconds: positive("drain-seconds", values["drain-seconds"], 5, usage),
    callSeconds: positive("call-seconds", values["call-seconds"], 3, usage),
    calls: only === undefined || only === "calls",
    e2e: only !== "calls",
    targets:
      instances > 1
        ? ["sdk-pg", "sdk-cluster"]
        : only === "sdk" || only === "reference"
          ? [only]
          : ["sdk", "reference"],
    instances,
    databaseUrl:
      values["database-url"] ?? process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test",
    natsUrl: values["nats-url"] ?? "nats://127.0.0.1:4222",
    timeoutMinutes: positive("timeout-minutes", values["timeout-minutes"], 15, usage),
    out: values.out,
    profileDir: values.profile,
    noWait: values["no-wait"] === true,
    overloadFactor:
      values["overload-factor"] === "0"
        ? 0
        : positive("overload-factor", values["overload-factor"], 2, usage),
    overloadSeconds: positive("overload-seconds", values["overload-seconds"] ?? values.seconds, 10, usage),
    overloadDrainSeconds: positive("overload-drain-seconds", values["overload-drain-seconds"], 60, usage),
    quietTimeoutSeconds:
      values["quiet-timeout"] === "0" ? 0 : positive("quiet-timeout", values["quiet-timeout"], 60, usage),
    serverRef: values["server-ref"],
    fsyncDelayMs:
      values["fsync-delay-ms"] === undefined
        ? 0
        : positive("fsync-delay-ms", values["fsync-delay-ms"], 0, usage),
  };
}
