/* Exponential backoff with full jitter, and the quick windows after a restart
 * (docs/protocol.md, "Reconnecting"). */
#ifndef SDK_BACKOFF_H
#define SDK_BACKOFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
  uint32_t base_ms; /* 250 */
  uint32_t cap_ms;  /* 30000 */
} sdk_backoff_timing;

typedef struct {
  sdk_backoff_timing timing;
  uint32_t attempt; /* n: retries since the last connection that lasted 10 s */
  /* A quick window: until quick_until_ms, delays are drawn in [quick_min_ms, quick_max_ms)
   * (quick_cap_only: the normal draw, its ceiling at most quick_max_ms). 0: no window. */
  uint64_t quick_until_ms;
  uint32_t quick_min_ms;
  uint32_t quick_max_ms;
  bool quick_cap_only;
} sdk_backoff;

void sdk_backoff_init(sdk_backoff *b, sdk_backoff_timing timing);
/* The n-th delay: uniform in [0, min(cap, base·2ⁿ)), drawn from random32; n then grows. */
uint32_t sdk_backoff_next(sdk_backoff *b, uint32_t random32);
/* The same, at now_ms: inside a quick window the window decides (n grows all the same, so when
 * the window ends the backoff goes on from the n reached). */
uint32_t sdk_backoff_next_at(sdk_backoff *b, uint64_t now_ms, uint32_t random32);
/* n back to 0 (a stable connection); a quick window stays. */
void sdk_backoff_reset(sdk_backoff *b);
/* After 1012: until now + window_ms every delay is uniform in [min_ms, max_ms). */
void sdk_backoff_quick(sdk_backoff *b, uint64_t now_ms, uint32_t window_ms, uint32_t min_ms, uint32_t max_ms);
/* After a lost long-lived connection: until now + window_ms the ceiling is at most max_ms. */
void sdk_backoff_cap_for(sdk_backoff *b, uint64_t now_ms, uint32_t window_ms, uint32_t max_ms);
/* The connection is back: no window any more. */
void sdk_backoff_end_quick(sdk_backoff *b);
/* The window of a 1012 reason "… retry in <min>-<max> ms" (reason need not be NUL-terminated),
 * clamped into [SDK_RESTART_RETRY_HINT_FLOOR_MS, SDK_RESTART_RETRY_HINT_CEILING_MS]; false when
 * it names none or nothing is left of it after clamping (then *min_ms and *max_ms are untouched). */
bool sdk_backoff_parse_hint(const char *reason, size_t len, uint32_t *min_ms, uint32_t *max_ms);

#endif /* SDK_BACKOFF_H */
