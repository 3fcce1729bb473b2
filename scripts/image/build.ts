#!/usr/bin/env node
// npm run image [-- --firmware <dir>] [-- --output <file>]: builds the multi-architecture server
// image with buildah (no Docker engine, no registry) and writes it as an OCI archive that
// `podman load` / `docker load` name sdk:<version>.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { checkProductionOnly, stageApp } from "./app.ts";
import { normalizeArchive } from "./normalize.ts";
import { archInfo, architectures, node } from "./pins.ts";
import { buildRootfs, downloadDebs } from "./rootfs.ts";
import { checkTools, ImageError, progress, run } from "./run.ts";
import { archiveSizes } from "./sizes.ts";
import { Store } from "./store.ts";

const usage = `Usage: npm run image [-- options]

Builds the sdk server image for linux/amd64 and linux/arm64 and writes one OCI archive holding
both (load it with: podman load -i dist/sdk-image.oci.tar). Needs root and Debian's buildah,
skopeo and binutils-aarch64-linux-gnu.

Options:
  --firmware <dir>   bundle the firmware releases in <dir> (<version>/<board>.uf2, as pico-sdk
                     builds them); the server imports them at boot. Default: none.
  --output <file>    where to write the archive (default dist/sdk-image.oci.tar)
  --work <dir>       scratch directory for the build (default build/image); removed afterwards
  --help             show this help
`;

const repo = path.resolve(import.meta.dirname, "../..");

function sourceUrl(manifest: { repository?: string | { url?: string } }): string {
  const field = typeof manifest.repository === "string" ? manifest.repository : manifest.repository?.url;
  if (field) return field;
  const git = spawnSync("git", ["remote", "get-url", "origin"], { cwd: repo, encoding: "utf8" });
  return git.status === 0 ? git.stdout.trim() : "";
}

/** Seconds since the epoch every file and the image's creation date get: the last commit's. */
function timestamp(): number {
  const fromEnv = process.env.SOURCE_DATE_EPOCH;
  if (fromEnv && /^\d+$/.test(fromEnv)) return Number(fromEnv);
  const git = spawnSync("git", ["log", "-1", "--format=%ct"], { cwd: repo, encoding: "utf8" });
  return git.status === 0 && /^\d+$/.test(git.stdout.trim()) ? Number(git.stdout.trim()) : 0;
}

function copyFirmware(from: string | undefined, to: string): number {
  fs.mkdirSync(to, { recursive: true });
  if (from === undefined) return 0;
  if (!fs.statSync(from, { throwIfNoEntry: false })?.isDirectory()) {
    throw new ImageError(`--firmware ${from}: not a directory (expected <version>/<board>.uf2 files)`);
  }
  const files = fs.globSync("*/*.uf2", { cwd: from });
  if (files.length === 0) throw new ImageError(`--firmware ${from}: no <version>/<board>.uf2 files in it`);
  for (const file of files) {
    fs.mkdirSync(path.join(to, path.dirname(file)), { recursive: true });
    fs.copyFileSync(path.join(from, file), path.join(to, file));
    fs.chmodSync(path.join(to, file), 0o444);
  }
  return files.length;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      firmware: { type: "string" },
      output: { type: "string" },
      work: { type: "string" },
      help: { type: "boolean" },
    },
  });
  if (values.help) {
    process.stdout.write(usage);
    return;
  }
  checkTools();
  const manifest = JSON.parse(fs.readFileSync(path.join(repo, "package.json"), "utf8"));
  const version: string = manifest.version;
  const output = path.resolve(values.output ?? path.join(repo, "dist/sdk-image.oci.tar"));
  const work = path.resolve(values.work ?? path.join(repo, "build/image"));
  const cache = path.join(repo, "build/image-cache");
  const epoch = timestamp();
  const source = sourceUrl(manifest);
  if (source === "") {
    progress('warning: no "repository" in package.json and no git remote: the source label stays empty');
  }
  progress(`sdk ${version}, Node ${node.version}, timestamp ${epoch}, scratch ${work}`);

  const store = new Store(path.join(work, "store"));
  store.remove();
  fs.rmSync(work, { recursive: true, force: true });
  const context = path.join(work, "context");
  try {
    progress("building the dashboard when needed (scripts/ensure-dashboard.mjs)");
    run(process.execPath, [path.join(repo, "scripts/ensure-dashboard.mjs")], { cwd: repo });
    if (!fs.existsSync(path.join(repo, "packages/dashboard/dist/index.html"))) {
      throw new ImageError(
        "packages/dashboard/dist is missing after the dashboard build: run npm ci, then retry",
      );
    }
    const debs = downloadDebs(cache, architectures);
    for (const arch of architectures) {
      progress(`root file system for ${arch}`);
      buildRootfs(path.join(context, `rootfs-${arch}`), arch, debs, cache);
    }
    progress("staging /app (server, protocol, sandbox, device, docs, built dashboard)");
    stageApp(repo, path.join(context, "app"), process.env.npm_config_cache);
    const count = checkProductionOnly(path.join(context, "app"));
    progress(`/app holds ${count} production dependencies and no development tools`);
    const firmware = copyFirmware(values.firmware, path.join(context, "firmware"));
    progress(
      firmware ? `bundling ${firmware} firmware files from ${values.firmware}` : "no firmware bundled",
    );
    fs.mkdirSync(path.join(context, "data"));

    const list = `sdk:${version}`;
    for (const arch of architectures) {
      progress(`buildah build ${archInfo[arch].platform}`);
      store.buildah([
        "build",
        "--quiet",
        "--format",
        "docker",
        "--platform",
        archInfo[arch].platform,
        "--timestamp",
        String(epoch),
        "--identity-label=false",
        "--build-arg",
        `VERSION=${version}`,
        "--build-arg",
        `SOURCE=${source}`,
        "--manifest",
        list,
        "-f",
        path.join(repo, "deploy/Containerfile"),
        context,
      ]);
    }
    progress(`writing ${path.relative(process.cwd(), output)}`);
    fs.mkdirSync(path.dirname(output), { recursive: true });
    fs.rmSync(output, { force: true });
    // v2s2 (Docker's format) inside the OCI archive: the OCI image format has no HEALTHCHECK.
    store.buildah([
      "manifest",
      "push",
      "--quiet",
      "--all",
      "--format",
      "v2s2",
      list,
      `oci-archive:${output}:${list}`,
    ]);
    normalizeArchive(output, path.join(work, "normalize"), epoch);
  } finally {
    store.remove();
    fs.rmSync(work, { recursive: true, force: true });
  }
  const sizes = archiveSizes(output);
  progress(`manifest list ${sizes.digest}`);
  for (const { platform, compressed } of sizes.images) {
    progress(`${platform}: ${(compressed / 1e6).toFixed(1)} MB compressed`);
  }
  progress(`done: podman load -i ${path.relative(process.cwd(), output)} gives ${`sdk:${version}`}`);
}

main().catch((error: unknown) => {
  if (error instanceof ImageError) {
    process.stderr.write(`npm run image: ${error.message}\n`);
    process.exit(1);
  }
  throw error;
});
