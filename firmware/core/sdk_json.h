/*
 * JSON for the device protocol's flat messages: a reader that indexes one object's top-level
 * fields in a single pass (validating the whole text, nested values included, without recursion
 * and without a token per element), getters that decode a field straight into the caller's
 * buffer, and a writer that appends to a fixed buffer. No heap, no libc number parsing or
 * formatting (strtod/printf may allocate on newlib).
 */
#ifndef SDK_JSON_H
#define SDK_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Top-level fields kept per object; more makes sdk_json_parse_object fail (TOO_MANY_FIELDS). */
#define SDK_JSON_MAX_FIELDS 32
/* Nesting depth accepted inside a value (arrays and objects). */
#define SDK_JSON_MAX_DEPTH 64

typedef enum {
  SDK_JSON_OK = 0,
  SDK_JSON_ERR_SYNTAX,          /* not valid JSON (RFC 8259), or trailing bytes after the value */
  SDK_JSON_ERR_NOT_OBJECT,      /* valid JSON, but not an object */
  SDK_JSON_ERR_TOO_DEEP,        /* nesting deeper than SDK_JSON_MAX_DEPTH */
  SDK_JSON_ERR_TOO_MANY_FIELDS, /* more than SDK_JSON_MAX_FIELDS top-level fields */
  SDK_JSON_ERR_TYPE,            /* a getter was used on a field of another kind */
  SDK_JSON_ERR_RANGE,           /* a number out of the asked range, or not an integer */
  SDK_JSON_ERR_TOO_LONG         /* the decoded value does not fit the caller's buffer */
} sdk_json_status;

typedef enum {
  SDK_JSON_NULL,
  SDK_JSON_BOOL,
  SDK_JSON_NUMBER,
  SDK_JSON_STRING,
  SDK_JSON_ARRAY,
  SDK_JSON_OBJECT
} sdk_json_kind;

/* One top-level field: spans into the parsed text (which must outlive the object). */
typedef struct {
  const char *key; /* between the quotes, escapes not decoded */
  size_t key_len;
  const char *value; /* the whole value text: a string includes its quotes */
  size_t value_len;
  sdk_json_kind kind;
} sdk_json_field;

typedef struct {
  sdk_json_field fields[SDK_JSON_MAX_FIELDS];
  size_t count;
} sdk_json_object;

/* Parses text[0..len) (not NUL-terminated) as one JSON object, surrounding whitespace allowed. */
sdk_json_status sdk_json_parse_object(const char *text, size_t len, sdk_json_object *out);

/* The field whose decoded key equals name (the last one when a key repeats), or NULL. The getters
 * below take that NULL (a missing field) and answer ERR_TYPE (false for string_equals). */
const sdk_json_field *sdk_json_find(const sdk_json_object *obj, const char *name);

/* A string field decoded (escapes, \u with surrogate pairs → UTF-8) into out, NUL-terminated.
 * *out_len (may be NULL) gets its length. \u0000 is refused (ERR_RANGE). */
sdk_json_status sdk_json_get_string(const sdk_json_field *f, char *out, size_t cap, size_t *out_len);
/* True when f is a string whose decoded text equals s. */
bool sdk_json_string_equals(const sdk_json_field *f, const char *s);

/* A number that is an integer (1, 1.0, 1e3) within [min, max]. */
sdk_json_status sdk_json_get_int(const sdk_json_field *f, int64_t min, int64_t max, int64_t *out);
/* Any finite number (ERR_RANGE beyond ±DBL_MAX): the nearest double, except that only 19
 * significant digits are kept and a subnormal result (below 2.2e-308) may be 1 ulp off
 * (sdk_json_number.c says how). */
sdk_json_status sdk_json_get_number(const sdk_json_field *f, double *out);
sdk_json_status sdk_json_get_bool(const sdk_json_field *f, bool *out);

/* An array of integers 0-255 decoded into out (at most cap). ERR_TOO_LONG when longer, ERR_RANGE
 * (with *bad_index set, may be NULL) when an element is not a byte. */
sdk_json_status sdk_json_get_bytes(const sdk_json_field *f, uint8_t *out, size_t cap, size_t *out_len,
                                   size_t *bad_index);
/* An array of [r, g, b] byte triples decoded into out as r,g,b,r,g,b… (at most max_pixels).
 * ERR_RANGE with *bad_index when a pixel is not three bytes. */
sdk_json_status sdk_json_get_pixels(const sdk_json_field *f, uint8_t *out, size_t max_pixels,
                                    size_t *out_pixels, size_t *bad_index);

/* Parses a number token text[0..len) exactly as the reader does (for tests and vectors). */
bool sdk_json_parse_number(const char *text, size_t len, double *out);

/* ---------------- writer */

typedef struct {
  char *buf;
  size_t cap;
  size_t len;
  bool overflow;       /* something did not fit: the text is incomplete */
  uint64_t first_mask; /* bit d set: nothing written yet at depth d (no comma needed) */
  uint8_t depth;
  bool after_key;
} sdk_json_writer;

void sdk_jw_init(sdk_json_writer *w, char *buf, size_t cap);
void sdk_jw_begin_object(sdk_json_writer *w);
void sdk_jw_end_object(sdk_json_writer *w);
void sdk_jw_begin_array(sdk_json_writer *w);
void sdk_jw_end_array(sdk_json_writer *w);
void sdk_jw_key(sdk_json_writer *w, const char *name);
/* Escapes ", \ and control characters; invalid UTF-8 becomes U+FFFD, so the frame stays valid. */
void sdk_jw_string(sdk_json_writer *w, const char *s);
void sdk_jw_string_n(sdk_json_writer *w, const char *s, size_t n);
void sdk_jw_int(sdk_json_writer *w, int64_t v);
/* Rounded to max_decimals (0-9) decimals, trailing zeros dropped: 1.65040 → 1.6504. Non-finite → null. */
void sdk_jw_number(sdk_json_writer *w, double v, unsigned max_decimals);
void sdk_jw_bool(sdk_json_writer *w, bool v);
void sdk_jw_null(sdk_json_writer *w);
void sdk_jw_bytes(sdk_json_writer *w, const uint8_t *data, size_t n);
/* Appends an already valid JSON value as it is. */
void sdk_jw_raw(sdk_json_writer *w, const char *json, size_t n);
/* True when nothing overflowed and every object/array was closed. */
bool sdk_jw_done(const sdk_json_writer *w);

#endif /* SDK_JSON_H */
