import {
  type Board,
  type BoardInfo,
  boards,
  type CommandArgs,
  type CommandType,
  onboardLed,
} from "@sdk/protocol";
import { CommandError } from "./errors.ts";

/** Commands whose `pin` may be the onboard LED (wired to the wireless chip, output only). */
const ledCommands = new Set<CommandType>(["pin_mode", "gpio_write", "gpio_read", "gpio_toggle"]);

const gp = (pins: readonly number[]) => pins.map((p) => `GP${p}`).join(", ");

function checkGpio(info: BoardInfo, pin: number, what = `GP${pin}`): void {
  if (!(info.gpios as readonly number[]).includes(pin)) {
    throw new CommandError(
      "invalid_argument",
      `${what} is not available on the ${info.name} (usable: GP0–GP22, GP26–GP28)`,
    );
  }
}

function checkRole(info: BoardInfo, pin: number, allowed: readonly number[], role: string): void {
  if (!allowed.includes(pin)) {
    throw new CommandError(
      "invalid_argument",
      `GP${pin} cannot be ${role} on the ${info.name}; use one of ${gp(allowed)}`,
    );
  }
}

/**
 * The board's pin rules, checked after the schema: the pin exists on this board, `LED` only where
 * a plain digital pin is meant, ADC only on GP26–28, bus pins only where that bus can reach.
 * Throws a CommandError("invalid_argument").
 */
export function checkPins<T extends CommandType>(board: Board, type: T, args: CommandArgs<T>): void {
  const info = boards[board];
  const a = args as Record<string, unknown>;
  if (a.pin === onboardLed) {
    if (!ledCommands.has(type)) {
      throw new CommandError("invalid_argument", `${type} cannot use the onboard LED; it is a plain output`);
    }
    return;
  }
  if (typeof a.pin === "number") checkGpio(info, a.pin);
  switch (type) {
    case "adc_read":
      checkRole(info, a.pin as number, info.adcPins, "an ADC input");
      return;
    case "i2c_configure": {
      const { bus, sda, scl } = args as CommandArgs<"i2c_configure">;
      checkRole(info, sda, info.i2c[bus].sda, `SDA of I2C bus ${bus}`);
      checkRole(info, scl, info.i2c[bus].scl, `SCL of I2C bus ${bus}`);
      return;
    }
    case "spi_configure": {
      const { bus, sck, tx, rx } = args as CommandArgs<"spi_configure">;
      checkRole(info, sck, info.spi[bus].sck, `SCK of SPI bus ${bus}`);
      checkRole(info, tx, info.spi[bus].tx, `TX (MOSI) of SPI bus ${bus}`);
      checkRole(info, rx, info.spi[bus].rx, `RX (MISO) of SPI bus ${bus}`);
      return;
    }
    case "spi_transfer": {
      const { cs } = args as CommandArgs<"spi_transfer">;
      if (cs !== undefined) checkGpio(info, cs, `chip select GP${cs}`);
      return;
    }
    case "uart_configure": {
      const { uart, tx, rx } = args as CommandArgs<"uart_configure">;
      checkRole(info, tx, info.uart[uart].tx, `TX of UART ${uart}`);
      checkRole(info, rx, info.uart[uart].rx, `RX of UART ${uart}`);
      return;
    }
    default:
      return;
  }
}

/** Throws a RangeError unless `pin` is a header GPIO of the board (library-side checks). */
export function assertGpio(board: Board, pin: number): void {
  if (!(boards[board].gpios as readonly number[]).includes(pin)) {
    throw new RangeError(`GP${pin} is not a usable GPIO on the ${boards[board].name}`);
  }
}
