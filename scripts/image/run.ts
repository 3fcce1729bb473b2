import { spawnSync } from "node:child_process";

const started = performance.now();

/** One progress line: `[image 12.3s] message`. */
export function progress(message: string): void {
  process.stdout.write(`[image ${((performance.now() - started) / 1000).toFixed(1)}s] ${message}\n`);
}

export class ImageError extends Error {}

/** Runs a command, returning its stdout; throws an `ImageError` with its stderr when it fails. */
export function run(
  command: string,
  args: string[],
  options: { cwd?: string; quiet?: boolean } = {},
): string {
  const result = spawnSync(command, args, {
    cwd: options.cwd,
    encoding: "utf8",
    maxBuffer: 256 * 1024 * 1024,
    stdio: ["ignore", "pipe", "pipe"],
  });
  if (result.error) throw new ImageError(`${command}: ${result.error.message}`);
  if (result.status !== 0) {
    const output = `${result.stderr}${result.stdout}`.trim().split("\n").slice(-15).join("\n");
    throw new ImageError(`${command} ${args.join(" ")} failed (exit ${result.status}):\n${output}`);
  }
  return result.stdout;
}

/** Debian packages providing the commands the build needs. */
const toolPackages: Record<string, string> = {
  buildah: "buildah",
  skopeo: "skopeo",
  "apt-get": "apt",
  "dpkg-deb": "dpkg",
  tar: "tar",
  "x86_64-linux-gnu-strip": "binutils-x86-64-linux-gnu",
  "aarch64-linux-gnu-strip": "binutils-aarch64-linux-gnu",
};

function onPath(command: string): boolean {
  return spawnSync("sh", ["-c", `command -v ${command}`], { stdio: "ignore" }).status === 0;
}

/** Fails with one message naming every missing command and the Debian packages to install. */
export function checkTools(): void {
  const missing = Object.keys(toolPackages).filter((command) => !onPath(command));
  if (missing.length > 0) {
    const packages = [...new Set(missing.map((command) => toolPackages[command]))].join(" ");
    throw new ImageError(
      `missing ${missing.join(", ")}: install them with\n  sudo apt-get install -y ${packages}\n(the image is built with buildah and skopeo; no Docker engine is needed)`,
    );
  }
  if (process.getuid?.() !== 0) {
    throw new ImageError(
      "building the image needs root (buildah writes layers owned by other users): run it with sudo",
    );
  }
}
