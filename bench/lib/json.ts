import fs from "node:fs";
import path from "node:path";
import { repoRoot } from "./child.ts";

const lineWidth = 110;

/**
 * JSON laid out as the repository's formatter (Biome) lays it out, so written results pass
 * `npm run lint`: objects one member per line, arrays of plain values on one line when they fit.
 */
function toJson(value: unknown, indent = "", prefixWidth = 0): string {
  const inner = `${indent}  `;
  if (Array.isArray(value)) {
    if (value.length === 0) return "[]";
    if (value.every((v) => v === null || typeof v !== "object")) {
      const flat = `[${value.map((v) => JSON.stringify(v)).join(", ")}]`;
      if (prefixWidth + flat.length + 1 <= lineWidth) return flat;
    }
    return `[\n${value.map((v) => inner + toJson(v, inner, inner.length)).join(",\n")}\n${indent}]`;
  }
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined);
    if (entries.length === 0) return "{}";
    const members = entries.map(([k, v]) => {
      const key = `${inner}${JSON.stringify(k)}: `;
      return key + toJson(v, inner, key.length);
    });
    return `{\n${members.join(",\n")}\n${indent}}`;
  }
  return JSON.stringify(value);
}

/** bench/results/<name>.json, or <name>-2.json, -3… when that file already exists. */
export function resultsFile(name: string): string {
  const base = path.join(repoRoot, "bench", "results", name);
  for (let i = 1; ; i++) {
    const file = i === 1 ? `${base}.json` : `${base}-${i}.json`;
    if (!fs.existsSync(file)) return file;
  }
}

/** Writes `record` as formatted JSON, creating bench/results/ if needed. */
export function writeResults(file: string, record: unknown): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${toJson(record)}\n`);
}
