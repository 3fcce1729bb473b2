/* Time, randomness and the local log (USB serial) for the core. */
#include <stdio.h>

#include "pico/rand.h"
#include "pico/stdlib.h"
#include "sdk_port.h"

uint64_t sdk_port_now_ms(void) { return time_us_64() / 1000u; }

/* pico_rand mixes the ring oscillator, the bus performance counters and the clock. */
void sdk_port_random(uint8_t *out, size_t n) {
  while (n > 0) {
    uint64_t r = get_rand_64();
    for (int i = 0; i < 8 && n > 0; i++, n--) {
      *out++ = (uint8_t)r;
      r >>= 8;
    }
  }
}

void sdk_port_log(int level, const char *message) {
  static const char *const names[] = {"DEBUG", "INFO", "WARN", "ERROR"};
  const char *name = level >= 0 && level <= 3 ? names[level] : "?";
  /* Seconds.milliseconds since boot (32-bit: the log's printf has no 64-bit support). */
  uint64_t ms = time_us_64() / 1000u;
  printf("%7lu.%03lu %s %s\n", (unsigned long)(ms / 1000u), (unsigned long)(ms % 1000u), name, message);
}
