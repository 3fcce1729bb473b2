import { type Board, boards, type Gpio, onboardLed } from "@sdk/protocol/hardware";

export type { AdcPin, Board, Gpio } from "@sdk/protocol/hardware";

/** GPIO numbers on the header of the Pico W (GPIO numbers, not physical pin numbers). */
export type PicoWGpio = (typeof boards.pico_w.gpios)[number];
/** GPIO numbers on the header of the Pico 2 W. */
export type Pico2WGpio = (typeof boards.pico2_w.gpios)[number];
/** The GPIO numbers of a board. */
export type GpioOf<B extends Board> = (typeof boards)[B]["gpios"][number];

/** The onboard LED. It hangs off the wireless chip, so it is a named pin rather than a GPIO number. */
export const OnboardLED = onboardLed;
/** The type of {@link OnboardLED}. */
export type OnboardLEDPin = typeof onboardLed;
/** A pin for digital I/O: a header GPIO or the onboard LED. */
export type DigitalPin = Gpio | OnboardLEDPin;

/** GPIO 0. */ export const GP0 = 0;
/** GPIO 1. */ export const GP1 = 1;
/** GPIO 2. */ export const GP2 = 2;
/** GPIO 3. */ export const GP3 = 3;
/** GPIO 4 (I2C0 SDA by default). */ export const GP4 = 4;
/** GPIO 5 (I2C0 SCL by default). */ export const GP5 = 5;
/** GPIO 6. */ export const GP6 = 6;
/** GPIO 7. */ export const GP7 = 7;
/** GPIO 8. */ export const GP8 = 8;
/** GPIO 9. */ export const GP9 = 9;
/** GPIO 10. */ export const GP10 = 10;
/** GPIO 11. */ export const GP11 = 11;
/** GPIO 12. */ export const GP12 = 12;
/** GPIO 13. */ export const GP13 = 13;
/** GPIO 14. */ export const GP14 = 14;
/** GPIO 15. */ export const GP15 = 15;
/** GPIO 16. */ export const GP16 = 16;
/** GPIO 17. */ export const GP17 = 17;
/** GPIO 18. */ export const GP18 = 18;
/** GPIO 19. */ export const GP19 = 19;
/** GPIO 20. */ export const GP20 = 20;
/** GPIO 21. */ export const GP21 = 21;
/** GPIO 22. */ export const GP22 = 22;
/** GPIO 26, ADC channel 0. */ export const GP26 = 26;
/** GPIO 27, ADC channel 1. */ export const GP27 = 27;
/** GPIO 28, ADC channel 2. */ export const GP28 = 28;

/** The pin tables of each board (GPIOs, ADC pins, I2C/SPI/UART pin options per bus). */
export const boardPins = boards;
