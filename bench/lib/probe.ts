/**
 * Preloaded (`node --expose-gc --import probe.ts server.ts`) into each server under test. On the
 * IPC channel it answers `{type:"memory", gc}` with heap figures and `{type:"loop"}` with the event
 * loop's cumulative busy and idle time. It adds nothing else to the server.
 */

export interface HeapReport {
  type: "memory";
  rssBytes: number;
  heapUsedBytes: number;
  heapTotalBytes: number;
  externalBytes: number;
  arrayBuffersBytes: number;
}

/** Cumulative ms the event loop spent running callbacks (active) and waiting for events (idle). */
export interface LoopReport {
  type: "loop";
  activeMs: number;
  idleMs: number;
}

function memory(gc: boolean): HeapReport {
  const collect = (globalThis as { gc?: () => void }).gc;
  if (gc && collect) collect();
  const m = process.memoryUsage();
  return {
    type: "memory",
    rssBytes: m.rss,
    heapUsedBytes: m.heapUsed,
    heapTotalBytes: m.heapTotal,
    externalBytes: m.external,
    arrayBuffersBytes: m.arrayBuffers,
  };
}

if (process.send) {
  process.on("message", (message: { type?: unknown; gc?: unknown }) => {
    if (message.type === "memory") process.send?.(memory(message.gc === true));
    if (message.type === "loop") {
      const { active, idle } = performance.eventLoopUtilization();
      process.send?.({ type: "loop", activeMs: active, idleMs: idle } satisfies LoopReport);
    }
  });
  // The channel must not keep a server alive once it wants to exit.
  process.channel?.unref();
}
