// The firmware's C header is generated from hardware.ts. It must be committed as the generator
// writes it today, it must compile as strict C11, and its tables must say what checkCommand says.
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import {
  boardIds,
  boards,
  checkCommand,
  commandArgs,
  commandTypes,
  deviceCloseCodes,
  maxFrameBytes,
  protocolVersion,
  uartBauds,
} from "@sdk/protocol";
import { checkCommandVectorsPath, renderCheckCommandVectors } from "../scripts/check-command-vectors.ts";
import {
  configBlockVectorsPath,
  deviceSocketUrlVectorsPath,
  renderConfigBlockVectors,
  renderDeviceSocketUrlVectors,
} from "../scripts/config-block-vectors.ts";
import { cHeaderPath, renderCHeader } from "../scripts/generate-c-header.ts";

const headerFile = fileURLToPath(cHeaderPath);
const cc = spawnSync("cc", ["--version"]).status === 0 ? "cc" : null;
const noCompiler = cc ? false : "no C compiler (cc) on this machine: the header was not compiled";
if (!cc) console.log(`# SKIPPED: ${noCompiler}`);

const strict = ["-std=c11", "-Wall", "-Wextra", "-Werror", "-pedantic"];

test("the committed header is what the generator writes (regenerate: npm run generate:c-header)", () => {
  assert.ok(fs.existsSync(headerFile), `${headerFile} is missing`);
  assert.equal(fs.readFileSync(headerFile, "utf8"), renderCHeader());
});

test("the committed checkCommand vectors are what the generator writes (npm run generate:c-header)", () => {
  const file = fileURLToPath(checkCommandVectorsPath);
  assert.ok(fs.existsSync(file), `${file} is missing`);
  const text = fs.readFileSync(file, "utf8");
  assert.equal(text, renderCheckCommandVectors());
  const cases = text
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as { error: string | null });
  assert.ok(
    cases.some((c) => c.error === null) && cases.some((c) => c.error !== null),
    "valid and invalid cases",
  );
});

test("the header has an include guard and the protocol's basic numbers", () => {
  const header = renderCHeader();
  assert.match(header, /^#ifndef SDK_PROTOCOL_H\n#define SDK_PROTOCOL_H$/m);
  assert.match(header, /#endif \/\* SDK_PROTOCOL_H \*\/\n$/);
  assert.match(header, new RegExp(`^#define SDK_PROTOCOL_VERSION ${protocolVersion}$`, "m"));
  assert.match(header, new RegExp(`^#define SDK_MAX_FRAME_BYTES ${maxFrameBytes}u$`, "m"));
  assert.match(header, new RegExp(`^#define SDK_CLOSE_TOO_BIG ${deviceCloseCodes.tooBig}$`, "m"));
});

test("the header compiles as C11 with every warning an error", { skip: noCompiler }, () => {
  execFileSync(cc!, [...strict, "-fsyntax-only", "-x", "c", headerFile], { stdio: "pipe" });
});

test("a C program reading the header's tables agrees with checkCommand", { skip: noCompiler }, (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sdk-c-header-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const program = path.join(dir, "tables.c");
  fs.writeFileSync(
    program,
    `#include <stdio.h>
#include "${headerFile}"

struct arg { int command; const char *name; int optional; double min, max; };
#define ROW(command, name, kind, optional, min, max, table, what, unit) { SDK_COMMAND_##command, name, optional, min, max },
static const struct arg args[] = { SDK_COMMAND_ARGS(ROW) };
static const char *const commands[SDK_COMMAND_COUNT] = SDK_COMMAND_NAMES;
static const char *const board_ids[SDK_BOARD_COUNT] = SDK_BOARD_IDS;
static const uint32_t gpio[SDK_BOARD_COUNT] = SDK_BOARD_GPIO_MASKS;
static const uint32_t adc[SDK_BOARD_COUNT] = SDK_BOARD_ADC_MASKS;
static const uint32_t roles[7][SDK_BOARD_COUNT][SDK_BUS_COUNT] = {
  SDK_BOARD_I2C_SDA_MASKS, SDK_BOARD_I2C_SCL_MASKS, SDK_BOARD_SPI_SCK_MASKS, SDK_BOARD_SPI_TX_MASKS,
  SDK_BOARD_SPI_RX_MASKS, SDK_BOARD_UART_TX_MASKS, SDK_BOARD_UART_RX_MASKS,
};
static const uint32_t bauds[SDK_UART_BAUD_COUNT] = SDK_UART_BAUDS;

int main(void) {
  unsigned i, b, r, bus;
  printf("{\\"args\\":[");
  for (i = 0; i < sizeof args / sizeof args[0]; i++)
    printf("%s[\\"%s\\",\\"%s\\",%d,%g,%g]", i ? "," : "", commands[args[i].command], args[i].name,
           args[i].optional, args[i].min, args[i].max);
  printf("],\\"boards\\":{");
  for (b = 0; b < SDK_BOARD_COUNT; b++) {
    printf("%s\\"%s\\":{\\"gpio\\":%lu,\\"adc\\":%lu,\\"roles\\":[", b ? "," : "", board_ids[b],
           (unsigned long)gpio[b], (unsigned long)adc[b]);
    for (r = 0; r < 7; r++)
      for (bus = 0; bus < SDK_BUS_COUNT; bus++)
        printf("%s%lu", r || bus ? "," : "", (unsigned long)roles[r][b][bus]);
    printf("]}");
  }
  printf("},\\"bauds\\":[");
  for (i = 0; i < SDK_UART_BAUD_COUNT; i++) printf("%s%lu", i ? "," : "", (unsigned long)bauds[i]);
  printf("]}\\n");
  return 0;
}
`,
  );
  const binary = path.join(dir, "tables");
  execFileSync(cc!, [...strict, "-o", binary, program], { stdio: "pipe" });
  const out = JSON.parse(execFileSync(binary, { encoding: "utf8" })) as {
    args: [string, string, number, number, number][];
    boards: Record<string, { gpio: number; adc: number; roles: number[] }>;
    bauds: number[];
  };

  const expectedArgs = commandTypes.flatMap((type) =>
    commandArgs[type].map((s) => {
      const range = s.kind === "integer" || s.kind === "number" ? s.range : { min: 0, max: 0 };
      return [type, s.name, s.optional ? 1 : 0, range.min, range.max];
    }),
  );
  assert.deepEqual(out.args, expectedArgs);
  assert.deepEqual(out.bauds, [...uartBauds]);

  const bit = (mask: number, pin: number) => ((mask >>> pin) & 1) === 1;
  const roleChecks = [
    ["i2c_configure", "bus", "sda"],
    ["i2c_configure", "bus", "scl"],
    ["spi_configure", "bus", "sck"],
    ["spi_configure", "bus", "tx"],
    ["spi_configure", "bus", "rx"],
    ["uart_configure", "uart", "tx"],
    ["uart_configure", "uart", "rx"],
  ] as const;
  for (const board of boardIds) {
    const tables = out.boards[board]!;
    for (let pin = 0; pin < 32; pin++) {
      const isGpio = checkCommand(board, "gpio_read", { pin }) === null;
      assert.equal(bit(tables.gpio, pin), isGpio, `${board} GPIO ${pin}`);
      assert.equal(
        bit(tables.adc, pin),
        checkCommand(board, "adc_read", { pin }) === null,
        `${board} ADC ${pin}`,
      );
      for (const [r, [type, busArg, role]] of roleChecks.entries()) {
        for (const bus of [0, 1] as const) {
          const table =
            boards[board][type === "i2c_configure" ? "i2c" : type === "spi_configure" ? "spi" : "uart"][bus];
          const base: Record<string, unknown> = {
            [busArg]: bus,
            ...Object.fromEntries(Object.entries(table).map(([k, v]) => [k, (v as readonly number[])[0]])),
            frequency: 100_000,
            baud: 9600,
          };
          const accepted = checkCommand(board, type, { ...base, [role]: pin }) === null;
          assert.equal(
            bit(tables.roles[r * 2 + bus]!, pin),
            accepted,
            `${board} ${type} bus ${bus} ${role} GP${pin}`,
          );
        }
      }
    }
  }
});

test("the committed config block and socket URL vectors are what the generator writes", () => {
  for (const [file, render] of [
    [configBlockVectorsPath, renderConfigBlockVectors],
    [deviceSocketUrlVectorsPath, renderDeviceSocketUrlVectors],
  ] as const) {
    const path = fileURLToPath(file);
    assert.ok(fs.existsSync(path), `${path} is missing (npm run generate:c-header)`);
    assert.equal(fs.readFileSync(path, "utf8"), render(), `${path} is stale (npm run generate:c-header)`);
  }
});
