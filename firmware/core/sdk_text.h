/* Building short texts (error messages) in a fixed buffer, without printf. */
#ifndef SDK_TEXT_H
#define SDK_TEXT_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
  char *buf;
  size_t cap; /* including the NUL */
  size_t len;
} sdk_text;

void sdk_text_init(sdk_text *t, char *buf, size_t cap);
/* Each appends what fits and keeps buf NUL-terminated. */
void sdk_text_add(sdk_text *t, const char *s);
void sdk_text_add_n(sdk_text *t, const char *s, size_t n);
void sdk_text_int(sdk_text *t, int64_t v);
void sdk_text_hex2(sdk_text *t, uint32_t v); /* at least two lowercase hex digits: 0x50 → "50" */

#endif /* SDK_TEXT_H */
