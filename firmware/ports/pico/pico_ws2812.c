/*
 * WS2812 strips on the Pico: one PIO state machine (with its own copy of the 4-instruction program)
 * per pin, claimed on the pin's first write wherever one is free (the wireless chip's driver holds
 * one already), and released when the pin is given another job.
 */
#include "hardware/clocks.h"
#include "hardware/pio.h"
#include "pico/time.h"
#include "pico_pins.h"
#include "sdk_port.h"
#include "ws2812.pio.h"

#define STRIPS_MAX 4u
#define BIT_HZ 800000u
/* After the FIFO empties, the last pixel still takes 24 × 1.25 µs; then the line must stay low for
 * the strip to latch: 50 µs for the original WS2812, up to 280 µs for the WS2812B-V5 and SK6812. */
#define LAST_PIXEL_US 30u
#define LATCH_US 300u

typedef struct {
  bool used;
  uint8_t pin;
  PIO pio;
  uint sm;
  uint offset;
} strip;

static strip strips[STRIPS_MAX];

static strip *strip_of(uint8_t pin) {
  for (size_t i = 0; i < STRIPS_MAX; i++)
    if (strips[i].used && strips[i].pin == pin) return &strips[i];
  return NULL;
}

void pico_ws2812_leave(uint8_t pin) {
  strip *s = strip_of(pin);
  if (!s) return;
  pio_sm_set_enabled(s->pio, s->sm, false);
  pio_remove_program_and_unclaim_sm(&sdk_ws2812_program, s->pio, s->sm, s->offset);
  s->used = false;
}

static strip *strip_start(uint8_t pin) {
  strip *s = NULL;
  for (size_t i = 0; i < STRIPS_MAX && !s; i++)
    if (!strips[i].used) s = &strips[i];
  if (!s) {
    sdk_port_log(SDK_LOG_WARN, "WS2812: at most 4 pins can drive strips; give one of them another job first");
    return NULL;
  }
  PIO pio;
  uint sm, offset;
  if (!pio_claim_free_sm_and_add_program_for_gpio_range(&sdk_ws2812_program, &pio, &sm, &offset, pin, 1, true)) {
    sdk_port_log(SDK_LOG_WARN, "WS2812: no free PIO state machine or program space");
    return NULL;
  }
  (void)pico_pin_take(pin, PICO_PIN_WS2812, 0);
  *s = (strip){.used = true, .pin = pin, .pio = pio, .sm = sm, .offset = offset};

  pio_gpio_init(pio, pin);
  pio_sm_set_consecutive_pindirs(pio, sm, pin, 1, true);
  pio_sm_config c = sdk_ws2812_program_get_default_config(offset);
  sm_config_set_sideset_pins(&c, pin);
  sm_config_set_out_shift(&c, false, true, 24); /* MSB first, autopull every 24 bits */
  sm_config_set_fifo_join(&c, PIO_FIFO_JOIN_TX);
  /* 15.625 at 125 MHz, 18.75 at 150 MHz: both exact in the divider's 8 fraction bits. */
  sm_config_set_clkdiv(&c, (float)clock_get_hz(clk_sys) /
                               (float)(BIT_HZ * (sdk_ws2812_T1 + sdk_ws2812_T2 + sdk_ws2812_T3)));
  pio_sm_init(pio, sm, offset, &c);
  pio_sm_set_enabled(pio, sm, true);
  return s;
}

void sdk_port_ws2812_write(uint8_t pin, const uint8_t *rgb, size_t pixels) {
  if (pin >= PICO_PIN_COUNT) return;
  strip *s = strip_of(pin);
  if (!s) s = strip_start(pin);
  if (!s) return;
  for (size_t i = 0; i < pixels; i++) {
    const uint8_t *p = rgb + 3u * i;
    uint32_t grb = ((uint32_t)p[1] << 16) | ((uint32_t)p[0] << 8) | p[2];
    pio_sm_put_blocking(s->pio, s->sm, grb << 8u);
  }
  while (!pio_sm_is_tx_fifo_empty(s->pio, s->sm)) tight_loop_contents();
  busy_wait_us_32(LAST_PIXEL_US + LATCH_US);
}
