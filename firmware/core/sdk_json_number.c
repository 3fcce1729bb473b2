/*
 * Number tokens without strtod. A double is built from up to 19 significant digits held in a
 * uint64 (the 20th rounds the 19th; trailing zeros go to the exponent) and a decimal exponent:
 * - mantissa <= 2^53 and exponent within ±22 (every decimal of up to 15 significant digits with
 *   a moderate exponent, e.g. 0.1, 3.3, 1.6504, 1e22, 80e-23): one IEEE operation on exactly
 *   representable operands, so the result is the nearest double (Clinger's fast path);
 * - otherwise the mantissa is scaled in double-double arithmetic (about 106 bits) by a table of
 *   powers of ten and rounded once: the nearest double except for a value within about 2^-100
 *   of a midpoint between two doubles, and subnormal results (below 2.2e-308), which may be 1 ulp off.
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

/* Double-double arithmetic (Dekker, no FMA): a value is hi + lo with |lo| <= ulp(hi) / 2, about
 * 106 bits, so a chain of ×10^k steps stays far more precise than the final rounding needs. */
typedef struct {
  double hi, lo;
} dd;

/* 10^-k as hi + lo, k = 1..22 (hi is the nearest double, lo the rest). */
static const dd inverse_pow10[23] = {
    {1.0, 0.0},
    {0.1, -5.551115123125783e-18},
    {0.01, -2.0816681711721684e-19},
    {0.001, -2.0816681711721686e-20},
    {0.0001, -4.79217360238593e-21},
    {1e-05, -8.180305391403131e-22},
    {1e-06, 4.525188817411374e-23},
    {1e-07, 4.525188817411374e-24},
    {1e-08, -2.092256083012847e-25},
    {1e-09, -6.228159145777985e-26},
    {1e-10, -3.643219731549774e-27},
    {1e-11, 6.050303071806019e-28},
    {1e-12, 2.0113352370744385e-29},
    {1e-13, -3.037374556340037e-30},
    {1e-14, 1.1806906454401013e-32},
    {1e-15, -7.770539987666108e-32},
    {1e-16, 2.0902213275965398e-33},
    {1e-17, -7.154242405462192e-34},
    {1e-18, -7.154242405462193e-35},
    {1e-19, 2.475407316473987e-36},
    {1e-20, 5.484672854579043e-37},
    {1e-21, 9.246254777210363e-38},
    {1e-22, -4.859677432657087e-39},
};

static void split(double a, double *high, double *low) {
  double t = 134217729.0 * a; /* 2^27 + 1; |a| stays below 1e300 here */
  *high = t - (t - a);
  *low = a - *high;
}

static dd dd_mul(dd a, dd b) {
  double p = a.hi * b.hi;
  double ah, al, bh, bl;
  split(a.hi, &ah, &al);
  split(b.hi, &bh, &bl);
  double err = ((ah * bh - p) + ah * bl + al * bh) + al * bl;
  err += a.hi * b.lo + a.lo * b.hi;
  dd r;
  r.hi = p + err;
  r.lo = err - (r.hi - p);
  return r;
}

/* mantissa × 10^e with one final rounding. */
static double scale(uint64_t mantissa, int64_t e) {
  dd v;
  v.hi = (double)mantissa;
  v.lo = (double)(int64_t)(mantissa - (uint64_t)v.hi); /* exact: the rounding error of hi */
  /* Near either end of the range the work is done 2^64 away from it (exact power-of-two steps),
   * so no intermediate product overflows or loses bits to subnormals. */
  double post = 1.0;
  if (e > 280) {
    v.hi *= 0x1p-64;
    v.lo *= 0x1p-64;
    post = 0x1p64;
  } else if (e < -280) {
    v.hi *= 0x1p64;
    v.lo *= 0x1p64;
    post = 0x1p-64;
  }
  if (e >= 0) {
    /* the small factor first, so no operand of a split comes near the top of the range */
    v = dd_mul(v, (dd){exact_pow10[e % 22], 0.0});
    for (; e >= 22; e -= 22) v = dd_mul(v, (dd){1e22, 0.0});
  } else {
    v = dd_mul(v, inverse_pow10[(-e) % 22]);
    for (; e <= -22; e += 22) v = dd_mul(v, inverse_pow10[22]);
  }
  return (v.hi + v.lo) * post;
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
  while (mantissa != 0 && mantissa % 10 == 0) { /* 80e-23 is 8e-22: within the exact range */
    mantissa /= 10;
    e++;
  }
  double v;
  if (mantissa == 0 || e < -350) {
    v = 0.0; /* below half the smallest subnormal even for a 20-digit mantissa */
  } else if (e > 310) {
    return false;
  } else if (mantissa <= (UINT64_C(1) << 53) && e >= -22 && e <= 22) {
    v = e >= 0 ? (double)mantissa * exact_pow10[e] : (double)mantissa / exact_pow10[-e];
  } else if (mantissa <= (UINT64_C(1) << 53) && e > 22 && e <= 22 + 15 &&
             mantissa <= (UINT64_C(1) << 53) / (uint64_t)exact_pow10[e - 22]) {
    v = (double)(mantissa * (uint64_t)exact_pow10[e - 22]) * 1e22; /* still exact operands */
  } else {
    v = scale(mantissa, e);
  }
  if (!(v <= DBL_MAX)) return false; /* overflow: infinity, or NaN from the scaling */
  *out = p.negative ? -v : v;
  return true;
}
