// Test vectors for the firmware's command checks: every command's valid sample with each
// argument varied over the pins 0-31 and "LED" (a device must refuse the ones its board lacks,
// whatever the server's schemas would have let through) and over edge values that pass the
// command's schema, with what checkCommand says about them. firmware/tests/commands_test.c reads
// them and expects the C checks to give the same message, byte for byte.
import {
  type Board,
  boardIds,
  type CommandType,
  checkCommand,
  commandArgs,
  commandSchemas,
  commandTypes,
} from "@sdk/protocol";

export const checkCommandVectorsPath = new URL(
  "../packages/protocol/vectors/check-command.jsonl",
  import.meta.url,
);

const samples: { [T in CommandType]: Record<string, unknown> } = {
  pin_mode: { pin: 15, mode: "input", pull: "up" },
  gpio_write: { pin: "LED", value: 1 },
  gpio_read: { pin: 15 },
  gpio_toggle: { pin: 3 },
  gpio_watch: { pin: 15, edge: "both", debounceMs: 5 },
  gpio_unwatch: { pin: 15 },
  pwm: { pin: 16, frequency: 1000, duty: 0.5 },
  adc_read: { pin: 26 },
  temperature_read: {},
  i2c_configure: { bus: 0, sda: 4, scl: 5, frequency: 400_000 },
  i2c_write: { bus: 0, address: 0x3c, data: [0, 1, 2] },
  i2c_read: { bus: 1, address: 0x48, length: 2, register: 0 },
  i2c_scan: { bus: 0 },
  spi_configure: { bus: 1, sck: 10, tx: 11, rx: 12, frequency: 1_000_000, mode: 3 },
  spi_transfer: { bus: 0, data: [1, 2, 3], cs: 13 },
  uart_configure: { uart: 1, tx: 4, rx: 5, baud: 115200, dataBits: 7, parity: "even", stopBits: 2 },
  uart_write: { uart: 0, data: [104, 105] },
  ws2812_write: { pin: 22, pixels: [[255, 0, 0]] },
};

const pins: unknown[] = [...Array.from({ length: 32 }, (_, i) => i), "LED"];

/** Cases and whether they only vary a pin (kept even where the schema refuses the pin). */
function variations(type: CommandType): { args: Record<string, unknown>; pinOnly: boolean }[] {
  const base = samples[type];
  const out: { args: Record<string, unknown>; pinOnly: boolean }[] = [{ args: base, pinOnly: false }];
  for (const spec of commandArgs[type]) {
    const values: unknown[] = [];
    switch (spec.kind) {
      case "digitalPin":
      case "gpio":
      case "adcPin":
      case "busPin":
        values.push(...pins);
        break;
      case "bus":
      case "level":
        values.push(0, 1);
        break;
      case "integer":
      case "number":
        values.push(spec.range.min, spec.range.max, (spec.range.min + spec.range.max) / 2);
        break;
      case "oneOf":
        values.push(...spec.options);
        break;
      default:
        break;
    }
    const pinKind = ["digitalPin", "gpio", "adcPin", "busPin"].includes(spec.kind);
    for (const value of values) out.push({ args: { ...base, [spec.name]: value }, pinOnly: pinKind });
    if (spec.optional) {
      const { [spec.name]: _, ...rest } = base;
      out.push({ args: rest, pinOnly: false });
    }
  }
  // Bus pins also with the other bus, where the same pins belong to the other controller.
  if ("bus" in base || "uart" in base) {
    const key = "bus" in base ? "bus" : "uart";
    for (const spec of commandArgs[type]) {
      if (spec.kind !== "busPin") continue;
      for (const value of pins) {
        out.push({ args: { ...base, [key]: 1 - (base[key] as number), [spec.name]: value }, pinOnly: true });
      }
    }
  }
  return out;
}

/** One JSON line per case: {"board","type","args","error"} (error null when the command is valid). */
export function renderCheckCommandVectors(): string {
  const lines: string[] = [];
  const seen = new Set<string>();
  for (const board of boardIds as readonly Board[]) {
    for (const type of commandTypes) {
      for (const { args, pinOnly } of variations(type)) {
        if (!pinOnly && !commandSchemas[type].safeParse(args).success) continue; // never reaches a device
        const line = JSON.stringify({ board, type, args, error: checkCommand(board, type, args) });
        if (seen.has(line)) continue;
        seen.add(line);
        lines.push(line);
      }
    }
  }
  return `${lines.join("\n")}\n`;
}
