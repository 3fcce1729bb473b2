// Plain data about the boards and the protocol's limits, without zod, so that device scripts can
// bundle it cheaply (the @sdk/device library validates arguments with it inside the sandbox).

/** Frames of this many bytes or more are refused (close code 1009). */
export const maxFrameBytes = 64 * 1024;

/** Byte arrays travel as JSON arrays of numbers; 12,000 of them ("255,") still fit in one 64 KB frame. */
export const maxBytesPerMessage = 12_000;

/** GPIO numbers brought out to the header of both the Pico W and the Pico 2 W. */
const headerGpios = [
  0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 26, 27, 28,
] as const;

/** The onboard LED is wired to the wireless chip, not to an RP2040/RP2350 GPIO: it is its own named pin. */
export const onboardLed = "LED" as const;

/**
 * Which header pins each bus can use (the RP2040 and RP2350 share these function-select tables;
 * the RP2350's extra UART options on other function slots are not offered).
 */
const rp2Buses = {
  i2c: {
    0: { sda: [0, 4, 8, 12, 16, 20, 28], scl: [1, 5, 9, 13, 17, 21] },
    1: { sda: [2, 6, 10, 14, 18, 22, 26], scl: [3, 7, 11, 15, 19, 27] },
  },
  spi: {
    0: { sck: [2, 6, 18, 22], tx: [3, 7, 19], rx: [0, 4, 16, 20] },
    1: { sck: [10, 14, 26], tx: [11, 15, 27], rx: [8, 12, 28] },
  },
  uart: { 0: { tx: [0, 12, 16, 28], rx: [1, 13, 17] }, 1: { tx: [4, 8, 20], rx: [5, 9, 21] } },
} as const;

export const boards = {
  pico_w: {
    name: "Raspberry Pi Pico W",
    chip: "RP2040",
    gpios: headerGpios,
    adcPins: [26, 27, 28],
    ...rp2Buses,
  },
  pico2_w: {
    name: "Raspberry Pi Pico 2 W",
    chip: "RP2350",
    gpios: headerGpios,
    adcPins: [26, 27, 28],
    ...rp2Buses,
  },
} as const;

export type BoardId = keyof typeof boards;
export type BoardInfo = (typeof boards)[BoardId];

/** ADC: 12-bit samples over 0–3.3 V. */
export const adc = { maxVolts: 3.3, maxRaw: 4095 } as const;
export const pwmLimits = { minFrequency: 8, maxFrequency: 1_000_000 } as const;
export const i2cAddressRange = { min: 0x08, max: 0x77 } as const;
export const uartBauds = [
  300, 1200, 2400, 4800, 9600, 19200, 38400, 57600, 115200, 230400, 460800, 921600,
] as const;

/** Codes a device uses in an `error` reply to a command. Other codes are passed on as they are. */
export const deviceErrorCodes = {
  invalid_argument: "the arguments are wrong for this board (a pin it does not have, a bus not configured)",
  unsupported: "the board cannot do this (for example the LED pin as an input)",
  io_error: "the hardware did not respond (an I2C address that does not acknowledge)",
  busy: "the device is busy and cannot take the command now",
  malformed: "the frame could not be parsed",
} as const;
