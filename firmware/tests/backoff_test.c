#include "check.h"
#include "sdk_backoff.h"

int main(void) {
  sdk_backoff b;
  sdk_backoff_init(&b, (sdk_backoff_timing){.base_ms = 250, .cap_ms = 30000});
  /* The n-th delay stays below min(cap, base·2ⁿ), whatever the random draw. */
  uint32_t bound = 250;
  for (int n = 0; n < 20; n++) {
    uint32_t lo = sdk_backoff_next(&b, 0);
    CHECK(lo == 0);
    b.attempt--; /* draw the same n again with the largest random value */
    uint32_t hi = sdk_backoff_next(&b, 0xFFFFFFFFu);
    CHECK(hi < bound);
    b.attempt--; /* and a draw just below the window: the window is exactly min(cap, base·2ⁿ) */
    CHECK(sdk_backoff_next(&b, bound - 1) == bound - 1);
    bound = bound * 2 > 30000 ? 30000 : bound * 2;
  }
  /* Far past the cap the window stays at the cap. */
  b.attempt = 1000;
  CHECK(sdk_backoff_next(&b, 29999) == 29999);
  CHECK(sdk_backoff_next(&b, 30000) == 0);
  sdk_backoff_reset(&b);
  CHECK(sdk_backoff_next(&b, 1000) == 1000 % 250);
  /* A zero base never divides by zero. */
  sdk_backoff_init(&b, (sdk_backoff_timing){.base_ms = 0, .cap_ms = 0});
  CHECK(sdk_backoff_next(&b, 12345) == 0);
  return check_exit("backoff");
}
