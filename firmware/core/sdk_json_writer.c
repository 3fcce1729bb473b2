/*
 * The writer: appends to a fixed buffer, commas placed by a bitmask of "nothing written yet at
 * this depth". Once something does not fit, `overflow` stays set and nothing more is written.
 * Misuse (closing more than was opened, nesting past 63, a key without its value, a key outside
 * any container) sets it too.
 */
#include <float.h>
#include <string.h>

#include "sdk_json.h"
#include "sdk_utf8.h"

#define WRITER_MAX_DEPTH 63 /* first_mask has one bit per depth 0-63 */

static const uint64_t pow10_u64[10] = {1,      10,      100,      1000,      10000,
                                       100000, 1000000, 10000000, 100000000, 1000000000};
static const double pow10_f64[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                     1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                     1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

static void put(sdk_json_writer *w, const char *s, size_t n) {
  if (w->overflow || n == 0) return;
  if (n > w->cap - w->len) {
    w->overflow = true;
    return;
  }
  memcpy(w->buf + w->len, s, n);
  w->len += n;
  if (w->len < w->cap) w->buf[w->len] = '\0';
}

static void before_value(sdk_json_writer *w) {
  if (w->after_key) {
    w->after_key = false;
    return;
  }
  uint64_t bit = UINT64_C(1) << w->depth;
  if (!(w->first_mask & bit)) put(w, ",", 1);
  w->first_mask &= ~bit;
}

void sdk_jw_init(sdk_json_writer *w, char *buf, size_t cap) {
  w->buf = buf;
  w->cap = buf == NULL ? 0 : cap;
  w->len = 0;
  w->overflow = false;
  w->first_mask = 1;
  w->depth = 0;
  w->after_key = false;
  if (w->cap > 0) w->buf[0] = '\0';
}

static void begin(sdk_json_writer *w, char open) {
  before_value(w);
  if (w->depth >= WRITER_MAX_DEPTH) {
    w->overflow = true;
    return;
  }
  put(w, &open, 1);
  w->depth++;
  w->first_mask |= UINT64_C(1) << w->depth;
}

static void end(sdk_json_writer *w, char close) {
  if (w->depth == 0 || w->after_key) {
    w->overflow = true;
    return;
  }
  w->depth--;
  put(w, &close, 1);
}

void sdk_jw_begin_object(sdk_json_writer *w) { begin(w, '{'); }
void sdk_jw_end_object(sdk_json_writer *w) { end(w, '}'); }
void sdk_jw_begin_array(sdk_json_writer *w) { begin(w, '['); }
void sdk_jw_end_array(sdk_json_writer *w) { end(w, ']'); }

static void put_escape(sdk_json_writer *w, uint8_t c) {
  static const char hex[] = "0123456789abcdef";
  char e[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
  switch (c) {
  case '"': put(w, "\\\"", 2); return;
  case '\\': put(w, "\\\\", 2); return;
  case '\n': put(w, "\\n", 2); return;
  case '\r': put(w, "\\r", 2); return;
  case '\t': put(w, "\\t", 2); return;
  case '\b': put(w, "\\b", 2); return;
  case '\f': put(w, "\\f", 2); return;
  default: put(w, e, 6); return;
  }
}

static void put_string(sdk_json_writer *w, const char *s, size_t n) {
  const uint8_t *u = (const uint8_t *)s;
  size_t run = 0, i = 0; /* s[run..i) is copied as it is */
  put(w, "\"", 1);
  while (i < n) {
    uint8_t c = u[i];
    if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
      i++;
      continue;
    }
    if (c >= 0x80) {
      size_t bad = 1;
      size_t k = sdk_utf8_sequence(u + i, n - i, &bad);
      if (k > 0) {
        i += k;
        continue;
      }
      put(w, s + run, i - run);
      put(w, "\xEF\xBF\xBD", 3);
      i += bad;
    } else {
      put(w, s + run, i - run);
      put_escape(w, c);
      i++;
    }
    run = i;
  }
  put(w, s + run, i - run);
  put(w, "\"", 1);
}

void sdk_jw_key(sdk_json_writer *w, const char *name) {
  if (w->after_key || w->depth == 0) { /* a key needs an object and a value after the last key */
    w->overflow = true;
    return;
  }
  before_value(w);
  put_string(w, name == NULL ? "" : name, name == NULL ? 0 : strlen(name));
  put(w, ":", 1);
  w->after_key = true;
}

void sdk_jw_string_n(sdk_json_writer *w, const char *s, size_t n) {
  if (s == NULL) {
    sdk_jw_null(w);
    return;
  }
  before_value(w);
  put_string(w, s, n);
}

void sdk_jw_string(sdk_json_writer *w, const char *s) { sdk_jw_string_n(w, s, s == NULL ? 0 : strlen(s)); }

/* Writes v's decimal digits at the end of out[0..20) and returns where they start. */
static size_t format_u64(uint64_t v, char out[20]) {
  size_t i = 20;
  do {
    out[--i] = (char)('0' + v % 10);
    v /= 10;
  } while (v != 0);
  return i;
}

static void put_u64(sdk_json_writer *w, uint64_t v) {
  char digits[20];
  size_t start = format_u64(v, digits);
  put(w, digits + start, 20 - start);
}

void sdk_jw_int(sdk_json_writer *w, int64_t v) {
  before_value(w);
  if (v < 0) put(w, "-", 1);
  put_u64(w, v < 0 ? (uint64_t)(-(v + 1)) + 1 : (uint64_t)v);
}

/* a >= 9e18: 15 significant digits in exponent form, 1.2345e+20. */
static void put_large(sdk_json_writer *w, double a) {
  int exponent = 14;
  while (a >= 1e37) {
    a /= 1e22;
    exponent += 22;
  }
  unsigned k = 0;
  while (k < 22 && a >= pow10_f64[15] * pow10_f64[k]) k++;
  a /= pow10_f64[k];
  exponent += (int)k;
  uint64_t m = (uint64_t)a;
  if (a - (double)m >= 0.5) m++;
  while (m >= 1000000000000000u) { /* rounding reached 10^15 */
    m /= 10;
    exponent++;
  }
  if (exponent == 308 && m > 179769313486231u) m = 179769313486231u; /* stays below DBL_MAX */
  while (m % 10 == 0) m /= 10;
  char digits[20];
  size_t start = format_u64(m, digits);
  put(w, digits + start, 1);
  if (20 - start > 1) {
    put(w, ".", 1);
    put(w, digits + start + 1, 20 - start - 1);
  }
  put(w, "e+", 2);
  put_u64(w, (uint64_t)exponent);
}

void sdk_jw_number(sdk_json_writer *w, double v, unsigned max_decimals) {
  if (v != v || v > DBL_MAX || v < -DBL_MAX) {
    sdk_jw_null(w);
    return;
  }
  before_value(w);
  unsigned decimals = max_decimals > 9 ? 9 : max_decimals;
  double a = v < 0 ? -v : v;
  while (decimals > 0 && a * pow10_f64[decimals] >= 9e18) decimals--;
  double x = a * pow10_f64[decimals];
  if (x >= 9e18) {
    if (v < 0) put(w, "-", 1);
    put_large(w, a);
    return;
  }
  uint64_t scaled = (uint64_t)x;
  if (x - (double)scaled >= 0.5) scaled++;
  if (scaled == 0) { /* -0.0 and negatives that round to zero */
    put(w, "0", 1);
    return;
  }
  while (decimals > 0 && scaled % 10 == 0) {
    scaled /= 10;
    decimals--;
  }
  if (v < 0) put(w, "-", 1);
  put_u64(w, scaled / pow10_u64[decimals]);
  if (decimals > 0) {
    char digits[20];
    format_u64(scaled % pow10_u64[decimals] + pow10_u64[decimals], digits); /* 1 then zero-padded */
    put(w, ".", 1);
    put(w, digits + 20 - decimals, decimals);
  }
}

void sdk_jw_bool(sdk_json_writer *w, bool v) {
  before_value(w);
  put(w, v ? "true" : "false", v ? 4 : 5);
}

void sdk_jw_null(sdk_json_writer *w) {
  before_value(w);
  put(w, "null", 4);
}

void sdk_jw_bytes(sdk_json_writer *w, const uint8_t *data, size_t n) {
  before_value(w);
  char chunk[64];
  size_t used = 0;
  chunk[used++] = '[';
  for (size_t k = 0; k < n; k++) {
    if (used > sizeof chunk - 5) {
      put(w, chunk, used);
      used = 0;
    }
    if (k > 0) chunk[used++] = ',';
    uint8_t b = data[k];
    if (b >= 100) chunk[used++] = (char)('0' + b / 100);
    if (b >= 10) chunk[used++] = (char)('0' + b / 10 % 10);
    chunk[used++] = (char)('0' + b % 10);
  }
  chunk[used++] = ']';
  put(w, chunk, used);
}

void sdk_jw_raw(sdk_json_writer *w, const char *json, size_t n) {
  before_value(w);
  if (json != NULL) put(w, json, n);
}

bool sdk_jw_done(const sdk_json_writer *w) { return !w->overflow && w->depth == 0 && !w->after_key; }
