import type { Board } from "@sdk/protocol";

/** Timing a device under test is asked to use so that the suite runs in seconds, not minutes. */
export interface DeviceTiming {
  /** The first reconnect delay's ceiling (the protocol's `base`, 250 ms in production). */
  backoffBaseMs: number;
  /** The largest reconnect delay (the protocol's `cap`, 30 s in production). */
  backoffCapMs: number;
}

/** What the factory is given to start one device. */
export interface DeviceFactoryInput {
  /** The device socket URL, e.g. `ws://127.0.0.1:41234/v1/device`. */
  url: string;
  deviceId: string;
  secret: string;
  board: Board;
  timing: DeviceTiming;
}

export type PinLevel = 0 | 1;
export type Rgb = [number, number, number];

/** What a pin drives, as an observer at the header would see it. */
export interface PinReading {
  level: PinLevel;
  /** Set while the pin outputs PWM. */
  pwm: { frequency: number; duty: number } | null;
}

/**
 * A running device under test, with the few hooks the suite needs to stimulate and inspect its
 * hardware. Every hook maps to one line of the control protocol (README.md).
 */
export interface DeviceUnderTest {
  /** Closes the connection (1000) and stops the device for good. */
  stop(): Promise<void>;
  /** Drives an input pin from outside, as a button or sensor would. */
  setInput(pin: number, level: PinLevel): Promise<void>;
  /** Bytes arrive on a UART's RX line. */
  receiveUart(uart: 0 | 1, bytes: number[]): Promise<void>;
  /** What an output pin (or the onboard `LED`) drives. */
  readPin(pin: number | "LED"): Promise<PinReading>;
  /** The pixels last written to a WS2812 strip on `pin` (empty if none). */
  readPixels(pin: number): Promise<Rgb[]>;
  /**
   * Attaches an I2C target at `address` on `bus`: it acknowledges every write and answers a read
   * of n bytes with the first n of `bytes` (zeros past its end).
   */
  attachI2c(bus: 0 | 1, address: number, bytes: number[]): Promise<void>;
}

/** Starts one device that connects to `input.url` by itself and keeps reconnecting as the protocol says. */
export type DeviceFactory = (input: DeviceFactoryInput) => Promise<DeviceUnderTest>;
