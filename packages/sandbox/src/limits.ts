export interface SandboxLimits {
  /** Deadline of every entry into the guest (a handler call, a timer, a command result). */
  timeoutMs: number;
  /** Deadline of evaluating the bundle at load. */
  loadTimeoutMs: number;
  /** The project's WebAssembly memory may not grow past this. */
  memoryBytes: number;
  maxTimersPerDevice: number;
  minTimerMs: number;
  /** Guest CPU milliseconds the project may use per second; 0 for no budget. */
  cpuBudgetMs: number;
}

export const defaultLimits: SandboxLimits = {
  timeoutMs: 100,
  loadTimeoutMs: 1000,
  memoryBytes: 64 * 1024 * 1024,
  maxTimersPerDevice: 64,
  minTimerMs: 10,
  cpuBudgetMs: 0,
};
