/* The ADC on the Pico: GP26-28 (ADC0-2) and the chip's temperature sensor (the last input). */
#include "hardware/adc.h"
#include "pico_pins.h"
#include "sdk_port.h"

#define TEMPERATURE_SAMPLES 8u

static bool adc_ready;

static void adc_start(void) {
  if (adc_ready) return;
  adc_init();
  adc_ready = true;
}

uint16_t sdk_port_adc_read(uint8_t channel) {
  if (channel > 2) return 0;
  adc_start();
  uint8_t pin = (uint8_t)(ADC_BASE_PIN + channel);
  /* A pin nobody else uses becomes an analog input (digital input buffer and pulls off). One that
   * is doing something else keeps doing it: the ADC then measures what is on it. */
  if (pico_pin_role_of(pin) == PICO_PIN_UNUSED) {
    (void)pico_pin_take(pin, PICO_PIN_ADC, 0);
    adc_gpio_init(pin);
  }
  adc_select_input(channel);
  return adc_read();
}

double sdk_port_temperature(void) {
  adc_start();
  adc_set_temp_sensor_enabled(true);
  adc_select_input(ADC_TEMPERATURE_CHANNEL_NUM);
  uint32_t sum = 0;
  for (uint32_t i = 0; i < TEMPERATURE_SAMPLES; i++) sum += adc_read();
  double volts = (double)sum / TEMPERATURE_SAMPLES * 3.3 / 4096.0;
  return 27.0 - (volts - 0.706) / 0.001721;
}
