/* Base64 (RFC 4648 §4): the standard alphabet with '=' padding. */
#include "sdk_ws.h"

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

size_t sdk_base64_encode(const uint8_t *in, size_t len, char *out, size_t cap) {
  size_t groups = len / 3 + (len % 3 != 0);
  if (groups > (SIZE_MAX - 1) / 4 || cap < groups * 4 + 1) return 0;
  size_t o = 0;
  for (size_t i = 0; i < len; i += 3) {
    size_t n = len - i < 3 ? len - i : 3;
    uint32_t v = (uint32_t)in[i] << 16;
    if (n > 1) v |= (uint32_t)in[i + 1] << 8;
    if (n > 2) v |= in[i + 2];
    out[o++] = alphabet[(v >> 18) & 63u];
    out[o++] = alphabet[(v >> 12) & 63u];
    out[o++] = n > 1 ? alphabet[(v >> 6) & 63u] : '=';
    out[o++] = n > 2 ? alphabet[v & 63u] : '=';
  }
  out[o] = '\0';
  return o;
}
