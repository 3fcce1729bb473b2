import type { SimulatedDevice } from "./device.ts";

export const controlHelp = `Commands (one a line):
  press <pin> [ms]   press a button on the pin (to ground under a pull-up) for ms (default 150)
  set <pin> 0|1      drive the pin low or high from outside
  release <pin>      stop driving it (its pull decides)
  help               this text
A pin is 15 or GP15.`;

/** The key that presses the scaffolded project's button (GP15, the `sdk init` template). */
export const buttonKey = { key: "b", pin: 15 };

function pinOf(word: string | undefined): number {
  const match = /^(?:gp)?(\d{1,2})$/i.exec(word ?? "");
  if (!match)
    throw new RangeError(`which pin? give a GPIO number like 15 or GP15, got ${JSON.stringify(word ?? "")}`);
  return Number(match[1]);
}

/** Whether the script will hear about it: a watch on the pin sends gpio_change. */
function watching(devices: readonly SimulatedDevice[], pin: number): string {
  const watch = devices[0]?.pin(pin).watch;
  return watch
    ? ` (watched: ${watch.edge} edges, ${watch.debounceMs} ms debounce)`
    : " (not watched: the script has not called watchPin on it)";
}

/**
 * Runs one control line (press, set, release, help) on every device given; returns what to print
 * now, and tells `later` what happens afterwards.
 * Throws a RangeError with a sentence for a line it cannot run.
 */
export function runControl(
  devices: readonly SimulatedDevice[],
  line: string,
  /** Told what happens later: a pressed button let go. */
  later: (text: string) => void = () => {},
): string {
  const [verb, a, b, ...rest] = line.trim().split(/\s+/);
  if (!verb) return "";
  const all = (what: (d: SimulatedDevice) => void) => {
    for (const device of devices) what(device);
  };
  switch (verb.toLowerCase()) {
    case "help":
    case "?":
      return controlHelp;
    case "press": {
      const pin = pinOf(a);
      const ms = b === undefined ? undefined : Number(b);
      if (ms !== undefined && !(Number.isInteger(ms) && ms >= 1 && ms <= 10_000))
        throw new RangeError(`press: the hold time is 1–10000 ms, got ${JSON.stringify(b)}`);
      void Promise.all(devices.map((d) => d.press(pin, ms))).then(() => later(`let go of GP${pin}`));
      return `pressed GP${pin}${ms === undefined ? "" : ` for ${ms} ms`}${watching(devices, pin)}`;
    }
    case "set": {
      const pin = pinOf(a);
      if ((b !== "0" && b !== "1") || rest.length)
        throw new RangeError("set: give a pin and 0 or 1, like: set 15 0");
      all((d) => d.setInput(pin, b === "1" ? 1 : 0));
      return `GP${pin} driven ${b === "1" ? "high" : "low"}${watching(devices, pin)}`;
    }
    case "release": {
      const pin = pinOf(a);
      all((d) => d.setInput(pin, null));
      return `GP${pin} released${watching(devices, pin)}`;
    }
    default:
      throw new RangeError(
        `unknown command ${JSON.stringify(verb)}; try: press 15, set 15 0, release 15, help`,
      );
  }
}
