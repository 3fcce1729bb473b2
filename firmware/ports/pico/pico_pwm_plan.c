/*
 * f = clk_sys / (div × (wrap + 1) × (phase_correct ? 2 : 1)), div = div16 / 16 in 16..4095.
 * The period in sixteenths of a clock cycle is t = clk_sys × 16 / f. The smallest divider whose
 * counter still fits, div16 = ceil(t / 65535), gives the most counts per period; then
 * wrap + 1 = round(t / div16). wrap + 1 stays ≤ 65535 so that a level of wrap + 1 (duty 1: always
 * high) still fits the 16-bit compare register. Below clk_sys / (255.9375 × 65535) (7.45 Hz at
 * 125 MHz, 8.94 Hz at 150 MHz) the counter runs phase-correct, which halves the frequency.
 */
#include "pico_pwm_plan.h"

#include <math.h>

#define DIV16_MIN 16.0
#define DIV16_MAX 4095.0
#define COUNTS_MAX 65535.0

pico_pwm_plan pico_pwm_plan_for(uint32_t clock_hz, double frequency) {
  if (!(frequency > 0.0)) frequency = 1.0;
  double t = (double)clock_hz * 16.0 / frequency;
  bool phase_correct = false;
  if (ceil(t / COUNTS_MAX) > DIV16_MAX) {
    phase_correct = true;
    t /= 2.0;
  }
  double div16 = ceil(t / COUNTS_MAX);
  if (div16 < DIV16_MIN) div16 = DIV16_MIN;
  if (div16 > DIV16_MAX) div16 = DIV16_MAX; /* slower than the hardware can go: its slowest */
  double counts = floor(t / div16 + 0.5);
  if (counts > COUNTS_MAX) counts = COUNTS_MAX;
  if (counts < 2.0) counts = 2.0;
  return (pico_pwm_plan){.div16 = (uint16_t)div16, .wrap = (uint16_t)(counts - 1.0), .phase_correct = phase_correct};
}

uint16_t pico_pwm_level(pico_pwm_plan plan, double duty) {
  if (!(duty > 0.0)) return 0;
  if (duty > 1.0) duty = 1.0;
  double counts = (double)plan.wrap + 1.0;
  double level = floor(duty * counts + 0.5);
  return (uint16_t)(level > counts ? counts : level);
}

double pico_pwm_frequency(uint32_t clock_hz, pico_pwm_plan plan) {
  return (double)clock_hz * 16.0 / ((double)plan.div16 * ((double)plan.wrap + 1.0) * (plan.phase_correct ? 2.0 : 1.0));
}
