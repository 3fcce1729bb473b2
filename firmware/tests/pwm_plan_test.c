/* The Pico port's PWM arithmetic (pure C, so it is checked here, off the board). */
#include <math.h>

#include "../ports/pico/pico_pwm_plan.c"
#include "check.h"

static void sweep(uint32_t clock_hz) {
  int bad = 0;
  for (double f = 8.0; f <= 1000000.0; f *= 1.0007) {
    pico_pwm_plan p = pico_pwm_plan_for(clock_hz, f);
    double actual = pico_pwm_frequency(clock_hz, p);
    bool ok = p.div16 >= 16 && p.div16 <= 4095 && p.wrap <= 65534 && fabs(actual - f) / f < 0.005 &&
              pico_pwm_level(p, 0.0) == 0 && pico_pwm_level(p, 1.0) == (uint32_t)p.wrap + 1;
    if (!ok && bad++ < 5) fprintf(stderr, "%u Hz clock, %.3f Hz: div16 %u wrap %u -> %.3f Hz\n", clock_hz, f, p.div16, p.wrap, actual);
  }
  CHECK(bad == 0);
}

int main(void) {
  /* 1 MHz: the divider at 1.0 and as many counts as the clock allows. */
  pico_pwm_plan p = pico_pwm_plan_for(125000000u, 1000000.0);
  CHECK(p.div16 == 16 && p.wrap == 124 && !p.phase_correct);
  CHECK(pico_pwm_frequency(125000000u, p) == 1000000.0);
  p = pico_pwm_plan_for(150000000u, 1000000.0);
  CHECK(p.div16 == 16 && p.wrap == 149);
  /* 8 Hz: at 150 MHz the divider cannot go slow enough, so the counter runs phase-correct. */
  p = pico_pwm_plan_for(125000000u, 8.0);
  CHECK(!p.phase_correct && p.div16 == 3815 && p.wrap == 65530);
  p = pico_pwm_plan_for(150000000u, 8.0);
  CHECK(p.phase_correct && p.div16 == 2289);
  CHECK(fabs(pico_pwm_frequency(150000000u, p) - 8.0) < 0.001);
  /* Duty: round(duty × (wrap + 1)), 1 is always high, out-of-range values are clamped. */
  p = pico_pwm_plan_for(125000000u, 1000.0);
  CHECK(pico_pwm_level(p, 0.25) == (uint16_t)floor(0.25 * (p.wrap + 1) + 0.5));
  CHECK(pico_pwm_level(p, 2.0) == (uint32_t)p.wrap + 1);
  CHECK(pico_pwm_level(p, -1.0) == 0);
  sweep(125000000u);
  sweep(150000000u);
  return check_exit("pwm_plan");
}
