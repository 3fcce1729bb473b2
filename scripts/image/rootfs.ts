// The runtime root file system of one architecture, with no package manager, shell or emulation:
// Debian's runtime libraries unpacked with dpkg-deb, Node's binary from the npm registry
// (stripped), and the few files /etc needs for a non-root user.
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { type Arch, archInfo, debianKeyring, debianPackages, debianSources, node } from "./pins.ts";
import { ImageError, progress, run } from "./run.ts";

function aptOptions(cache: string): string[] {
  const apt = path.join(cache, "apt");
  return [
    "-o",
    `Dir::Etc::SourceList=${path.join(apt, "sources.list")}`,
    "-o",
    `Dir::Etc::SourceParts=${path.join(apt, "sources.list.d")}`,
    "-o",
    `Dir::State::Lists=${path.join(apt, "lists")}`,
    "-o",
    `Dir::Cache=${path.join(apt, "cache")}`,
    "-o",
    "APT::Architectures=amd64,arm64",
    "-o",
    "APT::Sandbox::User=root",
    "-qq",
  ];
}

function prepareApt(cache: string): void {
  const apt = path.join(cache, "apt");
  for (const dir of ["sources.list.d", "lists/partial", "cache/archives/partial"]) {
    fs.mkdirSync(path.join(apt, dir), { recursive: true });
  }
  if (!fs.existsSync(debianKeyring)) {
    throw new ImageError(
      `${debianKeyring} is missing: install it with sudo apt-get install -y debian-archive-keyring`,
    );
  }
  const sources = debianSources.map((s) => `deb [signed-by=${debianKeyring}] ${s}\n`).join("");
  fs.writeFileSync(path.join(apt, "sources.list"), sources);
}

const debName = (name: string, version: string, arch: string) =>
  `${name}_${version.replace(":", "%3a")}_${arch}.deb`;

/** Downloads the pinned packages for both architectures into `<cache>/debs` (once). */
export function downloadDebs(cache: string, arches: readonly Arch[]): Map<string, string> {
  const dir = path.join(cache, "debs");
  fs.mkdirSync(dir, { recursive: true });
  const wanted = new Map<string, { spec: string; file: string }>();
  for (const arch of arches) {
    for (const [name, version] of Object.entries(debianPackages)) {
      const debArch = name === "tzdata" ? "all" : arch;
      wanted.set(`${name}:${arch}`, {
        spec: debArch === "all" ? `${name}=${version}` : `${name}:${arch}=${version}`,
        file: path.join(dir, debName(name, version, debArch)),
      });
    }
  }
  const missing = [...wanted.values()].filter((w) => !fs.existsSync(w.file));
  if (missing.length > 0) {
    prepareApt(cache);
    const specs = [...new Set(missing.map((w) => w.spec))];
    progress(`downloading ${specs.length} Debian packages (${specs.join(" ")})`);
    const download = () => run("apt-get", [...aptOptions(cache), "download", ...specs], { cwd: dir });
    try {
      download();
    } catch {
      progress("updating the private package lists (Debian bookworm)");
      run("apt-get", [...aptOptions(cache), "update"]);
      try {
        download();
      } catch (error) {
        throw new ImageError(
          `${(error as Error).message}\nA pinned Debian version may have been replaced on the mirror: update scripts/image/pins.ts to the versions \`apt-cache policy ${Object.keys(debianPackages).join(" ")}\` shows.`,
        );
      }
    }
  }
  return new Map([...wanted].map(([key, w]) => [key, w.file]));
}

/** `npm pack`s Node's binary package for `arch` into `<cache>/node` (once) and checks its integrity. */
function nodePackage(cache: string, arch: Arch): string {
  const dir = path.join(cache, "node");
  fs.mkdirSync(dir, { recursive: true });
  const name = archInfo[arch].nodePackage;
  const file = path.join(dir, `${name}-${node.version}.tgz`);
  if (!fs.existsSync(file)) {
    progress(`fetching ${name}@${node.version} from the npm registry`);
    run("npm", ["pack", `${name}@${node.version}`, "--pack-destination", dir, "--silent"]);
  }
  const digest = `sha512-${createHash("sha512").update(fs.readFileSync(file)).digest("base64")}`;
  if (digest !== node.integrity[arch]) {
    fs.rmSync(file);
    throw new ImageError(
      `${name}@${node.version}: integrity ${digest} is not the pinned ${node.integrity[arch]}`,
    );
  }
  return file;
}

const etcFiles: Record<string, string> = {
  "etc/passwd": "root:x:0:0:root:/root:/sbin/nologin\nsdk:x:1000:1000:sdk:/data:/sbin/nologin\n",
  "etc/group": "root:x:0:\nsdk:x:1000:\n",
  "etc/nsswitch.conf": "passwd: files\ngroup: files\nhosts: files dns\n",
  "etc/hosts": "127.0.0.1 localhost\n::1 localhost\n",
};

/** Unpacks the root file system of `arch` into `dir` (which must not exist). */
export function buildRootfs(dir: string, arch: Arch, debs: Map<string, string>, cache: string): void {
  fs.mkdirSync(dir, { recursive: true });
  for (const name of Object.keys(debianPackages)) {
    run("dpkg-deb", ["-x", debs.get(`${name}:${arch}`)!, dir]);
  }
  for (const drop of [
    "usr/share/doc",
    "usr/share/man",
    "usr/share/info",
    "usr/share/lintian",
    "usr/share/locale",
    "usr/share/gcc",
    "usr/share/gdb",
  ]) {
    fs.rmSync(path.join(dir, drop), { recursive: true, force: true });
  }
  for (const libDir of fs.globSync("usr/lib/*-linux-gnu/gconv", { cwd: dir })) {
    fs.rmSync(path.join(dir, libDir), { recursive: true, force: true });
  }
  const bin = path.join(dir, "usr/local/bin");
  fs.mkdirSync(bin, { recursive: true });
  run("tar", ["-xzf", nodePackage(cache, arch), "-C", bin, "--strip-components=2", "package/bin/node"]);
  run(archInfo[arch].strip, ["--strip-unneeded", path.join(bin, "node")]);
  for (const [file, text] of Object.entries(etcFiles)) {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), text, { mode: 0o644 });
  }
  fs.mkdirSync(path.join(dir, "tmp"), { recursive: true });
  fs.chmodSync(path.join(dir, "tmp"), 0o1777);
}
