import { adc } from "@sdk/protocol";

/** The ADC on GP26–28 (12-bit over 0–3.3 V) and the chip's temperature sensor. */
export class Adc {
  readonly #volts = new Map<number, number>();
  /** What `temperature_read` answers, °C. */
  temperature = 21.5;

  constructor(pins: readonly number[]) {
    for (const pin of pins) this.#volts.set(pin, 0);
  }

  /** Sets the voltage on an ADC pin, clamped to 0–3.3 V. */
  setVoltage(pin: number, volts: number): void {
    if (!this.#volts.has(pin)) throw new RangeError(`GP${pin} is not an ADC pin (GP26–GP28)`);
    if (!Number.isFinite(volts)) throw new RangeError(`voltage must be a finite number, got ${volts}`);
    this.#volts.set(pin, Math.min(adc.maxVolts, Math.max(0, volts)));
  }

  voltage(pin: number): number {
    const volts = this.#volts.get(pin);
    if (volts === undefined) throw new RangeError(`GP${pin} is not an ADC pin (GP26–GP28)`);
    return volts;
  }

  /** A sample as the firmware reports it: the raw 12-bit value, and volts computed back from it. */
  read(pin: number): { volts: number; raw: number } {
    const raw = Math.round((this.voltage(pin) / adc.maxVolts) * adc.maxRaw);
    const volts = Math.min(adc.maxVolts, Math.round(((raw * adc.maxVolts) / adc.maxRaw) * 10_000) / 10_000);
    return { volts, raw };
  }
}
