/** A virtual chip on an I2C bus. Throwing from a method makes the transfer fail (`io_error`). */
export interface I2cDevice {
  /** A write transaction: the bytes after the address. */
  write(data: readonly number[]): void;
  /** A read of `length` bytes; `register`, when given, is written first (repeated start). */
  read(length: number, register?: number): number[];
}

/**
 * A TMP102-like temperature sensor. Pointer register: 0 temperature (read-only, 12-bit two's
 * complement, left-justified, 0.0625 °C per LSB), 1 configuration, 2 T_LOW, 3 T_HIGH.
 */
export class Tmp102 implements I2cDevice {
  /** The temperature the sensor measures, °C. */
  celsius = 21.5;
  #pointer = 0;
  readonly #registers = [0, 0x60a0, 0x4b00, 0x5000];

  /** The temperature register as the chip encodes `celsius`. */
  static encode(celsius: number): [number, number] {
    const counts = Math.max(-2048, Math.min(2047, Math.round(celsius / 0.0625))) & 0xfff;
    return [counts >> 4, (counts & 0xf) << 4];
  }

  /** Decodes the two temperature bytes to °C. */
  static decode(msb: number, lsb: number): number {
    let counts = ((msb << 8) | lsb) >> 4;
    if (counts & 0x800) counts -= 0x1000;
    return counts * 0.0625;
  }

  write(data: readonly number[]): void {
    if (data.length === 0) return;
    this.#pointer = data[0]! & 0x03;
    if (data.length >= 3 && this.#pointer !== 0) this.#registers[this.#pointer] = (data[1]! << 8) | data[2]!;
  }

  read(length: number, register?: number): number[] {
    if (register !== undefined) this.#pointer = register & 0x03;
    const bytes =
      this.#pointer === 0
        ? Tmp102.encode(this.celsius)
        : [this.#registers[this.#pointer]! >> 8, this.#registers[this.#pointer]! & 0xff];
    return Array.from({ length }, (_, i) => bytes[i % 2]!);
  }
}

/**
 * A 256-byte EEPROM (24C02-like, without page wrap): a write is [address, ...bytes]; a read with
 * `register` starts there, without it continues from the internal address. Addresses wrap at 256.
 */
export class Eeprom implements I2cDevice {
  readonly memory = new Uint8Array(256).fill(0xff);
  #address = 0;

  write(data: readonly number[]): void {
    if (data.length === 0) return;
    this.#address = data[0]!;
    for (const byte of data.slice(1)) {
      this.memory[this.#address] = byte;
      this.#address = (this.#address + 1) & 0xff;
    }
  }

  read(length: number, register?: number): number[] {
    if (register !== undefined) this.#address = register;
    const out: number[] = [];
    for (let i = 0; i < length; i++) {
      out.push(this.memory[this.#address]!);
      this.#address = (this.#address + 1) & 0xff;
    }
    return out;
  }
}
