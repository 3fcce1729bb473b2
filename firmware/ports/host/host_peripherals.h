/*
 * The host port's virtual hardware, in memory, behaving like the simulator's
 * (packages/simulator/src/hardware): GPIO with pulls, outside drive, PWM and watches, the onboard
 * LED, ADC voltages and the temperature sensor, per I2C bus a TMP102 at 0x48 and a 256-byte EEPROM
 * at 0x50 plus attached targets, SPI and UART loopback, WS2812 strips.
 *
 * It implements the peripheral part of sdk_port.h; the functions below are for the control
 * channel (host_control.c) and tests. All state is static.
 */
#ifndef HOST_PERIPHERALS_H
#define HOST_PERIPHERALS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sdk_device.h"

#define HOST_GPIO_COUNT 30u
#define HOST_UART_FIFO_BYTES 65536u
#define HOST_WS2812_PIXELS 1024u
/* The most bytes an attached I2C target answers with (zeros after them). */
#define HOST_I2C_TARGET_BYTES 256u

/* Resets every peripheral to its power-on state; dev (may be NULL) hears of watched pin changes. */
void host_peripherals_init(sdk_device *dev);

/* The board the device was configured for (Pico W when there is no device). */
sdk_board host_peripherals_board(void);

/* Something outside drives a GPIO: level 0 or 1, or -1 to let it float to its pull. */
void host_peripherals_drive(uint8_t pin, int level);
/* The level on a GPIO (what gpio_read answers), or the LED latch for SDK_PIN_LED. */
uint8_t host_peripherals_level(uint8_t pin);
/* Whether the pin runs PWM, and then its frequency and duty. */
bool host_peripherals_pwm(uint8_t pin, double *frequency, double *duty);
/* The pixels last written to a WS2812 strip on pin (r,g,b triples); false if never written. */
bool host_peripherals_pixels(uint8_t pin, const uint8_t **rgb, size_t *pixels);

/* Puts a target at address (0-127) on an I2C bus, replacing what was there: it acknowledges
 * writes, and a read of n bytes answers the first n of data (zeros after). false if len is over
 * HOST_I2C_TARGET_BYTES or the address is not 7-bit. */
bool host_peripherals_i2c_attach(uint8_t bus, uint8_t address, const uint8_t *data, size_t len);

bool host_peripherals_uart_configured(uint8_t uart);
/* Room left in a UART's receive FIFO. */
size_t host_peripherals_uart_space(uint8_t uart);
/* Bytes waiting in a UART's receive FIFO. */
size_t host_peripherals_uart_pending(uint8_t uart);
/* Bytes arrive on a UART's RX; returns how many fitted into the FIFO. */
size_t host_peripherals_uart_inject(uint8_t uart, const uint8_t *data, size_t len);

/* Sets the voltage on an ADC pin (GP26-28), clamped to 0-3.3 V; false if not an ADC pin or not finite. */
bool host_peripherals_set_voltage(uint8_t pin, double volts);
/* Sets what the chip's temperature sensor reads, °C. */
void host_peripherals_set_temperature(double celsius);

#endif /* HOST_PERIPHERALS_H */
