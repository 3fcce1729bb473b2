#include "sdk_utf8.h"

size_t sdk_utf8_sequence(const uint8_t *s, size_t n, size_t *bad) {
  uint8_t c = s[0];
  if (c < 0x80) return 1;
  size_t follow;
  uint8_t lo = 0x80, hi = 0xBF; /* the range of the second byte; later ones are always 80-BF */
  if (c >= 0xC2 && c <= 0xDF) {
    follow = 1;
  } else if (c >= 0xE0 && c <= 0xEF) {
    follow = 2;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    follow = 3;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    *bad = 1;
    return 0;
  }
  for (size_t k = 1; k <= follow; k++) {
    if (k >= n || s[k] < lo || s[k] > hi) {
      *bad = k;
      return 0;
    }
    lo = 0x80;
    hi = 0xBF;
  }
  return follow + 1;
}

bool sdk_utf8_valid(const uint8_t *s, size_t n) {
  size_t bad = 0;
  for (size_t i = 0; i < n;) {
    size_t len = sdk_utf8_sequence(s + i, n - i, &bad);
    if (len == 0) return false;
    i += len;
  }
  return true;
}
