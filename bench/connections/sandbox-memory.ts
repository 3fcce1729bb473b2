/**
 * What one script instance costs in a script worker (diagnosis): loads the counter script into one
 * project sandbox (as a script worker does, here in this process) and attaches N devices. Prints,
 * per device, the RSS, the V8 heap (the host side: the sandbox's per-device state) and the QuickJS
 * heap in use (the guest side: the instance, its DEVICE binding, its env), each after a full GC.
 *
 *   node --expose-gc bench/connections/sandbox-memory.ts [N=10000] [script.ts]
 */
import fs from "node:fs";
import { ProjectSandbox } from "@sdk/sandbox";
import { type QuickJSRuntime, QuickJSWASMModule } from "quickjs-emscripten-core";
import { buildScript, counterScript } from "../scripts/project.ts";

const n = Number(process.argv[2] ?? 10_000);
const script = await buildScript(process.argv[3] ? fs.readFileSync(process.argv[3], "utf8") : counterScript);
// The sandbox keeps its runtime private: note it as the module creates it.
let runtime: QuickJSRuntime | undefined;
const newRuntime = QuickJSWASMModule.prototype.newRuntime;
QuickJSWASMModule.prototype.newRuntime = function (this: QuickJSWASMModule, ...args) {
  runtime = newRuntime.apply(this, args);
  return runtime;
};
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error("run with node --expose-gc");
const rss = () => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync("/proc/self/status", "utf8"))?.[1]) * 1024;
const quickjsUsed = () =>
  Number(/memory used\s+\d+\s+(\d+)/i.exec(runtime?.dumpMemoryUsage() ?? "")?.[1] ?? 0);
const host = { command: async () => null, emitState() {}, send() {}, log() {}, failed() {} };
const sandbox = await ProjectSandbox.load({
  projectId: "bench",
  bundle: script.bundle,
  sourceMap: script.sourceMap,
  env: {},
  host,
});
const sample = () => {
  gc();
  return {
    rss: rss(),
    heap: process.memoryUsage().heapUsed,
    wasm: sandbox.memoryBytes,
    quickjs: quickjsUsed(),
  };
};
const before = sample();
const started = performance.now();
for (let i = 0; i < n; i++) sandbox.attach(`dev_${String(i).padStart(26, "0")}`, "pico_w");
const attachMs = Math.round(performance.now() - started);
const after = sample();
const per = (key: keyof typeof before) => Math.round((after[key] - before[key]) / n);
console.log(
  JSON.stringify({
    devices: n,
    attachMs,
    perDevice: { rss: per("rss"), v8Heap: per("heap"), quickjsUsed: per("quickjs"), wasmGrowth: per("wasm") },
    before,
    after,
  }),
);
