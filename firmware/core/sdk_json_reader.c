/*
 * The reader: one pass validates the whole text (RFC 8259, strings must be well-formed UTF-8)
 * with a bitmask of open containers instead of recursion, and keeps only the top-level fields.
 * Getters then walk one field's text again, decoding straight into the caller's buffer.
 */
#include <string.h>

#include "sdk_json.h"
#include "sdk_json_number.h"
#include "sdk_utf8.h"

static bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

static size_t skip_ws(const char *s, size_t len, size_t i) {
  while (i < len && is_ws(s[i])) i++;
  return i;
}

static int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* The four hex digits at s[i..i+4) (i + 4 <= end), or -1. */
static int32_t hex4(const char *s, size_t end, size_t i) {
  if (end < 4 || i > end - 4) return -1;
  int32_t v = 0;
  for (size_t k = 0; k < 4; k++) {
    int h = hex_value(s[i + k]);
    if (h < 0) return -1;
    v = v * 16 + h;
  }
  return v;
}

/* *pos is just past an opening quote; on success it is just past the closing one. */
static bool scan_string(const char *s, size_t len, size_t *pos) {
  size_t i = *pos;
  while (i < len) {
    unsigned char c = (unsigned char)s[i];
    if (c == '"') {
      *pos = i + 1;
      return true;
    }
    if (c < 0x20) return false;
    if (c == '\\') {
      if (i + 1 >= len) return false;
      char e = s[i + 1];
      if (e == 'u') {
        if (hex4(s, len, i + 2) < 0) return false;
        i += 6;
      } else if (e == '"' || e == '\\' || e == '/' || e == 'b' || e == 'f' || e == 'n' || e == 'r' ||
                 e == 't') {
        i += 2;
      } else {
        return false;
      }
    } else if (c < 0x80) {
      i++;
    } else {
      size_t bad;
      size_t n = sdk_utf8_sequence((const uint8_t *)s + i, len - i, &bad);
      if (n == 0) return false;
      i += n;
    }
  }
  return false;
}

static bool scan_literal(const char *s, size_t len, size_t *pos, const char *word, size_t n) {
  if (len - *pos < n || memcmp(s + *pos, word, n) != 0) return false;
  *pos += n;
  return true;
}

/* A key, then ':', with whitespace around; *pos is at the whitespace before the key. */
static bool scan_key_colon(const char *s, size_t len, size_t *pos) {
  size_t i = skip_ws(s, len, *pos);
  if (i >= len || s[i] != '"') return false;
  i++;
  if (!scan_string(s, len, &i)) return false;
  i = skip_ws(s, len, i);
  if (i >= len || s[i] != ':') return false;
  *pos = i + 1;
  return true;
}

/* One value starting at s[*pos] (no leading whitespace); *pos ends just past it. */
static sdk_json_status scan_value(const char *s, size_t len, size_t *pos) {
  uint64_t objects = 0; /* bit d: the container at depth d + 1 is an object (else an array) */
  unsigned depth = 0;
  size_t i = *pos;
  for (;;) {
    i = skip_ws(s, len, i);
    if (i >= len) return SDK_JSON_ERR_SYNTAX;
    char c = s[i];
    bool complete = true; /* a whole value ended at i */
    if (c == '{' || c == '[') {
      if (depth == SDK_JSON_MAX_DEPTH) return SDK_JSON_ERR_TOO_DEEP;
      bool object = c == '{';
      uint64_t bit = UINT64_C(1) << depth;
      objects = object ? objects | bit : objects & ~bit;
      depth++;
      i = skip_ws(s, len, i + 1);
      if (i < len && s[i] == (object ? '}' : ']')) {
        depth--;
        i++;
      } else {
        if (object && !scan_key_colon(s, len, &i)) return SDK_JSON_ERR_SYNTAX;
        complete = false;
      }
    } else if (c == '"') {
      i++;
      if (!scan_string(s, len, &i)) return SDK_JSON_ERR_SYNTAX;
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      size_t end = sdk_json_number_end(s, len, i);
      if (end == i) return SDK_JSON_ERR_SYNTAX;
      i = end;
    } else if (!scan_literal(s, len, &i, "true", 4) && !scan_literal(s, len, &i, "false", 5) &&
               !scan_literal(s, len, &i, "null", 4)) {
      return SDK_JSON_ERR_SYNTAX;
    }
    while (complete) {
      if (depth == 0) {
        *pos = i;
        return SDK_JSON_OK;
      }
      i = skip_ws(s, len, i);
      if (i >= len) return SDK_JSON_ERR_SYNTAX;
      bool object = (objects >> (depth - 1)) & 1u;
      if (s[i] == ',') {
        i++;
        if (object && !scan_key_colon(s, len, &i)) return SDK_JSON_ERR_SYNTAX;
        complete = false;
      } else if (s[i] == (object ? '}' : ']')) {
        i++;
        depth--;
      } else {
        return SDK_JSON_ERR_SYNTAX;
      }
    }
  }
}

static sdk_json_kind kind_of(char c) {
  switch (c) {
  case '{': return SDK_JSON_OBJECT;
  case '[': return SDK_JSON_ARRAY;
  case '"': return SDK_JSON_STRING;
  case 't':
  case 'f': return SDK_JSON_BOOL;
  case 'n': return SDK_JSON_NULL;
  default: return SDK_JSON_NUMBER;
  }
}

static sdk_json_status parse_fields(const char *text, size_t len, sdk_json_object *out) {
  size_t i = skip_ws(text, len, 0);
  if (i >= len) return SDK_JSON_ERR_SYNTAX;
  if (text[i] != '{') {
    sdk_json_status st = scan_value(text, len, &i);
    if (st != SDK_JSON_OK) return st;
    return skip_ws(text, len, i) == len ? SDK_JSON_ERR_NOT_OBJECT : SDK_JSON_ERR_SYNTAX;
  }
  bool too_many = false;
  i = skip_ws(text, len, i + 1);
  if (i < len && text[i] == '}') {
    i++;
  } else {
    for (;;) {
      if (i >= len || text[i] != '"') return SDK_JSON_ERR_SYNTAX;
      size_t key = i + 1;
      i = key;
      if (!scan_string(text, len, &i)) return SDK_JSON_ERR_SYNTAX;
      size_t key_end = i - 1;
      i = skip_ws(text, len, i);
      if (i >= len || text[i] != ':') return SDK_JSON_ERR_SYNTAX;
      i = skip_ws(text, len, i + 1);
      size_t value = i;
      sdk_json_status st = scan_value(text, len, &i);
      if (st != SDK_JSON_OK) return st;
      if (out->count < SDK_JSON_MAX_FIELDS) {
        sdk_json_field *f = &out->fields[out->count++];
        f->key = text + key;
        f->key_len = key_end - key;
        f->value = text + value;
        f->value_len = i - value;
        f->kind = kind_of(text[value]);
      } else {
        too_many = true;
      }
      i = skip_ws(text, len, i);
      if (i < len && text[i] == ',') {
        i = skip_ws(text, len, i + 1);
      } else if (i < len && text[i] == '}') {
        i++;
        break;
      } else {
        return SDK_JSON_ERR_SYNTAX;
      }
    }
  }
  if (skip_ws(text, len, i) != len) return SDK_JSON_ERR_SYNTAX;
  return too_many ? SDK_JSON_ERR_TOO_MANY_FIELDS : SDK_JSON_OK;
}

sdk_json_status sdk_json_parse_object(const char *text, size_t len, sdk_json_object *out) {
  out->count = 0;
  if (text == NULL) return SDK_JSON_ERR_SYNTAX;
  sdk_json_status st = parse_fields(text, len, out);
  if (st != SDK_JSON_OK) out->count = 0;
  return st;
}

/* ---------------- strings */

static size_t put_utf8(uint32_t cp, char out[4]) {
  if (cp < 0x80) {
    out[0] = (char)cp;
    return 1;
  }
  if (cp < 0x800) {
    out[0] = (char)(0xC0 | (cp >> 6));
    out[1] = (char)(0x80 | (cp & 0x3F));
    return 2;
  }
  if (cp < 0x10000) {
    out[0] = (char)(0xE0 | (cp >> 12));
    out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[2] = (char)(0x80 | (cp & 0x3F));
    return 3;
  }
  out[0] = (char)(0xF0 | (cp >> 18));
  out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
  out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
  out[3] = (char)(0x80 | (cp & 0x3F));
  return 4;
}

/* Decodes the character at s[*i] (i < end, end = the closing quote) into out[0..*n). */
static sdk_json_status decode_char(const char *s, size_t end, size_t *i, char out[4], size_t *n) {
  char c = s[*i];
  if (c != '\\') {
    out[0] = c;
    *n = 1;
    *i += 1;
    return SDK_JSON_OK;
  }
  if (*i + 1 >= end) return SDK_JSON_ERR_SYNTAX;
  char e = s[*i + 1];
  if (e != 'u') {
    static const char from[] = "\"\\/bfnrt";
    static const char to[] = "\"\\/\b\f\n\r\t";
    const char *hit = memchr(from, e, sizeof from - 1);
    if (hit == NULL) return SDK_JSON_ERR_SYNTAX;
    out[0] = to[hit - from];
    *n = 1;
    *i += 2;
    return SDK_JSON_OK;
  }
  int32_t u = hex4(s, end, *i + 2);
  if (u < 0) return SDK_JSON_ERR_SYNTAX;
  *i += 6;
  uint32_t cp = (uint32_t)u;
  if (cp == 0 || (cp >= 0xDC00 && cp <= 0xDFFF)) return SDK_JSON_ERR_RANGE;
  if (cp >= 0xD800 && cp <= 0xDBFF) {
    if (*i + 1 >= end || s[*i] != '\\' || s[*i + 1] != 'u') return SDK_JSON_ERR_RANGE;
    int32_t low = hex4(s, end, *i + 2);
    if (low < 0) return SDK_JSON_ERR_SYNTAX;
    if (low < 0xDC00 || low > 0xDFFF) return SDK_JSON_ERR_RANGE;
    *i += 6;
    cp = 0x10000 + ((cp - 0xD800) << 10) + ((uint32_t)low - 0xDC00);
  }
  *n = put_utf8(cp, out);
  return SDK_JSON_OK;
}

/* True when the escaped text s[0..end) decodes to exactly the C string name. */
static bool decoded_equals(const char *s, size_t end, const char *name) {
  size_t i = 0, at = 0;
  while (i < end) {
    char b[4];
    size_t n;
    if (decode_char(s, end, &i, b, &n) != SDK_JSON_OK) return false;
    for (size_t k = 0; k < n; k++, at++) {
      if (name[at] != b[k]) return false; /* decoded bytes are never NUL, so this stops at name's end */
    }
  }
  return name[at] == '\0';
}

static bool is_string(const sdk_json_field *f) {
  return f != NULL && f->kind == SDK_JSON_STRING && f->value_len >= 2;
}

const sdk_json_field *sdk_json_find(const sdk_json_object *obj, const char *name) {
  if (obj == NULL || name == NULL) return NULL;
  for (size_t k = obj->count; k > 0; k--) {
    const sdk_json_field *f = &obj->fields[k - 1];
    if (decoded_equals(f->key, f->key_len, name)) return f;
  }
  return NULL;
}

sdk_json_status sdk_json_get_string(const sdk_json_field *f, char *out, size_t cap, size_t *out_len) {
  if (!is_string(f)) return SDK_JSON_ERR_TYPE;
  if (out == NULL) cap = 0;
  const char *s = f->value + 1;
  size_t end = f->value_len - 2;
  size_t i = 0, n = 0;
  sdk_json_status st = SDK_JSON_OK;
  while (i < end) {
    char b[4];
    size_t k;
    st = decode_char(s, end, &i, b, &k);
    if (st != SDK_JSON_OK) break;
    if (n + k >= cap) {
      st = SDK_JSON_ERR_TOO_LONG;
      break;
    }
    memcpy(out + n, b, k);
    n += k;
  }
  if (st == SDK_JSON_OK && n >= cap) st = SDK_JSON_ERR_TOO_LONG; /* no room for the NUL */
  if (st != SDK_JSON_OK) {
    if (cap > 0) out[0] = '\0';
    return st;
  }
  out[n] = '\0';
  if (out_len != NULL) *out_len = n;
  return SDK_JSON_OK;
}

bool sdk_json_string_equals(const sdk_json_field *f, const char *s) {
  return is_string(f) && s != NULL && decoded_equals(f->value + 1, f->value_len - 2, s);
}

/* ---------------- scalars */

sdk_json_status sdk_json_get_int(const sdk_json_field *f, int64_t min, int64_t max, int64_t *out) {
  if (f == NULL || f->kind != SDK_JSON_NUMBER) return SDK_JSON_ERR_TYPE;
  int64_t v;
  sdk_json_status st = sdk_json_number_to_int(f->value, f->value_len, min, max, &v);
  if (st == SDK_JSON_OK && out != NULL) *out = v;
  return st;
}

sdk_json_status sdk_json_get_number(const sdk_json_field *f, double *out) {
  if (f == NULL || f->kind != SDK_JSON_NUMBER) return SDK_JSON_ERR_TYPE;
  double v;
  if (!sdk_json_parse_number(f->value, f->value_len, &v)) return SDK_JSON_ERR_RANGE;
  if (out != NULL) *out = v;
  return SDK_JSON_OK;
}

sdk_json_status sdk_json_get_bool(const sdk_json_field *f, bool *out) {
  if (f == NULL || f->kind != SDK_JSON_BOOL || f->value_len == 0) return SDK_JSON_ERR_TYPE;
  if (out != NULL) *out = f->value[0] == 't';
  return SDK_JSON_OK;
}

/* ---------------- arrays of bytes */

/* A byte element at s[*i]; *i ends past it and the whitespace after it. */
static bool read_byte(const char *s, size_t end, size_t *i, uint8_t *out) {
  size_t stop = sdk_json_number_end(s, end, *i);
  int64_t v;
  if (stop == *i || sdk_json_number_to_int(s + *i, stop - *i, 0, 255, &v) != SDK_JSON_OK) return false;
  *out = (uint8_t)v;
  *i = skip_ws(s, end, stop);
  return true;
}

/* After an element: past ',' (true, *done false) or past ']' (true, *done true). */
static bool next_element(const char *s, size_t end, size_t *i, bool *done) {
  if (*i >= end) return false;
  *done = s[*i] == ']';
  if (!*done && s[*i] != ',') return false;
  *i = skip_ws(s, end, *i + 1);
  return true;
}

sdk_json_status sdk_json_get_bytes(const sdk_json_field *f, uint8_t *out, size_t cap, size_t *out_len,
                                   size_t *bad_index) {
  if (f == NULL || f->kind != SDK_JSON_ARRAY || f->value_len < 2) return SDK_JSON_ERR_TYPE;
  const char *s = f->value;
  size_t end = f->value_len;
  size_t i = skip_ws(s, end, 1), n = 0;
  bool done = s[i] == ']';
  while (!done) {
    uint8_t b;
    if (!read_byte(s, end, &i, &b)) {
      if (bad_index != NULL) *bad_index = n;
      return SDK_JSON_ERR_RANGE;
    }
    if (n >= cap || out == NULL) return SDK_JSON_ERR_TOO_LONG;
    out[n++] = b;
    if (!next_element(s, end, &i, &done)) return SDK_JSON_ERR_SYNTAX;
  }
  if (out_len != NULL) *out_len = n;
  return SDK_JSON_OK;
}

/* One [r, g, b] element at s[*i]; *i ends past it and the whitespace after it. */
static bool read_pixel(const char *s, size_t end, size_t *i, uint8_t rgb[3]) {
  size_t j = *i;
  if (j >= end || s[j] != '[') return false;
  j = skip_ws(s, end, j + 1);
  for (size_t k = 0; k < 3; k++) {
    if (!read_byte(s, end, &j, &rgb[k])) return false;
    if (j >= end || s[j] != (k < 2 ? ',' : ']')) return false;
    j = skip_ws(s, end, j + 1);
  }
  *i = j;
  return true;
}

sdk_json_status sdk_json_get_pixels(const sdk_json_field *f, uint8_t *out, size_t max_pixels,
                                    size_t *out_pixels, size_t *bad_index) {
  if (f == NULL || f->kind != SDK_JSON_ARRAY || f->value_len < 2) return SDK_JSON_ERR_TYPE;
  const char *s = f->value;
  size_t end = f->value_len;
  size_t i = skip_ws(s, end, 1), n = 0;
  bool done = s[i] == ']';
  while (!done) {
    uint8_t rgb[3];
    if (!read_pixel(s, end, &i, rgb)) {
      if (bad_index != NULL) *bad_index = n;
      return SDK_JSON_ERR_RANGE;
    }
    if (n >= max_pixels || out == NULL) return SDK_JSON_ERR_TOO_LONG;
    memcpy(out + 3 * n, rgb, 3);
    n++;
    if (!next_element(s, end, &i, &done)) return SDK_JSON_ERR_SYNTAX;
  }
  if (out_pixels != NULL) *out_pixels = n;
  return SDK_JSON_OK;
}
