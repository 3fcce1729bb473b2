// The npm registry reachable from our build machines carries only the Linux builds of packages
// that ship per-platform binaries (Biome, esbuild). `npm install` then leaves the other platforms'
// optional packages out of package-lock.json, and `npm ci` refuses the lock as out of sync.
// This adds those entries back, with the os/cpu/libc npm uses to skip them on other platforms.
// Run after any `npm install` that changes the lock: node scripts/complete-lockfile.mjs
import fs from "node:fs";

const file = new URL("../package-lock.json", import.meta.url);
const lock = JSON.parse(fs.readFileSync(file, "utf8"));
const oses = [
  "darwin",
  "linux",
  "win32",
  "freebsd",
  "android",
  "openbsd",
  "netbsd",
  "sunos",
  "aix",
  "openharmony",
];
const cpus = ["x64", "arm64", "arm", "ia32", "ppc64", "s390x", "riscv64", "loong64", "mips64el", "wasm32"];

let added = 0;
for (const [key, entry] of Object.entries(lock.packages)) {
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const target = `node_modules/${name}`;
    if (lock.packages[target] || lock.packages[`${key}/${target}`]) continue;
    const parts = name.split(/[/-]/);
    const os = oses.find((o) => parts.includes(o));
    const cpu = cpus.find((c) => parts.includes(c));
    if (!os && !cpu) continue;
    lock.packages[target] = {
      version: version.replace(/^[\^~]/, ""),
      ...(cpu ? { cpu: [cpu] } : {}),
      ...(os ? { os: [os] } : {}),
      ...(parts.includes("musl") ? { libc: ["musl"] } : {}),
      optional: true,
    };
    added++;
  }
}
lock.packages = Object.fromEntries(
  Object.entries(lock.packages).sort(([a], [b]) => (a === "" ? -1 : b === "" ? 1 : a.localeCompare(b))),
);
fs.writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`package-lock.json: added ${added} platform entries`);
