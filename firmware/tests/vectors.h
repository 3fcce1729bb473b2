/*
 * Reads the shared test vectors (packages/protocol/vectors/ JSON Lines files, SDK_VECTORS_DIR): one flat JSON
 * object a line whose values are strings or booleans. Strings are decoded (\" \\ \/ \b \f \n \r \t
 * and \uXXXX below U+0800 as UTF-8); booleans read as "true" / "false".
 */
#ifndef SDK_VECTORS_H
#define SDK_VECTORS_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define VECTOR_LINE_MAX 20000
#define VECTOR_PAIRS_MAX 16

typedef struct {
  size_t count;
  const char *keys[VECTOR_PAIRS_MAX];
  const char *values[VECTOR_PAIRS_MAX];
  char pool[VECTOR_LINE_MAX];
} vector_row;

static inline FILE *vector_open(const char *name) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", SDK_VECTORS_DIR, name);
  FILE *f = fopen(path, "r");
  if (!f) fprintf(stderr, "cannot open %s\n", path);
  return f;
}

static inline int vector_hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

static inline const char *vector_skip_space(const char *p) {
  while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
  return p;
}

/* Decodes the JSON string at p (after its opening quote) into row->pool; NULL on a syntax error. */
static inline const char *vector_string(const char *p, vector_row *row, size_t *used, const char **value) {
  char *out = row->pool + *used;
  size_t n = 0;
  size_t room = sizeof row->pool - *used;
  while (*p != '"') {
    if (*p == '\0' || n + 4 >= room) return NULL;
    if (*p != '\\') {
      out[n++] = *p++;
      continue;
    }
    p++;
    switch (*p) {
      case '"': case '\\': case '/': out[n++] = *p; break;
      case 'b': out[n++] = '\b'; break;
      case 'f': out[n++] = '\f'; break;
      case 'n': out[n++] = '\n'; break;
      case 'r': out[n++] = '\r'; break;
      case 't': out[n++] = '\t'; break;
      case 'u': {
        unsigned cp = 0;
        for (int i = 1; i <= 4; i++) {
          int d = vector_hex_digit(p[i]);
          if (d < 0) return NULL;
          cp = cp * 16 + (unsigned)d;
        }
        p += 4;
        if (cp < 0x80) {
          out[n++] = (char)cp;
        } else if (cp < 0x800) {
          out[n++] = (char)(0xC0 | (cp >> 6));
          out[n++] = (char)(0x80 | (cp & 0x3F));
        } else {
          return NULL;
        }
        break;
      }
      default: return NULL;
    }
    p++;
  }
  out[n++] = '\0';
  *value = out;
  *used += n;
  return p + 1;
}

/* Parses one line; false on anything but a flat object of string or boolean values. */
static inline bool vector_parse(const char *line, vector_row *row) {
  size_t used = 0;
  row->count = 0;
  const char *p = vector_skip_space(line);
  if (*p++ != '{') return false;
  p = vector_skip_space(p);
  if (*p == '}') return true;
  for (;;) {
    if (row->count == VECTOR_PAIRS_MAX || *p++ != '"') return false;
    p = vector_string(p, row, &used, &row->keys[row->count]);
    if (!p) return false;
    p = vector_skip_space(p);
    if (*p++ != ':') return false;
    p = vector_skip_space(p);
    if (*p == '"') {
      p = vector_string(p + 1, row, &used, &row->values[row->count]);
      if (!p) return false;
    } else if (strncmp(p, "true", 4) == 0) {
      row->values[row->count] = "true";
      p += 4;
    } else if (strncmp(p, "false", 5) == 0) {
      row->values[row->count] = "false";
      p += 5;
    } else {
      return false;
    }
    row->count++;
    p = vector_skip_space(p);
    if (*p == '}') return true;
    if (*p++ != ',') return false;
    p = vector_skip_space(p);
  }
}

/* The value of key, or NULL when the row lacks it. */
static inline const char *vector_get(const vector_row *row, const char *key) {
  for (size_t i = 0; i < row->count; i++) {
    if (strcmp(row->keys[i], key) == 0) return row->values[i];
  }
  return NULL;
}

/* Reads the next line of f into line[VECTOR_LINE_MAX]; false at the end. */
static inline bool vector_next_line(FILE *f, char *line) {
  for (;;) {
    if (!fgets(line, VECTOR_LINE_MAX, f)) return false;
    if (line[0] != '\n' && line[0] != '\0') return true;
  }
}

/* Decodes hex into out[cap]; the byte count, or (size_t)-1 on bad hex or overflow. */
static inline size_t vector_hex(const char *hex, unsigned char *out, size_t cap) {
  size_t len = strlen(hex);
  if (len % 2 || len / 2 > cap) return (size_t)-1;
  for (size_t i = 0; i < len / 2; i++) {
    int hi = vector_hex_digit(hex[2 * i]), lo = vector_hex_digit(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return (size_t)-1;
    out[i] = (unsigned char)(hi * 16 + lo);
  }
  return len / 2;
}

#endif /* SDK_VECTORS_H */
