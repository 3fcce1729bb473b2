/**
 * Preloaded (`node --expose-gc --import probe.ts server.ts`) into each server under test. On the
 * IPC channel it answers `{type:"memory", gc}` with heap figures and `{type:"loop"}` with the event
 * loop's cumulative busy and idle time. It adds nothing else to the server.
 *
 * Worker threads inherit the preload: in each of them it only listens on a BroadcastChannel, so the
 * memory answer also gives the worker threads' heaps (each collected first when `gc` is asked).
 */
import diagnostics from "node:diagnostics_channel";
import v8 from "node:v8";
import { BroadcastChannel, isMainThread, threadId, type Worker } from "node:worker_threads";

export interface HeapReport {
  type: "memory";
  rssBytes: number;
  heapUsedBytes: number;
  heapTotalBytes: number;
  externalBytes: number;
  arrayBuffersBytes: number;
  /** The worker threads' V8 heaps together (0 without worker threads). */
  workerHeapUsedBytes: number;
  workerHeapTotalBytes: number;
  /** The worker threads' external memory (ArrayBuffers, WebAssembly memories) together. */
  workerExternalBytes: number;
  workers: number;
  /** The main thread's heap by space: committed (size) and used bytes. */
  spaces: Record<string, { sizeBytes: number; usedBytes: number }>;
}

/** Cumulative ms the event loop spent running callbacks (active) and waiting for events (idle). */
export interface LoopReport {
  type: "loop";
  activeMs: number;
  idleMs: number;
}

interface WorkerHeap {
  threadId: number;
  heapUsedBytes: number;
  heapTotalBytes: number;
  externalBytes: number;
}

const channelName = "bench-probe";
const collect = (globalThis as { gc?: () => void }).gc;

if (!isMainThread) {
  const channel = new BroadcastChannel(channelName);
  channel.unref();
  channel.onmessage = (event) => {
    const ask = (event as MessageEvent).data as { gc?: boolean; ask?: true };
    if (ask.ask !== true) return;
    if (ask.gc && collect) collect();
    const m = process.memoryUsage();
    channel.postMessage({
      threadId,
      heapUsedBytes: m.heapUsed,
      heapTotalBytes: m.heapTotal,
      externalBytes: m.external,
    } satisfies WorkerHeap);
  };
} else if (process.send) {
  const workers = new Set<Worker>();
  diagnostics.subscribe("worker_threads", (message) => {
    const worker = (message as { worker: Worker }).worker;
    workers.add(worker);
    worker.once("exit", () => workers.delete(worker));
  });

  /** Asks every worker thread for its heap, waiting at most 2 s for the answers. */
  const workerHeaps = (gc: boolean): Promise<WorkerHeap[]> => {
    const expected = workers.size;
    if (expected === 0) return Promise.resolve([]);
    const channel = new BroadcastChannel(channelName);
    const answers = new Map<number, WorkerHeap>();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        channel.close();
        resolve([...answers.values()]);
      };
      const timer = setTimeout(done, 2_000);
      channel.onmessage = (event) => {
        const heap = (event as MessageEvent).data as WorkerHeap;
        answers.set(heap.threadId, heap);
        if (answers.size >= expected) done();
      };
      channel.postMessage({ ask: true, gc });
    });
  };

  const memory = async (gc: boolean): Promise<HeapReport> => {
    const heaps = await workerHeaps(gc);
    if (gc && collect) collect();
    const m = process.memoryUsage();
    return {
      type: "memory",
      rssBytes: m.rss,
      heapUsedBytes: m.heapUsed,
      heapTotalBytes: m.heapTotal,
      externalBytes: m.external,
      arrayBuffersBytes: m.arrayBuffers,
      workerHeapUsedBytes: heaps.reduce((sum, h) => sum + h.heapUsedBytes, 0),
      workerHeapTotalBytes: heaps.reduce((sum, h) => sum + h.heapTotalBytes, 0),
      workerExternalBytes: heaps.reduce((sum, h) => sum + h.externalBytes, 0),
      workers: heaps.length,
      spaces: Object.fromEntries(
        v8
          .getHeapSpaceStatistics()
          .map((s) => [s.space_name, { sizeBytes: s.space_size, usedBytes: s.space_used_size }]),
      ),
    };
  };

  process.on("message", (message: { type?: unknown; gc?: unknown }) => {
    if (message.type === "memory") void memory(message.gc === true).then((report) => process.send?.(report));
    if (message.type === "snapshot" && typeof (message as { path?: unknown }).path === "string") {
      const file = v8.writeHeapSnapshot((message as { path: string }).path);
      process.send?.({ type: "snapshot", file });
    }
    if (message.type === "loop") {
      const { active, idle } = performance.eventLoopUtilization();
      process.send?.({ type: "loop", activeMs: active, idleMs: idle } satisfies LoopReport);
    }
  });
  // The channel must not keep a server alive once it wants to exit.
  process.channel?.unref();
}
