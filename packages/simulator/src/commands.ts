import {
  type Board,
  type CommandArgs,
  type CommandResult,
  type CommandType,
  commandSchemas,
} from "@sdk/protocol";
import { checkPins } from "./board.ts";
import { invalidArguments } from "./errors.ts";
import type { Hardware } from "./hardware/index.ts";

type Handler<T extends CommandType> = (args: CommandArgs<T>, hw: Hardware) => CommandResult<T>;

/** What each command does to the virtual hardware, and what it answers. */
const handlers: { [T in CommandType]: Handler<T> } = {
  pin_mode: ({ pin, mode, pull }, hw) => {
    hw.gpio.setMode(pin, mode, pull);
    return null;
  },
  gpio_write: ({ pin, value }, hw) => {
    hw.gpio.write(pin, value);
    return null;
  },
  gpio_read: ({ pin }, hw) => ({ value: hw.gpio.read(pin) }),
  gpio_toggle: ({ pin }, hw) => ({ value: hw.gpio.toggle(pin) }),
  gpio_watch: ({ pin, edge, debounceMs }, hw) => {
    hw.gpio.watch(pin, edge, debounceMs ?? 0);
    return null;
  },
  gpio_unwatch: ({ pin }, hw) => {
    hw.gpio.unwatch(pin);
    return null;
  },
  pwm: ({ pin, frequency, duty }, hw) => {
    hw.gpio.setPwm(pin, frequency, duty);
    return null;
  },
  adc_read: ({ pin }, hw) => hw.adc.read(pin),
  temperature_read: (_args, hw) => ({ celsius: hw.adc.temperature }),
  i2c_configure: ({ bus, sda, scl, frequency }, hw) => {
    hw.configureI2c(bus, { sda, scl, frequency });
    return null;
  },
  i2c_write: ({ bus, address, data }, hw) => {
    hw.i2c[bus].write(address, data);
    return null;
  },
  i2c_read: ({ bus, address, length, register }, hw) => ({
    data: hw.i2c[bus].read(address, length, register),
  }),
  i2c_scan: ({ bus }, hw) => ({ addresses: hw.i2c[bus].scan() }),
  spi_configure: ({ bus, sck, tx, rx, frequency, mode }, hw) => {
    hw.configureSpi(bus, { sck, tx, rx, frequency, mode: mode ?? 0 });
    return null;
  },
  spi_transfer: ({ bus, data, cs }, hw) => {
    if (cs !== undefined) hw.gpio.write(cs, 0);
    const received = hw.spi[bus].transfer(data, cs ?? null, hw.now());
    if (cs !== undefined) hw.gpio.write(cs, 1);
    return { data: received };
  },
  uart_configure: ({ uart, tx, rx, baud, dataBits, parity, stopBits }, hw) => {
    hw.configureUart(uart, {
      tx,
      rx,
      baud,
      dataBits: dataBits ?? 8,
      parity: parity ?? "none",
      stopBits: stopBits ?? 1,
    });
    return null;
  },
  uart_write: ({ uart, data }, hw) => {
    hw.uart[uart].write(data);
    return null;
  },
  ws2812_write: ({ pin, pixels }, hw) => {
    hw.gpio.setFunction(pin, "ws2812");
    hw.ws2812.write(pin, pixels);
    return null;
  },
};

export { isCommandType } from "@sdk/protocol";

/**
 * Checks a command's arguments against the board's rules (`checkCommand`), then parses them with
 * the command's schema (which drops fields the command does not have).
 */
export function parseArgs<T extends CommandType>(
  board: Board,
  type: T,
  raw: Record<string, unknown>,
): CommandArgs<T> {
  checkPins(board, type, raw);
  const parsed = commandSchemas[type].safeParse(raw);
  if (!parsed.success) throw invalidArguments(type, parsed.error.issues, raw);
  return parsed.data as CommandArgs<T>;
}

/** Carries out a validated command on the hardware; throws CommandError when it cannot. */
export function execute<T extends CommandType>(
  hw: Hardware,
  type: T,
  args: CommandArgs<T>,
): CommandResult<T> {
  return (handlers[type] as Handler<T>)(args, hw);
}
