// Docker's image format (needed for HEALTHCHECK, which the OCI format lacks) makes buildah record
// the build container's random id and host name in each image's config. This rewrites the archive
// without them, so that equal sources give an equal manifest list digest.
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { run } from "./run.ts";

interface Descriptor {
  digest: string;
  size: number;
  [key: string]: unknown;
}

export function normalizeArchive(archive: string, dir: string, epoch: number): void {
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  run("tar", ["-xf", archive, "-C", dir]);
  const blobPath = (digest: string) => path.join(dir, "blobs/sha256", digest.replace("sha256:", ""));
  const read = (digest: string) => JSON.parse(fs.readFileSync(blobPath(digest), "utf8"));
  const replace = (old: Descriptor, value: unknown): void => {
    const text = JSON.stringify(value);
    const digest = `sha256:${createHash("sha256").update(text).digest("hex")}`;
    if (digest === old.digest) return;
    fs.rmSync(blobPath(old.digest));
    fs.writeFileSync(blobPath(digest), text);
    old.digest = digest;
    old.size = Buffer.byteLength(text);
  };

  const indexFile = path.join(dir, "index.json");
  const index = JSON.parse(fs.readFileSync(indexFile, "utf8")) as { manifests: Descriptor[] };
  const listDescriptor = index.manifests[0]!;
  const list = read(listDescriptor.digest) as { manifests: Descriptor[] };
  for (const entry of list.manifests) {
    const manifest = read(entry.digest) as { config: Descriptor };
    const config = read(manifest.config.digest) as Record<string, unknown>;
    delete config.container;
    delete config.container_config;
    const runConfig = config.config as { Hostname?: string } | undefined;
    if (runConfig?.Hostname) runConfig.Hostname = "";
    replace(manifest.config, config);
    replace(entry, manifest);
  }
  replace(listDescriptor, list);
  fs.writeFileSync(indexFile, JSON.stringify(index));
  const tarOptions = ["--sort=name", `--mtime=@${epoch}`, "--owner=0", "--group=0", "--numeric-owner"];
  run("tar", ["-cf", archive, ...tarOptions, "-C", dir, "oci-layout", "index.json", "blobs"]);
  fs.rmSync(dir, { recursive: true, force: true });
}
