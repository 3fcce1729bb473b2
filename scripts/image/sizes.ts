// Reads an image archive's manifest list: its digest and each platform's compressed size.
import { createHash } from "node:crypto";
import { run } from "./run.ts";

interface Descriptor {
  digest: string;
  size: number;
  platform?: { os: string; architecture: string; variant?: string };
}

export interface ArchiveSizes {
  /** The manifest list's digest: equal for equal images, whatever the archive's bytes. */
  digest: string;
  images: { platform: string; digest: string; compressed: number }[];
}

function blob(archive: string, digest: string): string {
  return run("tar", ["-xOf", archive, `blobs/sha256/${digest.replace("sha256:", "")}`]);
}

export function archiveSizes(archive: string): ArchiveSizes {
  const index = JSON.parse(run("tar", ["-xOf", archive, "index.json"])) as { manifests: Descriptor[] };
  const listDigest = index.manifests[0]!.digest;
  const listText = blob(archive, listDigest);
  if (`sha256:${createHash("sha256").update(listText).digest("hex")}` !== listDigest) {
    throw new Error(`${archive}: the manifest list does not match its digest`);
  }
  const list = JSON.parse(listText) as { manifests: Descriptor[] };
  const images = list.manifests.map((entry) => {
    const manifest = JSON.parse(blob(archive, entry.digest)) as { config: Descriptor; layers: Descriptor[] };
    const compressed = manifest.layers.reduce(
      (sum, layer) => sum + layer.size,
      manifest.config.size + entry.size,
    );
    const p = entry.platform!;
    return {
      platform: `${p.os}/${p.architecture}${p.variant ? `/${p.variant}` : ""}`,
      digest: entry.digest,
      compressed,
    };
  });
  return { digest: listDigest, images };
}
