/* The PWM divider and wrap for a frequency (pure arithmetic, in its own file so that it can be
 * checked off the board). */
#ifndef SDK_PICO_PWM_PLAN_H
#define SDK_PICO_PWM_PLAN_H

#include <stdbool.h>
#include <stdint.h>

typedef struct {
  uint16_t div16;     /* the clock divider in sixteenths: 16 (1.0) to 4095 (255.9375) */
  uint16_t wrap;      /* the counter's TOP: a period is wrap + 1 counts (twice that phase-correct) */
  bool phase_correct; /* counts up and down: half the frequency, for what a divider of 255.9375 cannot reach */
} pico_pwm_plan;

/* The plan closest to frequency (Hz) with the finest duty resolution (largest wrap) at clock_hz. */
pico_pwm_plan pico_pwm_plan_for(uint32_t clock_hz, double frequency);
/* The compare level for duty (0-1): round(duty × (wrap + 1)); wrap + 1 keeps the output high. */
uint16_t pico_pwm_level(pico_pwm_plan plan, double duty);
/* The frequency a plan gives, Hz. */
double pico_pwm_frequency(uint32_t clock_hz, pico_pwm_plan plan);

#endif /* SDK_PICO_PWM_PLAN_H */
