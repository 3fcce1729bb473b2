/* Pin jobs and their undoing: see pico_pins.h. */
#include "pico_pins.h"

#include "hardware/gpio.h"

static uint8_t roles[PICO_PIN_COUNT];
static uint8_t units[PICO_PIN_COUNT];

pico_pin_role pico_pin_role_of(uint8_t pin) {
  return pin < PICO_PIN_COUNT ? (pico_pin_role)roles[pin] : PICO_PIN_UNUSED;
}

uint8_t pico_pin_unit_of(uint8_t pin) { return pin < PICO_PIN_COUNT ? units[pin] : 0; }

pico_pin_role pico_pin_take(uint8_t pin, pico_pin_role role, uint8_t unit) {
  if (pin >= PICO_PIN_COUNT) return PICO_PIN_UNUSED;
  pico_pin_role old = (pico_pin_role)roles[pin];
  if (old != role) {
    switch (old) {
      case PICO_PIN_GPIO: pico_gpio_leave(pin); break;
      case PICO_PIN_WS2812: pico_ws2812_leave(pin); break;
      case PICO_PIN_I2C: gpio_disable_pulls(pin); break;
      default: break; /* PWM, ADC, SPI, UART: the new function select replaces them */
    }
  }
  roles[pin] = (uint8_t)role;
  units[pin] = unit;
  return old;
}

void pico_pins_release(pico_pin_role role, uint8_t unit) {
  for (uint8_t pin = 0; pin < PICO_PIN_COUNT; pin++) {
    if (roles[pin] != role || units[pin] != unit) continue;
    (void)pico_pin_take(pin, PICO_PIN_GPIO, 0);
    gpio_init(pin); /* SIO input, output latch 0 */
    pico_gpio_enter(pin);
  }
}
