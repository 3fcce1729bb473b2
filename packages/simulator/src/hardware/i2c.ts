import { CommandError } from "../errors.ts";
import { Eeprom, type I2cDevice, Tmp102 } from "./i2c-devices.ts";

export interface I2cConfig {
  sda: number;
  scl: number;
  frequency: number;
}

const hex = (address: number) => `0x${address.toString(16).padStart(2, "0")}`;

/** One I2C controller with the chips wired to it. By default: a TMP102 at 0x48, an EEPROM at 0x50. */
export class I2cBus {
  readonly index: 0 | 1;
  config: I2cConfig | null = null;
  readonly #devices = new Map<number, I2cDevice>();

  constructor(index: 0 | 1) {
    this.index = index;
    this.attach(0x48, new Tmp102());
    this.attach(0x50, new Eeprom());
  }

  attach(address: number, device: I2cDevice): void {
    this.#devices.set(address, device);
  }

  detach(address: number): void {
    this.#devices.delete(address);
  }

  device(address: number): I2cDevice | undefined {
    return this.#devices.get(address);
  }

  /** Addresses that acknowledge, ascending. */
  addresses(): number[] {
    return [...this.#devices.keys()].sort((a, b) => a - b);
  }

  scan(): number[] {
    this.#requireConfigured();
    return this.addresses();
  }

  write(address: number, data: readonly number[]): void {
    this.#target(address).write(data);
  }

  read(address: number, length: number, register?: number): number[] {
    return this.#target(address).read(length, register);
  }

  #requireConfigured(): void {
    if (!this.config) {
      throw new CommandError(
        "invalid_argument",
        `I2C bus ${this.index} is not configured; send i2c_configure first`,
      );
    }
  }

  #target(address: number): I2cDevice {
    this.#requireConfigured();
    const device = this.#devices.get(address);
    if (!device) {
      throw new CommandError(
        "io_error",
        `no device acknowledged address ${hex(address)} on I2C bus ${this.index} (NACK)`,
      );
    }
    return device;
  }
}
