import { originalPositionFor, TraceMap } from "@jridgewell/trace-mapping";

/** Rewrites `script.js:LINE:COL` positions in a stack to the TypeScript sources of the bundle. */
export class SourceMapper {
  readonly #map: TraceMap | null;

  constructor(sourceMap: string | undefined) {
    let map: TraceMap | null = null;
    if (sourceMap) {
      try {
        map = new TraceMap(sourceMap);
      } catch {
        map = null; // a broken map only costs readable stacks
      }
    }
    this.#map = map;
  }

  /** Maps positions, and drops the frames inside the @sdk/device library (they say nothing to the user). */
  mapStack(stack: string): string {
    const map = this.#map;
    if (!map) return stack;
    const mapped = stack.replace(/script\.js:(\d+)(?::(\d+))?/g, (whole, line: string, column?: string) => {
      const pos = originalPositionFor(map, { line: Number(line), column: column ? Number(column) - 1 : 0 });
      if (!pos.source || pos.line === null) return whole;
      const source = pos.source.replace(/^(\.\.\/)+/, "").replace(/^(\.\/)+/, "");
      return `${source}:${pos.line}:${(pos.column ?? 0) + 1}`;
    });
    return mapped
      .split("\n")
      .filter((line) => !/^\s+at .*(packages\/device\/src\/|@sdk\/device\/)/.test(line))
      .join("\n")
      .trimEnd();
  }
}
