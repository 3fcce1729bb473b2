#include "check.h"
#include "sdk_backoff.h"
#include "sdk_protocol.h"

#include <string.h>

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
  /* A quick window (1012): uniform in [min, max) until it ends; its retries count, so the backoff
   * then goes on from the n reached (a fleet does not start again at base all at once). */
  sdk_backoff_init(&b, (sdk_backoff_timing){.base_ms = 250, .cap_ms = 30000});
  sdk_backoff_quick(&b, 1000, 30000, 100, 1000);
  CHECK(sdk_backoff_next_at(&b, 1000, 0) == 100);
  CHECK(sdk_backoff_next_at(&b, 30999, 899) == 999);
  CHECK(sdk_backoff_next_at(&b, 30999, 900) == 100);
  CHECK(b.attempt == 3);
  CHECK(sdk_backoff_next_at(&b, 31000, 0xFFFFFFFFu) == 0xFFFFFFFFu % 2000u); /* 250·2³ */
  CHECK(b.attempt == 4);
  CHECK(b.quick_until_ms == 0);
  /* A reset (stable connection) keeps the window; end_quick (back online) ends it. */
  sdk_backoff_quick(&b, 0, 30000, 5000, 6000);
  sdk_backoff_reset(&b);
  CHECK(sdk_backoff_next_at(&b, 10, 0) == 5000);
  sdk_backoff_end_quick(&b);
  CHECK(sdk_backoff_next_at(&b, 10, 5000) == 0);
  /* A capped window (a lost long-lived connection): the normal draw, its ceiling at most max. */
  b.attempt = 10;
  sdk_backoff_cap_for(&b, 0, 10000, 2000);
  CHECK(sdk_backoff_next_at(&b, 9999, 1999) == 1999);
  CHECK(sdk_backoff_next_at(&b, 9999, 2000) == 0);
  CHECK(sdk_backoff_next_at(&b, 10000, 29999) == 29999);
  /* The hint in a 1012 reason. */
  uint32_t lo = 7, hi = 7;
  const char *r = "server restarting; retry in 100-1000 ms";
  CHECK(sdk_backoff_parse_hint(r, strlen(r), &lo, &hi) && lo == 100 && hi == 1000);
  lo = hi = 7;
  CHECK(!sdk_backoff_parse_hint(r, strlen(r) - 1, &lo, &hi)); /* cut before " ms" */
  CHECK(!sdk_backoff_parse_hint("retry in 5-5 ms", 15, &lo, &hi));
  CHECK(!sdk_backoff_parse_hint("retry in 1234567-2 ms", 21, &lo, &hi));
  CHECK(!sdk_backoff_parse_hint("retry in -2 ms", 14, &lo, &hi));
  CHECK(!sdk_backoff_parse_hint("", 0, &lo, &hi));
  CHECK(lo == 7 && hi == 7);
  CHECK(sdk_backoff_parse_hint("x retry in 1 retry in 0-200 ms", 30, &lo, &hi) && lo == 100 && hi == 200);
  /* Clamped into [floor, backoff cap]: never a tight loop, never longer than the backoff. */
  CHECK(SDK_RESTART_RETRY_HINT_FLOOR_MS == 100u && SDK_RESTART_RETRY_HINT_CEILING_MS == 30000u);
  CHECK(sdk_backoff_parse_hint("retry in 5000-999999 ms", 23, &lo, &hi) && lo == 5000 && hi == 30000);
  lo = hi = 7;
  CHECK(!sdk_backoff_parse_hint("retry in 0-1 ms", 15, &lo, &hi));
  CHECK(!sdk_backoff_parse_hint("retry in 0-100 ms", 17, &lo, &hi));
  CHECK(!sdk_backoff_parse_hint("retry in 40000-999999 ms", 24, &lo, &hi));
  CHECK(lo == 7 && hi == 7);
  return check_exit("backoff");
}
