import { CommandError } from "../errors.ts";

export interface SpiConfig {
  sck: number;
  tx: number;
  rx: number;
  frequency: number;
  mode: 0 | 1 | 2 | 3;
}

/** One SPI controller. By default MISO is looped back to MOSI: a transfer returns what was sent. */
export class SpiBus {
  readonly index: 0 | 1;
  config: SpiConfig | null = null;
  /** What the far side answers to the bytes sent (same length). Default: loopback. */
  respond: (sent: number[]) => number[] = (sent) => [...sent];
  /** Every transfer, oldest first. */
  readonly transfers: { data: number[]; cs: number | null; at: number }[] = [];

  constructor(index: 0 | 1) {
    this.index = index;
  }

  transfer(data: number[], cs: number | null, at: number): number[] {
    if (!this.config) {
      throw new CommandError(
        "invalid_argument",
        `SPI bus ${this.index} is not configured; send spi_configure first`,
      );
    }
    this.transfers.push({ data: [...data], cs, at });
    if (this.transfers.length > 1000) this.transfers.shift();
    return this.respond([...data]).slice(0, data.length);
  }
}
