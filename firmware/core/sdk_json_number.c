/*
 * Number tokens without strtod. A double is built from up to 19 significant digits held in a
 * uint64 (the 20th rounds the 19th) and a decimal exponent, scaled by exactly representable
 * powers of ten (1e0-1e22):
 * - mantissa <= 2^53 and exponent within ±22 (every decimal of up to 15 significant digits with
 *   a moderate exponent, e.g. 0.1, 3.3, 1.6504, 1e22): one IEEE operation on exact operands, so
 *   the result is the nearest double (Clinger's fast path);
 * - a longer mantissa within ±22: at most 1 ulp off;
 * - beyond: each further ×/÷ 1e22 adds at most 0.5 ulp (about 7 ulp at the ends of the range).
 * Integers are read from the digits themselves, so all of int64 is exact.
 */
#include "sdk_json_number.h"

#include <float.h>

#define EXPONENT_LIMIT 100000 /* |exponent| saturates here; far beyond any double */

static const double exact_pow10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                       1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                       1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

typedef struct {
  bool negative;
  const char *int_digits;
  size_t int_count;
  const char *frac_digits;
  size_t frac_count;
  int32_t exponent;
} number_parts;

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

static size_t skip_digits(const char *s, size_t len, size_t i) {
  while (i < len && is_digit(s[i])) i++;
  return i;
}

size_t sdk_json_number_end(const char *s, size_t len, size_t i) {
  size_t start = i;
  if (i < len && s[i] == '-') i++;
  if (i >= len) return start;
  if (s[i] == '0') {
    i++;
  } else if (s[i] >= '1' && s[i] <= '9') {
    i = skip_digits(s, len, i);
  } else {
    return start;
  }
  if (i < len && s[i] == '.') {
    size_t digits = i + 1;
    i = skip_digits(s, len, digits);
    if (i == digits) return start;
  }
  if (i < len && (s[i] == 'e' || s[i] == 'E')) {
    i++;
    if (i < len && (s[i] == '+' || s[i] == '-')) i++;
    size_t digits = i;
    i = skip_digits(s, len, digits);
    if (i == digits) return start;
  }
  return i;
}

static bool split_number(const char *s, size_t len, number_parts *p) {
  if (len == 0 || sdk_json_number_end(s, len, 0) != len) return false;
  size_t i = 0;
  p->negative = s[0] == '-';
  if (p->negative) i++;
  p->int_digits = s + i;
  size_t end = skip_digits(s, len, i);
  p->int_count = end - i;
  i = end;
  p->frac_digits = s + i;
  p->frac_count = 0;
  if (i < len && s[i] == '.') {
    end = skip_digits(s, len, i + 1);
    p->frac_digits = s + i + 1;
    p->frac_count = end - i - 1;
    i = end;
  }
  p->exponent = 0;
  if (i < len) { /* e or E */
    i++;
    bool negative = s[i] == '-';
    if (s[i] == '+' || s[i] == '-') i++;
    int32_t e = 0;
    for (; i < len; i++) {
      if (e < EXPONENT_LIMIT) e = e * 10 + (s[i] - '0');
    }
    if (e > EXPONENT_LIMIT) e = EXPONENT_LIMIT;
    p->exponent = negative ? -e : e;
  }
  return true;
}

static unsigned digit_at(const number_parts *p, size_t j) {
  char c = j < p->int_count ? p->int_digits[j] : p->frac_digits[j - p->int_count];
  return (unsigned)(c - '0');
}

sdk_json_status sdk_json_number_to_int(const char *s, size_t len, int64_t min, int64_t max, int64_t *out) {
  number_parts p;
  if (!split_number(s, len, &p)) return SDK_JSON_ERR_RANGE;
  /* digits before index `whole` are the integer part once the exponent is applied */
  int64_t whole = (int64_t)p.int_count + p.exponent;
  size_t total = p.int_count + p.frac_count;
  uint64_t magnitude = 0;
  for (size_t j = 0; j < total; j++) {
    unsigned d = digit_at(&p, j);
    if ((int64_t)j < whole) {
      if (magnitude > (UINT64_MAX - d) / 10) return SDK_JSON_ERR_RANGE;
      magnitude = magnitude * 10 + d;
    } else if (d != 0) {
      return SDK_JSON_ERR_RANGE;
    }
  }
  for (int64_t j = (int64_t)total; magnitude != 0 && j < whole; j++) {
    if (magnitude > UINT64_MAX / 10) return SDK_JSON_ERR_RANGE;
    magnitude *= 10;
  }
  int64_t v;
  if (p.negative) {
    if (magnitude > (uint64_t)INT64_MAX + 1) return SDK_JSON_ERR_RANGE;
    v = magnitude == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)magnitude;
  } else {
    if (magnitude > (uint64_t)INT64_MAX) return SDK_JSON_ERR_RANGE;
    v = (int64_t)magnitude;
  }
  if (v < min || v > max) return SDK_JSON_ERR_RANGE;
  *out = v;
  return SDK_JSON_OK;
}

static double scale(double v, int64_t e) {
  while (e > 22) {
    v *= 1e22;
    e -= 22;
  }
  while (e < -22) {
    v /= 1e22;
    e += 22;
  }
  return e >= 0 ? v * exact_pow10[e] : v / exact_pow10[-e];
}

bool sdk_json_parse_number(const char *text, size_t len, double *out) {
  number_parts p;
  if (text == NULL || !split_number(text, len, &p)) return false;
  uint64_t mantissa = 0;
  unsigned significant = 0;
  int64_t e = p.exponent;
  bool round_up = false;
  size_t total = p.int_count + p.frac_count;
  for (size_t j = 0; j < total; j++) {
    unsigned d = digit_at(&p, j);
    bool fraction = j >= p.int_count;
    if (mantissa == 0 && d == 0) {
      if (fraction) e--;
    } else if (significant < 19) {
      mantissa = mantissa * 10 + d;
      significant++;
      if (fraction) e--;
    } else {
      if (significant == 19) round_up = d >= 5;
      significant = 20;
      if (!fraction) e++;
    }
  }
  if (round_up) mantissa++; /* at most 10^19, still within uint64 */
  double v;
  if (mantissa == 0 || e < -350) {
    v = 0.0; /* below half the smallest subnormal even for a 20-digit mantissa */
  } else if (e > 310) {
    return false;
  } else if (mantissa <= (UINT64_C(1) << 53) && e > 22 && e <= 22 + 15 &&
             mantissa <= (UINT64_C(1) << 53) / (uint64_t)exact_pow10[e - 22]) {
    v = (double)(mantissa * (uint64_t)exact_pow10[e - 22]) * 1e22; /* still exact operands */
  } else {
    v = scale((double)mantissa, e);
  }
  if (v > DBL_MAX) return false;
  *out = p.negative ? -v : v;
  return true;
}
