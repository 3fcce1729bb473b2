/* The reader's number tokens (internal to sdk_json_*.c): grammar, integers, doubles. */
#ifndef SDK_JSON_NUMBER_H
#define SDK_JSON_NUMBER_H

#include "sdk_json.h"

/* The end of the RFC 8259 number token starting at s[i] (within s[0..len)), or i when there is none. */
size_t sdk_json_number_end(const char *s, size_t len, size_t i);
/* The number token s[0..len) as an integer within [min, max]: ERR_RANGE when it is not a number
 * token, not integral, or outside the range. */
sdk_json_status sdk_json_number_to_int(const char *s, size_t len, int64_t min, int64_t max, int64_t *out);

#endif /* SDK_JSON_NUMBER_H */
