/* UTF-8 well-formedness (Unicode table 3-7: no overlong forms, no surrogates, at most U+10FFFF). */
#ifndef SDK_UTF8_H
#define SDK_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The length (1-4) of the well-formed sequence at s[0..n), n >= 1; or 0 with *bad set to the
 * length of its maximal ill-formed subpart (1-3), the bytes one U+FFFD replaces. */
size_t sdk_utf8_sequence(const uint8_t *s, size_t n, size_t *bad);

/* Whether s[0..n) is well-formed UTF-8 throughout (no sequence cut short at the end). */
bool sdk_utf8_valid(const uint8_t *s, size_t n);

#endif /* SDK_UTF8_H */
