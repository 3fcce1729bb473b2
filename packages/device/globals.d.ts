// Globals a device script can use inside the sandbox. There is no DOM and no Node: only these,
// plus the standard JavaScript built-ins. The build type-checks scripts against this file.

declare function setTimeout(
  callback: (...args: never[]) => unknown,
  delayMs?: number,
  ...args: unknown[]
): number;
declare function setInterval(
  callback: (...args: never[]) => unknown,
  delayMs?: number,
  ...args: unknown[]
): number;
declare function clearTimeout(id: number | undefined): void;
declare function clearInterval(id: number | undefined): void;

/** Lines go to the device's logs (visible with `sdk logs`, the dashboard and the watch socket). */
declare var console: {
  log(...args: unknown[]): void;
  info(...args: unknown[]): void;
  debug(...args: unknown[]): void;
  warn(...args: unknown[]): void;
  error(...args: unknown[]): void;
};
