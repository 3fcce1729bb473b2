import { type Board, boards } from "@sdk/protocol";
import { Adc } from "./adc.ts";
import { Gpio, type Level } from "./gpio.ts";
import { I2cBus, type I2cConfig } from "./i2c.ts";
import { SpiBus, type SpiConfig } from "./spi.ts";
import { Uart, type UartConfig } from "./uart.ts";
import { Ws2812 } from "./ws2812.ts";

/** Messages the hardware makes the device send on its own. */
export type HardwareEvent =
  | { type: "gpio_change"; pin: number; value: Level }
  | { type: "uart_rx"; uart: 0 | 1; data: number[] };

export interface HardwareOptions {
  now: () => number;
  historyLimit: number;
  send: (event: HardwareEvent) => void;
}

/** Everything on the virtual board. */
export class Hardware {
  readonly board: Board;
  readonly gpio: Gpio;
  readonly adc: Adc;
  readonly i2c: readonly [I2cBus, I2cBus];
  readonly spi: readonly [SpiBus, SpiBus];
  readonly uart: readonly [Uart, Uart];
  readonly ws2812 = new Ws2812();
  readonly now: () => number;

  constructor(board: Board, options: HardwareOptions) {
    const info = boards[board];
    this.board = board;
    this.now = options.now;
    this.gpio = new Gpio(info.gpios, {
      now: options.now,
      historyLimit: options.historyLimit,
      onWatchedChange: (pin, value) => options.send({ type: "gpio_change", pin, value }),
    });
    this.adc = new Adc(info.adcPins);
    this.i2c = [new I2cBus(0), new I2cBus(1)];
    this.spi = [new SpiBus(0), new SpiBus(1)];
    const onReceive = (uart: 0 | 1, data: number[]) => options.send({ type: "uart_rx", uart, data });
    this.uart = [new Uart(0, onReceive), new Uart(1, onReceive)];
  }

  configureI2c(bus: 0 | 1, config: I2cConfig): void {
    this.gpio.setFunction(config.sda, "i2c");
    this.gpio.setFunction(config.scl, "i2c");
    this.i2c[bus].config = { ...config };
  }

  configureSpi(bus: 0 | 1, config: SpiConfig): void {
    for (const pin of [config.sck, config.tx, config.rx]) this.gpio.setFunction(pin, "spi");
    this.spi[bus].config = { ...config };
  }

  configureUart(uart: 0 | 1, config: UartConfig): void {
    this.gpio.setFunction(config.tx, "uart");
    this.gpio.setFunction(config.rx, "uart");
    this.uart[uart].config = { ...config };
  }

  dispose(): void {
    this.gpio.dispose();
  }
}
