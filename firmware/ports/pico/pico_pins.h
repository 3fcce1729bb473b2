/* Which job each GPIO of the Pico has right now (plain GPIO, PWM, a bus, a WS2812 strip), so that
 * handing a pin to a new job undoes the old one: edge interrupts off, PIO state machine released,
 * I2C pull-ups off. Shared by pico_gpio.c, pico_pwm.c, pico_adc.c, pico_i2c.c, pico_spi.c,
 * pico_uart.c and pico_ws2812.c. */
#ifndef SDK_PICO_PINS_H
#define SDK_PICO_PINS_H

#include <stdbool.h>
#include <stdint.h>

#define PICO_PIN_COUNT 30u

typedef enum {
  PICO_PIN_UNUSED = 0, /* as after reset: nobody set it up */
  PICO_PIN_GPIO,
  PICO_PIN_PWM,
  PICO_PIN_ADC,
  PICO_PIN_I2C,
  PICO_PIN_SPI,
  PICO_PIN_UART,
  PICO_PIN_WS2812
} pico_pin_role;

pico_pin_role pico_pin_role_of(uint8_t pin);
/* The bus (I2C, SPI, UART number) a pin serves; meaningful for those roles only. */
uint8_t pico_pin_unit_of(uint8_t pin);
/* Gives pin to role (unit: the bus number for I2C, SPI and UART, else 0), first undoing its old
 * role when that differs. Returns the old role. The caller then sets the pin's function (and for
 * PICO_PIN_GPIO calls pico_gpio_enter once the pin is set up). */
pico_pin_role pico_pin_take(uint8_t pin, pico_pin_role role, uint8_t unit);
/* Pins still serving role on unit become plain GPIO inputs (a bus being reconfigured). */
void pico_pins_release(pico_pin_role role, uint8_t unit);

/* The undo hooks pico_pin_take calls (each in the file that owns the job). */
void pico_gpio_leave(uint8_t pin);   /* pico_gpio.c: edge interrupt off */
void pico_gpio_enter(uint8_t pin);   /* pico_gpio.c: edge interrupt back on when watched */
void pico_ws2812_leave(uint8_t pin); /* pico_ws2812.c: state machine and program released */

/* Wakes the main loop from an interrupt handler (pico_gpio.c): edges and UART bytes are then handed
 * to the core at once instead of after the loop's sleep. */
void pico_wake_main_loop(void);

#endif /* SDK_PICO_PINS_H */
