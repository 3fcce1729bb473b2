#include "sdk_backoff.h"

void sdk_backoff_init(sdk_backoff *b, sdk_backoff_timing timing) {
  b->timing = timing;
  b->attempt = 0;
}

uint32_t sdk_backoff_next(sdk_backoff *b, uint32_t random32) {
  uint64_t window = b->timing.base_ms;
  for (uint32_t i = 0; i < b->attempt && window < b->timing.cap_ms; i++) window *= 2;
  if (window > b->timing.cap_ms) window = b->timing.cap_ms;
  if (b->attempt < 64) b->attempt++;
  if (window == 0) return 0;
  return (uint32_t)(random32 % window);
}

void sdk_backoff_reset(sdk_backoff *b) { b->attempt = 0; }
