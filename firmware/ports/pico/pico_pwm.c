/*
 * PWM on the Pico. Each slice has one counter (so one frequency) and two channels, A and B:
 * GP2n is A and GP2n+1 is B of slice n mod 8 (GP16 shares slice 0 with GP0 and so on). Setting a
 * frequency on a pin therefore also sets it for the other channel of its slice: the later call wins
 * the frequency for both, and the other channel keeps its duty (its level is recomputed for the new
 * wrap). Two pins on the same channel (GP0 and GP16) are one output: the later duty wins for both.
 */
#include "hardware/clocks.h"
#include "hardware/gpio.h"
#include "hardware/pwm.h"
#include "pico_pins.h"
#include "pico_pwm_plan.h"
#include "sdk_port.h"

static double duties[NUM_PWM_SLICES][2];

void sdk_port_pwm(uint8_t pin, double frequency, double duty) {
  if (pin >= PICO_PIN_COUNT) return;
  uint slice = pwm_gpio_to_slice_num(pin);
  uint channel = pwm_gpio_to_channel(pin);
  pico_pwm_plan plan = pico_pwm_plan_for(clock_get_hz(clk_sys), frequency);
  duties[slice][channel] = duty;
  pwm_set_clkdiv_mode(slice, PWM_DIV_FREE_RUNNING);
  pwm_set_phase_correct(slice, plan.phase_correct);
  pwm_set_clkdiv_int_frac4(slice, (uint8_t)(plan.div16 >> 4), (uint8_t)(plan.div16 & 15u));
  pwm_set_wrap(slice, plan.wrap);
  pwm_set_both_levels(slice, pico_pwm_level(plan, duties[slice][PWM_CHAN_A]),
                      pico_pwm_level(plan, duties[slice][PWM_CHAN_B]));
  pwm_set_enabled(slice, true);
  (void)pico_pin_take(pin, PICO_PIN_PWM, 0);
  gpio_set_function(pin, GPIO_FUNC_PWM);
}
