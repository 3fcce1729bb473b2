// A private buildah store, so the build neither reads nor changes the machine's images.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { run } from "./run.ts";

/** Mount points at or under `dir`, deepest first (from /proc/self/mountinfo). */
export function mountsUnder(dir: string): string[] {
  let info = "";
  try {
    info = fs.readFileSync("/proc/self/mountinfo", "utf8");
  } catch {
    return [];
  }
  const decodeOctal = (s: string) =>
    s.replace(/\\(\d{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));
  return info
    .split("\n")
    .map((line) => decodeOctal(line.split(" ")[4] ?? ""))
    .filter((mount) => mount === dir || mount.startsWith(`${dir}/`))
    .sort((a, b) => b.length - a.length);
}

export class Store {
  readonly #dir: string;

  constructor(dir: string) {
    this.#dir = dir;
  }

  get options(): string[] {
    return [
      "--root",
      path.join(this.#dir, "root"),
      "--runroot",
      path.join(this.#dir, "run"),
      "--storage-driver",
      "overlay",
    ];
  }

  buildah(args: string[]): string {
    return run("buildah", [...this.options, ...args]);
  }

  /** Deletes the store: its containers and images first, then any overlay still mounted. */
  remove(): void {
    if (!fs.existsSync(this.#dir)) return;
    for (const args of [
      ["rm", "--all"],
      ["rmi", "--all", "--force"],
    ]) {
      spawnSync("buildah", [...this.options, ...args], { stdio: "ignore" });
    }
    for (const mount of mountsUnder(this.#dir)) spawnSync("umount", [mount], { stdio: "ignore" });
    const left = mountsUnder(this.#dir);
    if (left.length > 0) throw new Error(`cannot delete ${this.#dir}: ${left.join(", ")} still mounted`);
    fs.rmSync(this.#dir, { recursive: true, force: true });
  }
}
