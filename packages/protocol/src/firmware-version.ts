// Firmware release versions: semantic versions, compared by semver precedence.

/** `1.2.3`, `1.2.3-rc.1`, `1.2.3+build.5` (semver 2.0.0); at most 64 characters. */
export const firmwareVersionPattern =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$/;

export function isFirmwareVersion(value: string): boolean {
  return value.length <= 64 && firmwareVersionPattern.test(value);
}

function comparePrerelease(a: string | undefined, b: string | undefined): number {
  if (a === b) return 0;
  if (a === undefined) return 1; // a release is newer than its pre-releases
  if (b === undefined) return -1;
  const x = a.split(".");
  const y = b.split(".");
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const [p, q] = [x[i]!, y[i]!];
    if (p === q) continue;
    const [pn, qn] = [/^\d+$/.test(p), /^\d+$/.test(q)];
    if (pn && qn) return Number(p) < Number(q) ? -1 : 1;
    if (pn !== qn) return pn ? -1 : 1; // numeric identifiers sort before alphanumeric ones
    return p < q ? -1 : 1;
  }
  return Math.sign(x.length - y.length);
}

/**
 * Semver precedence: negative when `a` is older than `b`, 0 when equal (build metadata is
 * ignored), positive when newer; `null` when either is not a version.
 */
export function compareFirmwareVersions(a: string, b: string): number | null {
  const x = firmwareVersionPattern.exec(a);
  const y = firmwareVersionPattern.exec(b);
  if (!x || !y) return null;
  for (let i = 1; i <= 3; i++) {
    const d = Number(x[i]) - Number(y[i]);
    if (d !== 0) return Math.sign(d);
  }
  return comparePrerelease(x[4], y[4]);
}
