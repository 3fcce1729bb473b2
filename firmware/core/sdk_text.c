#include "sdk_text.h"

#include <string.h>

void sdk_text_init(sdk_text *t, char *buf, size_t cap) {
  t->buf = buf;
  t->cap = cap;
  t->len = 0;
  if (cap > 0) buf[0] = '\0';
}

void sdk_text_add_n(sdk_text *t, const char *s, size_t n) {
  if (t->cap == 0) return;
  size_t room = t->cap - 1 - t->len;
  if (n > room) n = room;
  memcpy(t->buf + t->len, s, n);
  t->len += n;
  t->buf[t->len] = '\0';
}

void sdk_text_add(sdk_text *t, const char *s) { sdk_text_add_n(t, s, strlen(s)); }

void sdk_text_int(sdk_text *t, int64_t v) {
  char digits[21];
  size_t n = 0;
  uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
  do {
    digits[n++] = (char)('0' + (u % 10));
    u /= 10;
  } while (u > 0);
  if (v < 0) sdk_text_add_n(t, "-", 1);
  while (n > 0) sdk_text_add_n(t, &digits[--n], 1);
}

void sdk_text_hex2(sdk_text *t, uint32_t v) {
  static const char hex[] = "0123456789abcdef";
  char digits[8];
  size_t n = 0;
  do {
    digits[n++] = hex[v & 0xFu];
    v >>= 4;
  } while (v > 0);
  if (n < 2) digits[n++] = '0';
  while (n > 0) sdk_text_add_n(t, &digits[--n], 1);
}
