/** A `--name` flag that must be a whole number ≥ 1; `usage` is appended to the error. */
export function positive(name: string, raw: string | undefined, fallback: number, usage: string): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1)
    throw new Error(`--${name} must be a whole number ≥ 1\n${usage}`);
  return value;
}
