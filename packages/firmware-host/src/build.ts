// Builds firmware/ (the core and the Linux host port) into build/firmware-host, once per process,
// with ASan and UBSan so every test session that runs the firmware is checked by them.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { hasCommand, unavailable } from "./unavailable.ts";

export type FirmwareHost = { binary: string } | { skip: string };

/** The checkout this package sits in: the nearest directory above it with firmware/CMakeLists.txt. */
function findRepository(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!fs.existsSync(path.join(dir, "firmware", "CMakeLists.txt"))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error("firmware/CMakeLists.txt not found above @sdk/firmware-host");
    dir = parent;
  }
  return dir;
}

const repository = findRepository();
const source = path.join(repository, "firmware");
const buildDir = path.join(repository, "build", "firmware-host");
const debian = "apt-get install cmake clang libmbedtls-dev; gcc works instead of clang";

let built: FirmwareHost | undefined;

/** The path of sdk-firmware-host, built if needed; {skip} when a tool or library is missing (throws on CI). */
export function firmwareHost(): FirmwareHost {
  built ??= build();
  return built;
}

function run(command: string, args: string[]): void {
  try {
    execFileSync(command, args, { cwd: repository, encoding: "utf8", stdio: "pipe", maxBuffer: 64 << 20 });
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${command} ${args.join(" ")} failed:\n${e.stdout ?? ""}${e.stderr ?? e.message}`);
  }
}

/** The values CMake cached for these variables (a library not found ends in -NOTFOUND). */
function cached(names: string[]): Map<string, string> {
  const text = fs.readFileSync(path.join(buildDir, "CMakeCache.txt"), "utf8");
  const values = new Map<string, string>();
  for (const line of text.split("\n")) {
    const match = /^(\w+):\w+=(.*)$/.exec(line);
    if (match && names.includes(match[1]!)) values.set(match[1]!, match[2]!);
  }
  return values;
}

/** Sleeps the thread (the build is synchronous, and so is waiting for another process's build). */
function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * node --test runs each test file in its own process, and several of them build the firmware: one
 * build at a time, serialised by a lock directory (taken over when its holder died or it is stale).
 */
function withBuildLock<T>(work: () => T): T {
  const lock = path.join(repository, "build", "firmware-host.lock");
  fs.mkdirSync(path.dirname(lock), { recursive: true });
  const deadline = Date.now() + 15 * 60_000;
  for (;;) {
    try {
      fs.mkdirSync(lock);
      fs.writeFileSync(path.join(lock, "pid"), String(process.pid));
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      if (lockAbandoned(lock)) fs.rmSync(lock, { recursive: true, force: true });
      else if (Date.now() > deadline) throw new Error(`${lock} is held for more than 15 minutes`);
      else sleepSync(100);
    }
  }
  try {
    return work();
  } finally {
    fs.rmSync(lock, { recursive: true, force: true });
  }
}

function lockAbandoned(lock: string): boolean {
  try {
    const pid = Number(fs.readFileSync(path.join(lock, "pid"), "utf8"));
    process.kill(pid, 0);
    return false;
  } catch (error) {
    // No pid file yet: the holder is between mkdir and write, unless that was long ago.
    if ((error as NodeJS.ErrnoException).code === "ENOENT") {
      const stat = fs.statSync(lock, { throwIfNoEntry: false });
      return stat !== undefined && Date.now() - stat.mtimeMs > 10_000;
    }
    return (error as NodeJS.ErrnoException).code === "ESRCH";
  }
}

function build(): FirmwareHost {
  return withBuildLock(buildUnlocked);
}

function buildUnlocked(): FirmwareHost {
  if (!hasCommand("cmake")) return unavailable(`cmake is not installed (Debian: ${debian})`);
  const compiler = ["clang", "gcc"].find((c) => hasCommand(c));
  if (!compiler) return unavailable(`no C compiler (clang or gcc) is installed (Debian: ${debian})`);
  run("cmake", [
    "-S",
    source,
    "-B",
    buildDir,
    "-DCMAKE_BUILD_TYPE=Debug",
    "-DSDK_SANITIZE=ON",
    `-DCMAKE_C_COMPILER=${compiler}`,
  ]);
  const mbedtls = ["MBEDTLS_INCLUDE_DIR", "MBEDTLS_LIBRARY", "MBEDX509_LIBRARY", "MBEDCRYPTO_LIBRARY"];
  const values = cached(mbedtls);
  const missing = mbedtls.filter((name) => (values.get(name) ?? "NOTFOUND").endsWith("NOTFOUND"));
  if (missing.length > 0) {
    return unavailable(
      `mbedtls was not found (${missing.join(", ")}; Debian: apt-get install libmbedtls-dev)`,
    );
  }
  run("cmake", ["--build", buildDir, "--target", "sdk-firmware-host", "--parallel"]);
  return { binary: path.join(buildDir, "sdk-firmware-host") };
}
