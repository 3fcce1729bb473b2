import { onboardLed } from "@sdk/protocol";
import { CommandError } from "../errors.ts";

export type Level = 0 | 1;
export type PinId = number | typeof onboardLed;
export type Pull = "up" | "down" | "none";
export type Edge = "rising" | "falling" | "both";
export type PinFunction = "gpio" | "pwm" | "i2c" | "spi" | "uart" | "ws2812";

/** A level change of a pin, with the time it happened (ms, from the device's clock). */
export interface Transition {
  value: Level;
  at: number;
}

/** A snapshot of one pin. */
export interface PinState {
  pin: PinId;
  /** What the pin is used for; null until a command touched it. */
  function: PinFunction | null;
  mode: "input" | "output" | null;
  pull: Pull;
  /** The output latch (what an output drives). */
  output: Level;
  /** The level something outside drives onto the pin (`setInput`), or null when nothing does. */
  driven: Level | null;
  /** What `gpio_read` answers: the output latch for outputs, else the driven level or the pull. */
  level: Level;
  pwm: { frequency: number; duty: number } | null;
  watch: { edge: Edge; debounceMs: number } | null;
}

interface Watch {
  edge: Edge;
  debounceMs: number;
  /** The last level reported (or the level when the watch started). */
  stable: Level;
  timer?: NodeJS.Timeout;
}

interface PinRecord {
  function: PinFunction | null;
  mode: "input" | "output" | null;
  pull: Pull;
  output: Level;
  driven: Level | null;
  pwm: { frequency: number; duty: number } | null;
  watch: Watch | null;
  history: Transition[];
}

export interface GpioOptions {
  now: () => number;
  /** Transitions kept per pin (oldest dropped first). */
  historyLimit: number;
  /** A watched pin changed on a matching edge: the device sends `gpio_change`. */
  onWatchedChange: (pin: number, value: Level) => void;
}

/** The GPIO block: modes, pulls, outputs, external inputs, PWM, watches, and the onboard LED. */
export class Gpio {
  readonly #pins = new Map<number, PinRecord>();
  readonly #options: GpioOptions;
  #led: Level = 0;
  readonly #ledHistory: Transition[] = [];
  /** Buttons being held (press): the timers that let go. */
  readonly #releases = new Map<number, { timer: NodeJS.Timeout; resolve: () => void }>();

  constructor(gpios: readonly number[], options: GpioOptions) {
    this.#options = options;
    for (const pin of gpios) {
      this.#pins.set(pin, {
        function: null,
        mode: null,
        pull: "none",
        output: 0,
        driven: null,
        pwm: null,
        watch: null,
        history: [],
      });
    }
  }

  get led(): Level {
    return this.#led;
  }

  setMode(pin: PinId, mode: "input" | "output", pull: Pull = "none"): void {
    if (pin === onboardLed) {
      if (mode !== "output") throw new CommandError("unsupported", "the onboard LED is an output only");
      return;
    }
    this.#change(pin, (r) => {
      r.function = "gpio";
      r.pwm = null;
      r.mode = mode;
      r.pull = pull;
    });
  }

  /** Drives the pin; a pin that is not yet an output becomes one. */
  write(pin: PinId, value: Level): void {
    if (pin === onboardLed) {
      this.#setLed(value);
      return;
    }
    this.#change(pin, (r) => {
      if (r.function !== "gpio" || r.mode !== "output") {
        r.function = "gpio";
        r.pwm = null;
        r.mode = "output";
      }
      r.output = value;
    });
  }

  read(pin: PinId): Level {
    if (pin === onboardLed) return this.#led;
    return level(this.#record(pin));
  }

  toggle(pin: PinId): Level {
    const value: Level = this.read(pin) === 1 ? 0 : 1;
    this.write(pin, value);
    return value;
  }

  watch(pin: number, edge: Edge, debounceMs: number): void {
    const r = this.#record(pin);
    if (r.watch?.timer) clearTimeout(r.watch.timer);
    if (r.mode === null) {
      r.function = "gpio";
      r.mode = "input";
    }
    r.watch = { edge, debounceMs, stable: level(r) };
  }

  unwatch(pin: number): void {
    const r = this.#record(pin);
    if (r.watch?.timer) clearTimeout(r.watch.timer);
    r.watch = null;
  }

  setPwm(pin: number, frequency: number, duty: number): void {
    this.#change(pin, (r) => {
      r.function = "pwm";
      r.mode = "output";
      r.pwm = { frequency, duty };
    });
  }

  /** Hands the pin to a peripheral (I2C, SPI, UART, WS2812). */
  setFunction(pin: number, fn: PinFunction): void {
    this.#change(pin, (r) => {
      r.function = fn;
      if (fn !== "pwm") r.pwm = null;
      if (fn !== "gpio") r.mode = null;
    });
  }

  /** Something outside drives the pin (a button, a sensor); null lets it float to its pull. */
  drive(pin: number, value: Level | null): void {
    this.#change(pin, (r) => {
      r.driven = value;
    });
  }

  /**
   * A push button between the pin and the rail opposite its pull (to ground under a pull-up):
   * drives that level, and lets go after `holdMs` (a new press of a held button holds it longer).
   * Resolves once let go.
   */
  press(pin: number, holdMs: number): Promise<void> {
    const pressed: Level = this.#record(pin).pull === "up" ? 0 : 1;
    const held = this.#releases.get(pin);
    if (held) clearTimeout(held.timer);
    this.drive(pin, pressed);
    return new Promise((resolve) => {
      const done = () => {
        held?.resolve();
        resolve();
      };
      const timer = setTimeout(() => {
        this.#releases.delete(pin);
        this.drive(pin, null);
        done();
      }, holdMs);
      timer.unref();
      this.#releases.set(pin, { timer, resolve: done });
    });
  }

  state(pin: PinId): PinState {
    if (pin === onboardLed) {
      return {
        pin,
        function: "gpio",
        mode: "output",
        pull: "none",
        output: this.#led,
        driven: null,
        level: this.#led,
        pwm: null,
        watch: null,
      };
    }
    const r = this.#record(pin);
    return {
      pin,
      function: r.function,
      mode: r.mode,
      pull: r.pull,
      output: r.output,
      driven: r.driven,
      level: level(r),
      pwm: r.pwm && { ...r.pwm },
      watch: r.watch && { edge: r.watch.edge, debounceMs: r.watch.debounceMs },
    };
  }

  /** The level transitions of a pin (for `LED`: every change of the onboard LED). */
  history(pin: PinId): Transition[] {
    return [...(pin === onboardLed ? this.#ledHistory : this.#record(pin).history)];
  }

  /** Stops debounce timers. */
  dispose(): void {
    for (const held of this.#releases.values()) {
      clearTimeout(held.timer);
      held.resolve();
    }
    for (const r of this.#pins.values()) if (r.watch?.timer) clearTimeout(r.watch.timer);
  }

  #record(pin: number): PinRecord {
    const r = this.#pins.get(pin);
    if (!r) throw new CommandError("invalid_argument", `GP${pin} is not available on this board`);
    return r;
  }

  #setLed(value: Level): void {
    if (value === this.#led) return;
    this.#led = value;
    this.#push(this.#ledHistory, value);
  }

  #push(history: Transition[], value: Level): void {
    history.push({ value, at: this.#options.now() });
    if (history.length > this.#options.historyLimit)
      history.splice(0, history.length - this.#options.historyLimit);
  }

  #change(pin: number, mutate: (r: PinRecord) => void): void {
    const r = this.#record(pin);
    const before = level(r);
    mutate(r);
    const after = level(r);
    if (after === before) return;
    this.#push(r.history, after);
    const watch = r.watch;
    if (!watch) return;
    if (watch.debounceMs === 0) {
      this.#settle(pin, watch, after);
      return;
    }
    // Debounced: report once the level has stayed put for debounceMs.
    if (watch.timer) clearTimeout(watch.timer);
    watch.timer = setTimeout(() => {
      watch.timer = undefined;
      if (r.watch === watch) this.#settle(pin, watch, level(r));
    }, watch.debounceMs);
    watch.timer.unref();
  }

  #settle(pin: number, watch: Watch, value: Level): void {
    if (value === watch.stable) return;
    watch.stable = value;
    if (watch.edge === "both" || (watch.edge === "rising") === (value === 1)) {
      this.#options.onWatchedChange(pin, value);
    }
  }
}

function level(r: PinRecord): Level {
  if (r.function === "gpio" && r.mode === "output") return r.output;
  if (r.function === "pwm" && r.pwm) return r.pwm.duty >= 1 ? 1 : r.pwm.duty <= 0 ? 0 : r.output;
  if (r.driven !== null) return r.driven;
  return r.pull === "up" ? 1 : 0;
}
