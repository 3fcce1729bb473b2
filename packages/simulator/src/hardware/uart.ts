import { CommandError } from "../errors.ts";

export interface UartConfig {
  tx: number;
  rx: number;
  baud: number;
  dataBits: 5 | 6 | 7 | 8;
  parity: "none" | "even" | "odd";
  stopBits: 1 | 2;
}

/** Bytes per `uart_rx` message, so every frame stays far below the 64 KB limit. */
const uartChunkBytes = 4096;

/** One UART. By default TX is looped back to RX: what is written arrives as `uart_rx`. */
export class Uart {
  readonly index: 0 | 1;
  config: UartConfig | null = null;
  loopback = true;
  /** Every byte written by `uart_write`, oldest first (up to 64 KiB kept). */
  readonly written: number[] = [];
  readonly #onReceive: (uart: 0 | 1, data: number[]) => void;

  constructor(index: 0 | 1, onReceive: (uart: 0 | 1, data: number[]) => void) {
    this.index = index;
    this.#onReceive = onReceive;
  }

  write(data: readonly number[]): void {
    this.#requireConfigured();
    this.written.push(...data);
    if (this.written.length > 65_536) this.written.splice(0, this.written.length - 65_536);
    if (this.loopback && data.length > 0) this.receive(data);
  }

  /** Bytes arrive on RX: the device reports them as `uart_rx` messages. */
  receive(data: readonly number[]): void {
    this.#requireConfigured();
    for (const byte of data) {
      if (!Number.isInteger(byte) || byte < 0 || byte > 255) throw new RangeError(`not a byte: ${byte}`);
    }
    for (let i = 0; i < data.length; i += uartChunkBytes) {
      this.#onReceive(this.index, data.slice(i, i + uartChunkBytes));
    }
  }

  #requireConfigured(): void {
    if (!this.config) {
      throw new CommandError(
        "invalid_argument",
        `UART ${this.index} is not configured; send uart_configure first`,
      );
    }
  }
}
