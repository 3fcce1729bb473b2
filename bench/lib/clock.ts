/** A wall clock with sub-millisecond resolution, comparable between processes. */
export function wallMs(): number {
  return performance.timeOrigin + performance.now();
}
