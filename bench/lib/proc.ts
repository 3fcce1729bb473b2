import fs from "node:fs";

/** Clock ticks per second of /proc/<pid>/stat times (`getconf CLK_TCK`; 100 on Linux). */
const clockTicks = 100;

/** What the kernel says about one process: resident memory and CPU time so far. */
export interface ProcSample {
  /** When the sample was taken (ms, performance clock). */
  at: number;
  rssBytes: number;
  /** user + system CPU time, in ms. */
  cpuMs: number;
  /** The main thread (the event loop): ms on a CPU, and ms runnable but waiting for one. */
  mainRunMs: number;
  mainWaitMs: number;
  /**
   * Bytes the process has written (files and sockets) and its write system calls, from
   * /proc/<pid>/io (`wchar`, `syscw`); NaN where that file cannot be read.
   */
  writtenBytes: number;
  writeCalls: number;
}

/**
 * Reads VmRSS from /proc/<pid>/status, utime + stime from /proc/<pid>/stat, the main thread's
 * run and run-queue times from /proc/<pid>/schedstat, and the write counters of /proc/<pid>/io.
 */
export function sampleProcess(pid: number): ProcSample {
  const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
  const rssKiB = Number(/^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1] ?? Number.NaN);
  const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
  // The command name is in parentheses and may hold spaces: fields are counted after the last ")".
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // utime and stime are fields 14 and 15 of stat(5); fields[0] here is field 3 (state).
  const ticks = Number(fields[11]) + Number(fields[12]);
  const [runNs, waitNs] = fs.readFileSync(`/proc/${pid}/schedstat`, "utf8").split(" ").map(Number);
  const io = readIo(pid);
  return {
    at: performance.now(),
    rssBytes: rssKiB * 1024,
    cpuMs: (ticks * 1000) / clockTicks,
    mainRunMs: (runNs ?? 0) / 1e6,
    mainWaitMs: (waitNs ?? 0) / 1e6,
    writtenBytes: Number(io.wchar ?? Number.NaN),
    writeCalls: Number(io.syscw ?? Number.NaN),
  };
}

/** The fields of /proc/<pid>/io (only readable by the process's owner), or none. */
function readIo(pid: number): Record<string, string> {
  try {
    const text = fs.readFileSync(`/proc/${pid}/io`, "utf8");
    return Object.fromEntries(text.split("\n").map((line) => line.split(": ")));
  } catch {
    return {};
  }
}

/** CPU time of the whole machine so far, over all cores, in ms (the first line of /proc/stat). */
export interface MachineSample {
  /** When the sample was taken (ms, performance clock). */
  at: number;
  /** user + nice + system: every process and kernel thread. */
  processMs: number;
  /** irq + softirq: interrupt work (the loopback network stack runs mostly here). */
  interruptMs: number;
  /** steal: time the hypervisor gave this VM's vCPUs to something else. */
  stealMs: number;
}

export function sampleMachine(): MachineSample {
  const line = fs.readFileSync("/proc/stat", "utf8").split("\n")[0] ?? "";
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = line
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  const ms = (ticks: number) => (ticks * 1000) / clockTicks;
  return {
    at: performance.now(),
    processMs: ms(user + nice + system),
    interruptMs: ms(irq + softirq),
    stealMs: ms(steal),
  };
}

/** Sums samples of several processes (the generator's workers). */
export function sampleProcesses(pids: readonly number[]): ProcSample {
  const samples = pids.map(sampleProcess);
  return {
    at: performance.now(),
    rssBytes: samples.reduce((sum, s) => sum + s.rssBytes, 0),
    cpuMs: samples.reduce((sum, s) => sum + s.cpuMs, 0),
    mainRunMs: samples.reduce((sum, s) => sum + s.mainRunMs, 0),
    mainWaitMs: samples.reduce((sum, s) => sum + s.mainWaitMs, 0),
    writtenBytes: samples.reduce((sum, s) => sum + s.writtenBytes, 0),
    writeCalls: samples.reduce((sum, s) => sum + s.writeCalls, 0),
  };
}

/** CPU used between two samples, as % of one core. */
export function cpuPercent(from: ProcSample, to: ProcSample): number {
  const wallMs = to.at - from.at;
  return wallMs > 0 ? ((to.cpuMs - from.cpuMs) / wallMs) * 100 : 0;
}

/** The soft limit on open files of this process (children inherit it). */
export function openFilesLimit(): number {
  const limits = fs.readFileSync("/proc/self/limits", "utf8");
  const soft = /^Max open files\s+(\S+)/m.exec(limits)?.[1];
  return soft === undefined || soft === "unlimited" ? Number.POSITIVE_INFINITY : Number(soft);
}

/** The machine, for the report. */
export function machineInfo(): { cpus: number; cpuModel: string; memoryGiB: number; node: string } {
  const cpuinfo = fs.readFileSync("/proc/cpuinfo", "utf8");
  const meminfo = fs.readFileSync("/proc/meminfo", "utf8");
  const memKiB = Number(/^MemTotal:\s+(\d+)/m.exec(meminfo)?.[1] ?? 0);
  return {
    cpus: (cpuinfo.match(/^processor\s*:/gm) ?? []).length,
    cpuModel: /^model name\s*:\s*(.+)$/m.exec(cpuinfo)?.[1]?.trim() ?? "unknown",
    memoryGiB: Math.round((memKiB / 1024 / 1024) * 10) / 10,
    node: process.version,
  };
}

/** Kernel TCP counters (this network namespace) that tell of a full accept queue. */
export interface ListenCounters {
  /** Connections dropped because a listening socket's accept queue was full. */
  listenOverflows: number;
  listenDrops: number;
}

export function listenCounters(): ListenCounters {
  const lines = fs.readFileSync("/proc/net/netstat", "utf8").split("\n");
  const header = lines.findIndex((l) => l.startsWith("TcpExt:"));
  const names = lines[header]?.split(/\s+/) ?? [];
  const values = lines[header + 1]?.split(/\s+/) ?? [];
  const get = (name: string) => Number(values[names.indexOf(name)] ?? Number.NaN);
  return { listenOverflows: get("ListenOverflows"), listenDrops: get("ListenDrops") };
}

export function listenDelta(from: ListenCounters, to: ListenCounters): ListenCounters {
  return {
    listenOverflows: to.listenOverflows - from.listenOverflows,
    listenDrops: to.listenDrops - from.listenDrops,
  };
}

/**
 * Other benchmark runs on this machine (`bench/<name>/run.ts` processes that are not this one or
 * its parent): their load would distort the figures.
 */
export function otherBenchmarks(): string[] {
  const found: string[] = [];
  for (const entry of fs.readdirSync("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid || pid === process.ppid) continue;
    let cmdline: string;
    try {
      cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim();
    } catch {
      continue; // gone, or not ours to read
    }
    if (/\bbench\/[\w-]+\/run\.ts\b/.test(cmdline) && !cmdline.startsWith("timeout "))
      found.push(`${pid}: ${cmdline}`);
  }
  return found;
}
