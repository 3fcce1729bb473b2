/* Exponential backoff with full jitter (docs/protocol.md, "Reconnecting"). */
#ifndef SDK_BACKOFF_H
#define SDK_BACKOFF_H

#include <stdint.h>

typedef struct {
  uint32_t base_ms; /* 250 */
  uint32_t cap_ms;  /* 30000 */
} sdk_backoff_timing;

typedef struct {
  sdk_backoff_timing timing;
  uint32_t attempt; /* n: retries since the last connection that lasted 10 s */
} sdk_backoff;

void sdk_backoff_init(sdk_backoff *b, sdk_backoff_timing timing);
/* The n-th delay: uniform in [0, min(cap, base·2ⁿ)), drawn from random32; n then grows. */
uint32_t sdk_backoff_next(sdk_backoff *b, uint32_t random32);
void sdk_backoff_reset(sdk_backoff *b);

#endif /* SDK_BACKOFF_H */
