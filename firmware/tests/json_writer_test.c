/* The JSON writer, and round trips writer → reader. */
#include <float.h>
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "sdk_json.h"

static const char *write_string(const char *s, size_t n, char *buf, size_t cap) {
  sdk_json_writer w;
  sdk_jw_init(&w, buf, cap);
  sdk_jw_string_n(&w, s, n);
  return sdk_jw_done(&w) ? buf : "<overflow>";
}

static void test_writer(void) {
  char buf[512];
  sdk_json_writer w;
  sdk_jw_init(&w, buf, sizeof buf);
  sdk_jw_begin_object(&w);
  sdk_jw_key(&w, "type");
  sdk_jw_string(&w, "result");
  sdk_jw_key(&w, "id");
  sdk_jw_int(&w, 108);
  sdk_jw_key(&w, "value");
  sdk_jw_begin_object(&w);
  sdk_jw_key(&w, "volts");
  sdk_jw_number(&w, 1.65040, 4);
  sdk_jw_key(&w, "raw");
  sdk_jw_int(&w, 2048);
  sdk_jw_key(&w, "data");
  sdk_jw_bytes(&w, (const uint8_t[]){1, 2, 3, 255}, 4);
  sdk_jw_key(&w, "list");
  sdk_jw_begin_array(&w);
  sdk_jw_bool(&w, true);
  sdk_jw_null(&w);
  sdk_jw_begin_array(&w);
  sdk_jw_end_array(&w);
  sdk_jw_begin_object(&w);
  sdk_jw_end_object(&w);
  sdk_jw_raw(&w, "{\"x\":1}", 7);
  sdk_jw_end_array(&w);
  sdk_jw_end_object(&w);
  CHECK(!sdk_jw_done(&w));
  sdk_jw_end_object(&w);
  CHECK(sdk_jw_done(&w));
  CHECK_STR(buf, "{\"type\":\"result\",\"id\":108,\"value\":{\"volts\":1.6504,\"raw\":2048,\"data\":[1,2,3,255],"
                 "\"list\":[true,null,[],{},{\"x\":1}]}}");
  CHECK(w.len == strlen(buf));
  sdk_json_object obj;
  CHECK(sdk_json_parse_object(buf, w.len, &obj) == SDK_JSON_OK && obj.count == 3);

  /* numbers */
  static const struct {
    double v;
    unsigned decimals;
    const char *text;
  } numbers[] = {
      {1.65040, 4, "1.6504"},   {27.3, 2, "27.3"},       {-0.0, 3, "0"},         {0.0, 0, "0"},
      {-0.0004, 3, "0"},        {-1.5, 0, "-2"},         {2.5, 0, "3"},          {0.125, 2, "0.13"},
      {0.1, 9, "0.1"},          {100.0, 2, "100"},       {1e15, 2, "1000000000000000"},
      {123456.789, 1, "123456.8"}, {-3.3, 9, "-3.3"},    {0.000000001, 9, "0.000000001"},
      {1.05, 9, "1.05"},        {21.75, 1, "21.8"},      {1e18, 3, "1000000000000000000"},
      {1e20, 2, "1e+20"},       {-1.5e300, 2, "-1.5e+300"}, {DBL_MAX, 9, "1.79769313486231e+308"},
      {0.49999999999999994, 0, "0"}, {12.5, 12, "12.5"},
  };
  for (size_t k = 0; k < sizeof numbers / sizeof numbers[0]; k++) {
    sdk_jw_init(&w, buf, sizeof buf);
    sdk_jw_number(&w, numbers[k].v, numbers[k].decimals);
    CHECK_STR(buf, numbers[k].text);
  }
  volatile double zero = 0.0;
  sdk_jw_init(&w, buf, sizeof buf);
  sdk_jw_begin_array(&w);
  sdk_jw_number(&w, 1.0 / zero, 2);
  sdk_jw_number(&w, -1.0 / zero, 2);
  sdk_jw_number(&w, zero / zero, 2);
  sdk_jw_end_array(&w);
  CHECK_STR(buf, "[null,null,null]");

  /* ints */
  sdk_jw_init(&w, buf, sizeof buf);
  sdk_jw_begin_array(&w);
  sdk_jw_int(&w, INT64_MIN);
  sdk_jw_int(&w, INT64_MAX);
  sdk_jw_int(&w, 0);
  sdk_jw_int(&w, -1);
  sdk_jw_end_array(&w);
  CHECK_STR(buf, "[-9223372036854775808,9223372036854775807,0,-1]");

  /* strings: escapes and invalid UTF-8 */
  CHECK_STR(write_string("a\"b\\c/", 6, buf, sizeof buf), "\"a\\\"b\\\\c/\"");
  CHECK_STR(write_string("\n\r\t\b\f\x01\x1f\x7f", 8, buf, sizeof buf), "\"\\n\\r\\t\\b\\f\\u0001\\u001f\x7f\"");
  CHECK_STR(write_string("a\0b", 3, buf, sizeof buf), "\"a\\u0000b\"");
  CHECK_STR(write_string("caf\xc3\xa9 \xf0\x9f\x98\x80", 10, buf, sizeof buf), "\"caf\xc3\xa9 \xf0\x9f\x98\x80\"");
  CHECK_STR(write_string("a\xff" "b", 3, buf, sizeof buf), "\"a\xef\xbf\xbd" "b\"");
  CHECK_STR(write_string("\xc0\x80", 2, buf, sizeof buf), "\"\xef\xbf\xbd\xef\xbf\xbd\"");
  CHECK_STR(write_string("\xe2\x82", 2, buf, sizeof buf), "\"\xef\xbf\xbd\"");        /* truncated: one U+FFFD */
  CHECK_STR(write_string("\xe2\x82x", 3, buf, sizeof buf), "\"\xef\xbf\xbdx\"");
  CHECK_STR(write_string("\xed\xa0\x80", 3, buf, sizeof buf), "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"");
  CHECK_STR(write_string("\xf4\x90\x80\x80", 4, buf, sizeof buf),
            "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"");
  sdk_jw_init(&w, buf, sizeof buf);
  sdk_jw_string(&w, NULL);
  CHECK_STR(buf, "null");

  /* overflow: sticky, never past cap, NUL-terminated while there is room */
  char small[16];
  memset(small, 'X', sizeof small);
  sdk_jw_init(&w, small, 10);
  sdk_jw_begin_object(&w);
  sdk_jw_key(&w, "ab");
  sdk_jw_int(&w, 12);
  CHECK(!w.overflow && w.len == 8);
  CHECK_STR(small, "{\"ab\":12");
  sdk_jw_key(&w, "c");
  CHECK(w.overflow && w.len <= 10);
  sdk_jw_end_object(&w);
  CHECK(w.overflow && !sdk_jw_done(&w));
  CHECK(small[10] == 'X' && small[15] == 'X');
  memset(small, 'X', sizeof small);
  sdk_jw_init(&w, small, 4);
  sdk_jw_string(&w, "ab");
  CHECK(!w.overflow && w.len == 4 && memcmp(small, "\"ab\"", 4) == 0 && small[4] == 'X'); /* exactly full */
  memset(small, 'X', sizeof small);
  sdk_jw_init(&w, small, 4);
  sdk_jw_bytes(&w, (const uint8_t[]){100, 200}, 2);
  CHECK(w.overflow && w.len <= 4 && small[4] == 'X');
  sdk_jw_init(&w, NULL, 0);
  sdk_jw_null(&w);
  CHECK(w.overflow && w.len == 0);
  /* misuse */
  sdk_jw_init(&w, buf, sizeof buf);
  sdk_jw_end_array(&w);
  CHECK(!sdk_jw_done(&w));
  sdk_jw_init(&w, buf, sizeof buf);
  for (int k = 0; k < 64; k++) sdk_jw_begin_array(&w);
  CHECK(w.overflow);
  sdk_jw_init(&w, buf, sizeof buf);
  sdk_jw_key(&w, "k");
  CHECK(w.overflow);
  sdk_jw_init(&w, buf, sizeof buf);
  sdk_jw_begin_object(&w);
  sdk_jw_key(&w, "k");
  sdk_jw_key(&w, "k2");
  CHECK(w.overflow);
  sdk_jw_init(&w, buf, sizeof buf);
  sdk_jw_begin_object(&w);
  sdk_jw_key(&w, "k");
  CHECK(!sdk_jw_done(&w));
  sdk_jw_end_object(&w);
  CHECK(!sdk_jw_done(&w));
}

/* Writes {"v": s[0..n)} and reads it back. */
static bool string_round_trip(const char *s, size_t n) {
  static char buf[1024], out[512];
  sdk_json_writer w;
  sdk_jw_init(&w, buf, sizeof buf);
  sdk_jw_begin_object(&w);
  sdk_jw_key(&w, "v");
  sdk_jw_string_n(&w, s, n);
  sdk_jw_end_object(&w);
  sdk_json_object obj;
  size_t len = 0;
  return sdk_jw_done(&w) && sdk_json_parse_object(buf, w.len, &obj) == SDK_JSON_OK &&
         sdk_json_get_string(sdk_json_find(&obj, "v"), out, sizeof out, &len) == SDK_JSON_OK && len == n &&
         memcmp(out, s, n) == 0;
}

static void test_round_trips(void) {
  char controls[40];
  for (int c = 1; c < 0x20; c++) controls[c - 1] = (char)c;
  memcpy(controls + 31, "\"\\/\x7f", 4);
  CHECK(string_round_trip(controls, 35));
  const char *utf8 = "A \xc2\xa9 \xe2\x82\xac \xef\xbf\xbf \xf0\x90\x80\x80 \xf4\x8f\xbf\xbf \xf0\x9f\x98\x80";
  CHECK(string_round_trip(utf8, strlen(utf8)));
  CHECK(string_round_trip("", 0));
  /* every code point boundary of 1-4 byte sequences */
  static const uint32_t points[] = {0x7f, 0x80, 0x7ff, 0x800, 0xd7ff, 0xe000, 0xfffd, 0xffff, 0x10000, 0x10ffff};
  for (size_t k = 0; k < sizeof points / sizeof points[0]; k++) {
    uint32_t cp = points[k];
    char s[4];
    size_t n;
    if (cp < 0x80) {
      s[0] = (char)cp;
      n = 1;
    } else if (cp < 0x800) {
      s[0] = (char)(0xc0 | cp >> 6), s[1] = (char)(0x80 | (cp & 63)), n = 2;
    } else if (cp < 0x10000) {
      s[0] = (char)(0xe0 | cp >> 12), s[1] = (char)(0x80 | (cp >> 6 & 63)), s[2] = (char)(0x80 | (cp & 63)), n = 3;
    } else {
      s[0] = (char)(0xf0 | cp >> 18), s[1] = (char)(0x80 | (cp >> 12 & 63)), s[2] = (char)(0x80 | (cp >> 6 & 63)),
      s[3] = (char)(0x80 | (cp & 63)), n = 4;
    }
    CHECK(string_round_trip(s, n));
  }

  char buf[256];
  sdk_json_writer w;
  static const int64_t ints[] = {INT64_MIN, INT64_MIN + 1, -1, 0, 1, 255, INT64_MAX - 1, INT64_MAX};
  for (size_t k = 0; k < sizeof ints / sizeof ints[0]; k++) {
    sdk_jw_init(&w, buf, sizeof buf);
    sdk_jw_begin_object(&w);
    sdk_jw_key(&w, "v");
    sdk_jw_int(&w, ints[k]);
    sdk_jw_end_object(&w);
    sdk_json_object obj;
    int64_t v = 0;
    CHECK(sdk_json_parse_object(buf, w.len, &obj) == SDK_JSON_OK &&
          sdk_json_get_int(sdk_json_find(&obj, "v"), INT64_MIN, INT64_MAX, &v) == SDK_JSON_OK && v == ints[k]);
  }
  static const double numbers[] = {0.5, 0.25, 3.3, 0.1, 1.6504, 27.3, -21.75, 1000000, 123456789.125, 1e15, 1e-9};
  for (size_t k = 0; k < sizeof numbers / sizeof numbers[0]; k++) {
    sdk_jw_init(&w, buf, sizeof buf);
    sdk_jw_begin_object(&w);
    sdk_jw_key(&w, "v");
    sdk_jw_number(&w, numbers[k], 9);
    sdk_jw_end_object(&w);
    sdk_json_object obj;
    double v = 0;
    CHECK(sdk_json_parse_object(buf, w.len, &obj) == SDK_JSON_OK &&
          sdk_json_get_number(sdk_json_find(&obj, "v"), &v) == SDK_JSON_OK && v == numbers[k]);
  }
  static char big[65536];
  static uint8_t bytes[12000], back[12000];
  for (size_t k = 0; k < sizeof bytes; k++) bytes[k] = (uint8_t)(k ^ (k >> 8));
  sdk_jw_init(&w, big, sizeof big);
  sdk_jw_begin_object(&w);
  sdk_jw_key(&w, "data");
  sdk_jw_bytes(&w, bytes, sizeof bytes);
  sdk_jw_end_object(&w);
  CHECK(sdk_jw_done(&w) && w.len < 65536);
  sdk_json_object obj;
  size_t len = 0, bad = 0;
  CHECK(sdk_json_parse_object(big, w.len, &obj) == SDK_JSON_OK &&
        sdk_json_get_bytes(sdk_json_find(&obj, "data"), back, sizeof back, &len, &bad) == SDK_JSON_OK &&
        len == sizeof bytes && memcmp(bytes, back, len) == 0);
}

int main(void) {
  test_writer();
  test_round_trips();
  return check_exit("json_writer");
}
