/** What every benchmark's entry point does around its measurements. */
import { sleep } from "./net.ts";
import { otherBenchmarks } from "./proc.ts";

/** Progress lines on stdout, each with the seconds since the run started. */
export function progressLog(): (line: string) => void {
  const started = Date.now();
  return (line: string) => {
    const t = ((Date.now() - started) / 1000).toFixed(1).padStart(7);
    process.stdout.write(`${t}s ${line}\n`);
  };
}

/**
 * While another benchmark runs on this machine (see otherBenchmarks), polls every 30 s, for at
 * most `maxMinutes`. Resolves with the ones still running then (empty when the machine is free).
 */
export async function waitForOtherBenchmarks(
  log: (line: string) => void,
  maxMinutes = 20,
): Promise<string[]> {
  const deadline = Date.now() + maxMinutes * 60_000;
  for (;;) {
    const others = otherBenchmarks();
    if (others.length === 0) return others;
    if (Date.now() >= deadline) {
      for (const other of others) log(`warning: still running after ${maxMinutes} min: ${other}`);
      return others;
    }
    log(`waiting for another benchmark to end (${others.join("; ")})`);
    await sleep(30_000);
  }
}

/**
 * Runs `main` under an overall time limit. On every way out (done, error, time limit, SIGINT,
 * SIGTERM) it awaits `cleanUp`, which must stop the processes the run started (only those, by their
 * PIDs) and remove its temporary files, then exits (0 when `main` succeeded).
 */
export function runBench(
  main: () => Promise<void>,
  cleanUp: () => Promise<void>,
  options: { timeoutMinutes: number; log: (line: string) => void },
): void {
  const exit = (code: number) => {
    void cleanUp().finally(() => process.exit(code));
  };
  const abort = (why: string) => {
    options.log(`aborting: ${why}`);
    exit(1);
  };
  const overall = setTimeout(
    () => abort(`over ${options.timeoutMinutes} minutes`),
    options.timeoutMinutes * 60_000,
  );
  overall.unref();
  process.on("SIGINT", () => abort("SIGINT"));
  process.on("SIGTERM", () => abort("SIGTERM"));
  main().then(
    () => {
      clearTimeout(overall);
      exit(0);
    },
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      exit(1);
    },
  );
}
