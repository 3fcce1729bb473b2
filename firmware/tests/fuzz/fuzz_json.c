/*
 * Parses the input as an object, runs every getter on every field with small and large buffers,
 * then writes each decodable string (and each integer) back with the writer and reads it again:
 * the round trip must give the same value.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sdk_json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char string_big[65536];
static char frame[2 * 6 * 65536 + 64]; /* a key and a string of control characters */
static char again[65536];
static uint8_t bytes_big[65536];
static uint8_t pixels_big[65536 * 3];

static void check(bool ok) {
  if (!ok) abort();
}

/* The input is copied so that reading one byte past it is caught by ASan. */
static void exercise_field(const sdk_json_object *obj, const sdk_json_field *f) {
  char small[4];
  uint8_t small_bytes[2];
  size_t n = 0, bad = 0;
  int64_t i = 0;
  double d = 0;
  bool b = false;
  sdk_json_status st_small = sdk_json_get_string(f, small, sizeof small, &n);
  sdk_json_status st = sdk_json_get_string(f, string_big, sizeof string_big, &n);
  check(st_small == st || st_small == SDK_JSON_ERR_TOO_LONG); /* a small buffer may stop first */
  if (st == SDK_JSON_OK) {
    check(strlen(string_big) == n);
    check(sdk_json_string_equals(f, string_big));
  }
  (void)sdk_json_get_string(f, NULL, 0, &n);
  (void)sdk_json_get_int(f, INT64_MIN, INT64_MAX, &i);
  (void)sdk_json_get_int(f, 0, 255, &i);
  (void)sdk_json_get_number(f, &d);
  (void)sdk_json_get_bool(f, &b);
  (void)sdk_json_get_bytes(f, small_bytes, sizeof small_bytes, &n, &bad);
  (void)sdk_json_get_bytes(f, bytes_big, sizeof bytes_big, &n, &bad);
  (void)sdk_json_get_pixels(f, small_bytes, 0, &n, &bad);
  (void)sdk_json_get_pixels(f, pixels_big, sizeof pixels_big / 3, &n, &bad);

  /* the decoded key finds a field with that key (the last of its duplicates) */
  sdk_json_field key = {.key = "", .key_len = 0, .value = f->key - 1, .value_len = f->key_len + 2,
                        .kind = SDK_JSON_STRING};
  if (sdk_json_get_string(&key, string_big, sizeof string_big, &n) == SDK_JSON_OK) {
    const sdk_json_field *found = sdk_json_find(obj, string_big);
    check(found != NULL && found >= f);
  }
}

static void round_trip_string(const sdk_json_field *f) {
  size_t n = 0;
  if (sdk_json_get_string(f, string_big, sizeof string_big, &n) != SDK_JSON_OK) return;
  sdk_json_writer w;
  sdk_jw_init(&w, frame, sizeof frame);
  sdk_jw_begin_object(&w);
  sdk_jw_key(&w, string_big);
  sdk_jw_string_n(&w, string_big, n);
  sdk_jw_end_object(&w);
  check(sdk_jw_done(&w));
  sdk_json_object obj;
  check(sdk_json_parse_object(frame, w.len, &obj) == SDK_JSON_OK && obj.count == 1);
  const sdk_json_field *back = sdk_json_find(&obj, string_big);
  size_t m = 0;
  check(back != NULL && sdk_json_get_string(back, again, sizeof again, &m) == SDK_JSON_OK);
  check(m == n && memcmp(again, string_big, n) == 0);

  /* a buffer that is too small overflows without writing past its end */
  char tiny[8];
  memset(tiny, 'X', sizeof tiny);
  sdk_jw_init(&w, tiny, 5);
  sdk_jw_string_n(&w, string_big, n);
  check(w.len <= 5 && tiny[5] == 'X' && tiny[7] == 'X');
}

static void round_trip_number(const sdk_json_field *f) {
  int64_t i = 0;
  double d = 0;
  char buf[64];
  sdk_json_writer w;
  sdk_json_object obj;
  if (sdk_json_get_int(f, INT64_MIN, INT64_MAX, &i) == SDK_JSON_OK) {
    sdk_jw_init(&w, buf, sizeof buf);
    sdk_jw_begin_object(&w);
    sdk_jw_key(&w, "v");
    sdk_jw_int(&w, i);
    sdk_jw_end_object(&w);
    int64_t j = 0;
    check(sdk_jw_done(&w) && sdk_json_parse_object(buf, w.len, &obj) == SDK_JSON_OK &&
          sdk_json_get_int(sdk_json_find(&obj, "v"), INT64_MIN, INT64_MAX, &j) == SDK_JSON_OK && i == j);
  }
  if (sdk_json_get_number(f, &d) == SDK_JSON_OK) {
    for (unsigned decimals = 0; decimals <= 10; decimals += 5) {
      sdk_jw_init(&w, buf, sizeof buf);
      sdk_jw_begin_object(&w);
      sdk_jw_key(&w, "v");
      sdk_jw_number(&w, d, decimals);
      sdk_jw_end_object(&w);
      double e = 0;
      check(sdk_jw_done(&w) && sdk_json_parse_object(buf, w.len, &obj) == SDK_JSON_OK &&
            sdk_json_get_number(sdk_json_find(&obj, "v"), &e) == SDK_JSON_OK);
    }
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size == 0 ? 1 : size);
  if (text == NULL) return 0;
  if (size > 0) memcpy(text, data, size);
  sdk_json_object obj;
  sdk_json_status st = sdk_json_parse_object(text, size, &obj);
  if (st == SDK_JSON_OK) {
    for (size_t k = 0; k < obj.count; k++) {
      const sdk_json_field *f = &obj.fields[k];
      check(f->value >= text && f->value + f->value_len <= text + size);
      exercise_field(&obj, f);
      round_trip_string(f);
      round_trip_number(f);
    }
  } else {
    check(obj.count == 0);
  }
  double d = 0;
  (void)sdk_json_parse_number(text, size, &d);
  /* the writer never emits invalid JSON text, whatever bytes it is given */
  sdk_json_writer w;
  sdk_jw_init(&w, frame, sizeof frame);
  sdk_jw_begin_object(&w);
  sdk_jw_key(&w, "raw");
  sdk_jw_string_n(&w, text, size);
  sdk_jw_key(&w, "bytes");
  sdk_jw_bytes(&w, data, size > 1000 ? 1000 : size);
  sdk_jw_end_object(&w);
  check(sdk_jw_done(&w) && sdk_json_parse_object(frame, w.len, &obj) == SDK_JSON_OK);
  free(text);
  return 0;
}
