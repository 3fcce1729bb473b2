#include "sdk_backoff.h"

#include <string.h>

#include "sdk_protocol.h"

void sdk_backoff_init(sdk_backoff *b, sdk_backoff_timing timing) {
  memset(b, 0, sizeof *b);
  b->timing = timing;
}

static uint32_t draw(uint64_t window, uint32_t random32) {
  if (window == 0) return 0;
  return (uint32_t)(random32 % window);
}

/* min(cap, base·2ⁿ), at most limit; n then grows. */
static uint64_t step(sdk_backoff *b, uint64_t limit) {
  uint64_t window = b->timing.base_ms;
  for (uint32_t i = 0; i < b->attempt && window < b->timing.cap_ms; i++) window *= 2;
  if (window > b->timing.cap_ms) window = b->timing.cap_ms;
  if (window > limit) window = limit;
  if (b->attempt < 64) b->attempt++;
  return window;
}

uint32_t sdk_backoff_next(sdk_backoff *b, uint32_t random32) { return draw(step(b, UINT64_MAX), random32); }

uint32_t sdk_backoff_next_at(sdk_backoff *b, uint64_t now_ms, uint32_t random32) {
  if (b->quick_until_ms == 0 || now_ms >= b->quick_until_ms) {
    b->quick_until_ms = 0;
    return sdk_backoff_next(b, random32);
  }
  if (b->quick_cap_only) return draw(step(b, b->quick_max_ms), random32);
  /* The window's retries count: when it ends, the backoff goes on from the n reached. */
  if (b->attempt < 64) b->attempt++;
  return b->quick_min_ms + draw((uint64_t)b->quick_max_ms - b->quick_min_ms, random32);
}

void sdk_backoff_reset(sdk_backoff *b) { b->attempt = 0; }

static void window(sdk_backoff *b, uint64_t now_ms, uint32_t window_ms, uint32_t min_ms, uint32_t max_ms,
                   bool cap_only) {
  b->quick_until_ms = now_ms + window_ms;
  if (b->quick_until_ms == 0) b->quick_until_ms = 1; /* 0 means none */
  b->quick_min_ms = min_ms;
  b->quick_max_ms = max_ms > min_ms ? max_ms : min_ms;
  b->quick_cap_only = cap_only;
}

void sdk_backoff_quick(sdk_backoff *b, uint64_t now_ms, uint32_t window_ms, uint32_t min_ms, uint32_t max_ms) {
  window(b, now_ms, window_ms, min_ms, max_ms, false);
}

void sdk_backoff_cap_for(sdk_backoff *b, uint64_t now_ms, uint32_t window_ms, uint32_t max_ms) {
  window(b, now_ms, window_ms, 0, max_ms, true);
}

void sdk_backoff_end_quick(sdk_backoff *b) { b->quick_until_ms = 0; }

/* Digits at reason[*i..] (at most 6, as the server writes them): false when there are none. */
static bool number(const char *reason, size_t len, size_t *i, uint32_t *out) {
  uint32_t value = 0;
  size_t digits = 0;
  while (*i < len && reason[*i] >= '0' && reason[*i] <= '9') {
    if (++digits > 6) return false;
    value = value * 10u + (uint32_t)(reason[*i] - '0');
    (*i)++;
  }
  *out = value;
  return digits > 0;
}

/* Never a tight loop, never longer than the normal backoff's cap. */
static uint32_t clamp_hint(uint32_t ms) {
  if (ms < SDK_RESTART_RETRY_HINT_FLOOR_MS) return SDK_RESTART_RETRY_HINT_FLOOR_MS;
  if (ms > SDK_RESTART_RETRY_HINT_CEILING_MS) return SDK_RESTART_RETRY_HINT_CEILING_MS;
  return ms;
}

bool sdk_backoff_parse_hint(const char *reason, size_t len, uint32_t *min_ms, uint32_t *max_ms) {
  static const char key[] = "retry in ";
  const size_t key_len = sizeof key - 1;
  for (size_t start = 0; start + key_len <= len; start++) {
    if (memcmp(reason + start, key, key_len) != 0) continue;
    size_t i = start + key_len;
    uint32_t lo = 0;
    uint32_t hi = 0;
    if (!number(reason, len, &i, &lo)) continue;
    if (i >= len || reason[i] != '-') continue;
    i++;
    if (!number(reason, len, &i, &hi)) continue;
    if (i + 3 > len || memcmp(reason + i, " ms", 3) != 0) continue;
    lo = clamp_hint(lo);
    hi = clamp_hint(hi);
    if (hi <= lo) return false;
    *min_ms = lo;
    *max_ms = hi;
    return true;
  }
  return false;
}
