/* The JSON reader: protocol messages, malformed input, strings, numbers, large arrays. */
#include <float.h>
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "sdk_json.h"

static sdk_json_status parse(const char *text, sdk_json_object *obj) {
  return sdk_json_parse_object(text, strlen(text), obj);
}

static sdk_json_status status_of(const char *text) {
  sdk_json_object obj;
  return parse(text, &obj);
}

/* The value of a one-field object {"v": <value>}. */
static const sdk_json_field *field_of(const char *value, sdk_json_object *obj, char *text, size_t cap) {
  snprintf(text, cap, "{\"v\":%s}", value);
  if (parse(text, obj) != SDK_JSON_OK) return NULL;
  return sdk_json_find(obj, "v");
}

static bool number_is(const char *token, double expected) {
  double v = -12345.0;
  return sdk_json_parse_number(token, strlen(token), &v) && v == expected;
}

static void test_protocol_messages(void) {
  sdk_json_object obj;
  const char *ws = "{\"type\":\"ws2812_write\",\"id\":118,\"pin\":22,\"pixels\":[[255,0,0],[0,255,0],[0,0,255]]}";
  CHECK(parse(ws, &obj) == SDK_JSON_OK);
  CHECK(obj.count == 4);
  CHECK(sdk_json_string_equals(sdk_json_find(&obj, "type"), "ws2812_write"));
  CHECK(!sdk_json_string_equals(sdk_json_find(&obj, "type"), "ws2812_writ"));
  CHECK(!sdk_json_string_equals(sdk_json_find(&obj, "type"), "ws2812_write_"));
  int64_t id = 0;
  CHECK(sdk_json_get_int(sdk_json_find(&obj, "id"), 0, INT64_MAX, &id) == SDK_JSON_OK && id == 118);
  uint8_t rgb[9];
  size_t pixels = 0, bad = 99;
  CHECK(sdk_json_get_pixels(sdk_json_find(&obj, "pixels"), rgb, 3, &pixels, &bad) == SDK_JSON_OK);
  CHECK(pixels == 3);
  CHECK(rgb[0] == 255 && rgb[1] == 0 && rgb[4] == 255 && rgb[8] == 255 && rgb[7] == 0);
  CHECK(sdk_json_get_pixels(sdk_json_find(&obj, "pixels"), rgb, 2, &pixels, &bad) == SDK_JSON_ERR_TOO_LONG);
  CHECK(sdk_json_find(&obj, "missing") == NULL);
  CHECK(sdk_json_get_string(sdk_json_find(&obj, "missing"), (char[4]){0}, 4, NULL) == SDK_JSON_ERR_TYPE);

  const char *pin = "{ \"type\": \"gpio_write\", \"id\": 102, \"pin\": \"LED\", \"value\": 1 }";
  CHECK(parse(pin, &obj) == SDK_JSON_OK);
  const sdk_json_field *p = sdk_json_find(&obj, "pin");
  CHECK(p != NULL && p->kind == SDK_JSON_STRING);
  CHECK(sdk_json_get_int(p, 0, 29, &id) == SDK_JSON_ERR_TYPE);
  char s[8];
  size_t n = 0;
  CHECK(sdk_json_get_string(p, s, sizeof s, &n) == SDK_JSON_OK && n == 3);
  CHECK_STR(s, "LED");
  CHECK(sdk_json_get_string(p, s, 3, &n) == SDK_JSON_ERR_TOO_LONG && s[0] == '\0');
  CHECK(sdk_json_get_string(p, s, 4, &n) == SDK_JSON_OK);

  const char *pwm = "{ \"type\": \"pwm\", \"id\": 107, \"pin\": 15, \"frequency\": 1000, \"duty\": 0.25 }";
  CHECK(parse(pwm, &obj) == SDK_JSON_OK);
  double duty = 0;
  CHECK(sdk_json_get_number(sdk_json_find(&obj, "duty"), &duty) == SDK_JSON_OK && duty == 0.25);
  CHECK(sdk_json_get_int(sdk_json_find(&obj, "duty"), 0, 1, &id) == SDK_JSON_ERR_RANGE);

  const char *i2c = "{ \"type\": \"i2c_write\", \"id\": 111, \"bus\": 0, \"address\": 80, \"data\": [0, 104, 105] }";
  CHECK(parse(i2c, &obj) == SDK_JSON_OK);
  uint8_t data[4];
  CHECK(sdk_json_get_bytes(sdk_json_find(&obj, "data"), data, sizeof data, &n, &bad) == SDK_JSON_OK);
  CHECK(n == 3 && data[0] == 0 && data[1] == 104 && data[2] == 105);
  CHECK(sdk_json_get_bytes(sdk_json_find(&obj, "data"), data, 2, &n, &bad) == SDK_JSON_ERR_TOO_LONG);
  CHECK(sdk_json_get_bytes(sdk_json_find(&obj, "bus"), data, 2, &n, &bad) == SDK_JSON_ERR_TYPE);

  const char *welcome = "{ \"type\": \"welcome\", \"protocol\": 1, \"deviceId\": \"dev_k3vq7w2mxa5rjz4nbp6e\", "
                        "\"serverTime\": \"2026-07-14T09:12:30.120Z\", \"heartbeatSeconds\": 15 }";
  CHECK(parse(welcome, &obj) == SDK_JSON_OK && obj.count == 5);
  CHECK(sdk_json_get_int(sdk_json_find(&obj, "heartbeatSeconds"), 1, 3600, &id) == SDK_JSON_OK && id == 15);

  const char *result = "{ \"type\": \"result\", \"id\": 108, \"value\": { \"volts\": 1.6504, \"raw\": 2048 } }";
  CHECK(parse(result, &obj) == SDK_JSON_OK && obj.count == 3);
  const sdk_json_field *value = sdk_json_find(&obj, "value");
  CHECK(value != NULL && value->kind == SDK_JSON_OBJECT && value->value[0] == '{' &&
        value->value[value->value_len - 1] == '}');
  CHECK(parse("{ \"type\": \"result\", \"id\": 101, \"value\": null }", &obj) == SDK_JSON_OK);
  CHECK(sdk_json_find(&obj, "value")->kind == SDK_JSON_NULL);
  bool flag = false;
  CHECK(parse("{\"a\":true,\"b\":false}", &obj) == SDK_JSON_OK);
  CHECK(sdk_json_get_bool(sdk_json_find(&obj, "a"), &flag) == SDK_JSON_OK && flag);
  CHECK(sdk_json_get_bool(sdk_json_find(&obj, "b"), &flag) == SDK_JSON_OK && !flag);
  CHECK(sdk_json_get_bool(sdk_json_find(&obj, "c"), &flag) == SDK_JSON_ERR_TYPE);
  CHECK(parse(" \t\r\n{}\n ", &obj) == SDK_JSON_OK && obj.count == 0);
}

static void test_malformed(void) {
  static const char *syntax[] = {
      "",
      "   ",
      "{",
      "{\"type\":\"pwm\"",
      "{\"type\":\"pwm\",}",
      "{\"a\":[1,2,]}",
      "{\"a\":[,1]}",
      "{\"a\":01}",
      "{\"a\":-01}",
      "{\"a\":1.}",
      "{\"a\":.5}",
      "{\"a\":1e}",
      "{\"a\":1e+}",
      "{\"a\":+1}",
      "{\"a\":-}",
      "{\"a\":0x10}",
      "{\"a\":NaN}",
      "{\"a\":Infinity}",
      "{\"a\":\"\\x\"}",
      "{\"a\":\"\\u12\"}",
      "{\"a\":\"\\u12G4\"}",
      "{\"a\":\"\\\"}",
      "{\"a\":\"tab\there\"}",
      "{\"a\":\"nl\nhere\"}",
      "{\"a\":\"unterminated}",
      "{\"a\":1}x",
      "{\"a\":1}{}",
      "{\"a\" 1}",
      "{\"a\":1 \"b\":2}",
      "{a:1}",
      "{'a':1}",
      "{\"a\":tru}",
      "{\"a\":nul}",
      "{\"a\":True}",
      "{\"a\":[1,2}",
      "{\"a\":{\"b\":1]}",
      "{\"a\":{\"b\"}}",
      "{\"a\":{1:2}}",
      "{\"a\":\"\xff\"}",
      "{\"a\":\"\xc0\x80\"}",         /* overlong NUL */
      "{\"a\":\"\xed\xa0\x80\"}",     /* an encoded surrogate */
      "{\"a\":\"\xf4\x90\x80\x80\"}", /* above U+10FFFF */
      "{\"a\":\"\xe2\x82\"}",         /* truncated sequence */
      "{\"a\":1}\x00",
      "\xef\xbb\xbf{}", /* a byte order mark is not JSON */
      "{\"a\":1,\"a\"}",
  };
  for (size_t k = 0; k < sizeof syntax / sizeof syntax[0]; k++) {
    sdk_json_object obj;
    size_t len = strlen(syntax[k]);
    if (k == sizeof syntax / sizeof syntax[0] - 3) len = 8; /* the text with its NUL byte */
    sdk_json_status st = sdk_json_parse_object(syntax[k], len, &obj);
    CHECK(st == SDK_JSON_ERR_SYNTAX && obj.count == 0);
    if (st != SDK_JSON_ERR_SYNTAX) fprintf(stderr, "  accepted: %s\n", syntax[k]);
  }
  /* every proper prefix of a valid message is refused */
  const char *msg = "{\"type\":\"spi_transfer\",\"id\":115,\"data\":[159,0,0,0],\"cs\":17,\"x\":{\"y\":[true,null]}}";
  size_t bad_prefixes = 0;
  for (size_t len = 0; len < strlen(msg); len++) {
    sdk_json_object obj;
    if (sdk_json_parse_object(msg, len, &obj) != SDK_JSON_ERR_SYNTAX) bad_prefixes++;
  }
  CHECK(bad_prefixes == 0);
  CHECK(status_of(msg) == SDK_JSON_OK);

  CHECK(status_of("[1,2]") == SDK_JSON_ERR_NOT_OBJECT);
  CHECK(status_of(" \"text\" ") == SDK_JSON_ERR_NOT_OBJECT);
  CHECK(status_of("42") == SDK_JSON_ERR_NOT_OBJECT);
  CHECK(status_of("null") == SDK_JSON_ERR_NOT_OBJECT);
  CHECK(status_of("[1,2") == SDK_JSON_ERR_SYNTAX);
  CHECK(status_of("[1] x") == SDK_JSON_ERR_SYNTAX);

  /* 64 levels inside a field's value are accepted, 65 are too deep */
  char deep[400];
  for (int levels = 63; levels <= 66; levels++) {
    size_t n = 0;
    n += (size_t)snprintf(deep + n, sizeof deep - n, "{\"a\":");
    for (int k = 0; k < levels; k++) deep[n++] = k % 2 ? '[' : '{', n += k % 2 ? 0 : (size_t)snprintf(deep + n, sizeof deep - n, "\"k\":");
    deep[n++] = '1';
    for (int k = levels - 1; k >= 0; k--) deep[n++] = k % 2 ? ']' : '}';
    deep[n++] = '}';
    deep[n] = '\0';
    CHECK(status_of(deep) == (levels <= SDK_JSON_MAX_DEPTH ? SDK_JSON_OK : SDK_JSON_ERR_TOO_DEEP));
  }
  char arrays[200];
  memset(arrays, '[', 65);
  memset(arrays + 65, ']', 65);
  arrays[130] = '\0';
  CHECK(status_of(arrays) == SDK_JSON_ERR_TOO_DEEP);
  memset(arrays, '[', 64);
  memset(arrays + 64, ']', 64);
  arrays[128] = '\0';
  CHECK(status_of(arrays) == SDK_JSON_ERR_NOT_OBJECT); /* 64 levels */

  /* 32 fields are fine, the 33rd is too many (and a syntax error still wins) */
  char many[1024];
  size_t n = 0;
  many[n++] = '{';
  for (int k = 0; k < 33; k++) n += (size_t)snprintf(many + n, sizeof many - n, "%s\"f%d\":%d", k ? "," : "", k, k);
  many[n++] = '}';
  many[n] = '\0';
  sdk_json_object obj;
  CHECK(parse(many, &obj) == SDK_JSON_ERR_TOO_MANY_FIELDS && obj.count == 0);
  many[n - 1] = ',';
  CHECK(parse(many, &obj) == SDK_JSON_ERR_SYNTAX);
  n = 0;
  many[n++] = '{';
  for (int k = 0; k < 32; k++) n += (size_t)snprintf(many + n, sizeof many - n, "%s\"f%d\":%d", k ? "," : "", k, k);
  many[n++] = '}';
  many[n] = '\0';
  CHECK(parse(many, &obj) == SDK_JSON_OK && obj.count == 32);
  int64_t v = 0;
  CHECK(sdk_json_get_int(sdk_json_find(&obj, "f31"), 0, 100, &v) == SDK_JSON_OK && v == 31);
}

static void test_strings(void) {
  sdk_json_object obj;
  char text[256], out[64];
  size_t n = 0;
  /* keys are compared decoded; the last duplicate wins */
  CHECK(parse("{\"t\\u0079pe\":\"a\",\"type\":\"b\",\"t\\u0079pe\":\"c\"}", &obj) == SDK_JSON_OK);
  CHECK(sdk_json_string_equals(sdk_json_find(&obj, "type"), "c"));
  CHECK(parse("{\"t\\u0079pe\":\"x\"}", &obj) == SDK_JSON_OK);
  CHECK(sdk_json_string_equals(sdk_json_find(&obj, "type"), "x"));
  CHECK(sdk_json_find(&obj, "typ") == NULL && sdk_json_find(&obj, "types") == NULL);
  CHECK(parse("{\"\":1}", &obj) == SDK_JSON_OK && sdk_json_find(&obj, "") != NULL);

  struct {
    const char *json;
    const char *decoded;
  } cases[] = {
      {"\"\"", ""},
      {"\"plain\"", "plain"},
      {"\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"", "\"\\/\b\f\n\r\t"},
      {"\"\\u0041\\u00e9\\u20AC\"", "A\xc3\xa9\xe2\x82\xac"},
      {"\"\\ud83d\\ude00\"", "\xf0\x9f\x98\x80"},           /* U+1F600 */
      {"\"\\uD800\\uDC00\"", "\xf0\x90\x80\x80"},           /* U+10000 */
      {"\"\\uDBFF\\uDFFF\"", "\xf4\x8f\xbf\xbf"},           /* U+10FFFF */
      {"\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"},
      {"\"\\u007f\\u0001\"", "\x7f\x01"},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    const sdk_json_field *f = field_of(cases[k].json, &obj, text, sizeof text);
    CHECK(f != NULL);
    CHECK(sdk_json_get_string(f, out, sizeof out, &n) == SDK_JSON_OK);
    CHECK_STR(out, cases[k].decoded);
    CHECK(n == strlen(cases[k].decoded));
    CHECK(sdk_json_string_equals(f, cases[k].decoded));
  }
  /* lone surrogates and \u0000 are valid JSON but not decodable strings */
  static const char *range[] = {"\"\\ud83d\"", "\"\\ude00\"", "\"\\ud83dx\"", "\"\\ud83d\\u0041\"",
                                "\"\\ud83d\\ud83d\"", "\"a\\u0000b\"", "\"\\ude00\\ud83d\""};
  for (size_t k = 0; k < sizeof range / sizeof range[0]; k++) {
    const sdk_json_field *f = field_of(range[k], &obj, text, sizeof text);
    CHECK(f != NULL);
    CHECK(sdk_json_get_string(f, out, sizeof out, &n) == SDK_JSON_ERR_RANGE);
    CHECK(!sdk_json_string_equals(f, ""));
  }
  const sdk_json_field *f = field_of("\"\\u00e9\"", &obj, text, sizeof text);
  CHECK(sdk_json_get_string(f, out, 2, &n) == SDK_JSON_ERR_TOO_LONG);
  CHECK(sdk_json_get_string(f, out, 3, &n) == SDK_JSON_OK && n == 2);
  CHECK(sdk_json_get_string(f, out, 0, &n) == SDK_JSON_ERR_TOO_LONG);
  f = field_of("\"\"", &obj, text, sizeof text);
  CHECK(sdk_json_get_string(f, out, 1, &n) == SDK_JSON_OK && n == 0 && out[0] == '\0');
  CHECK(sdk_json_get_string(f, NULL, 0, &n) == SDK_JSON_ERR_TOO_LONG);
  f = field_of("12", &obj, text, sizeof text);
  CHECK(sdk_json_get_string(f, out, sizeof out, &n) == SDK_JSON_ERR_TYPE);
  CHECK(!sdk_json_string_equals(f, "12"));
}

static void test_numbers(void) {
  double v = 0;
  /* short decimals are the nearest doubles */
  CHECK(number_is("0.5", 0.5));
  CHECK(number_is("0.25", 0.25));
  CHECK(number_is("1000", 1000.0));
  CHECK(number_is("1000000", 1000000.0));
  CHECK(number_is("3.3", 3.3));
  CHECK(number_is("0.1", 0.1));
  CHECK(number_is("0.2", 0.2));
  CHECK(number_is("0.3", 0.3));
  CHECK(number_is("1.6504", 1.6504));
  CHECK(number_is("27.3", 27.3));
  CHECK(number_is("21.75", 21.75));
  CHECK(number_is("-0.001", -0.001));
  CHECK(number_is("1e3", 1000.0));
  CHECK(number_is("1E+3", 1000.0));
  CHECK(number_is("2.5e-3", 0.0025));
  CHECK(number_is("123456789012345", 123456789012345.0));
  CHECK(number_is("9007199254740992", 9007199254740992.0));
  CHECK(number_is("1e22", 1e22));
  CHECK(number_is("1e23", 1e23));
  CHECK(number_is("1e-22", 1e-22));
  CHECK(number_is("4.35e25", 4.35e25));
  CHECK(number_is("0.000001", 0.000001));
  /* beyond the fast path: double-double scaling, still the nearest double */
  CHECK(number_is("1.7976931348623157e308", DBL_MAX));
  CHECK(number_is("1.7976931348623158e308", DBL_MAX)); /* below the midpoint to infinity */
  CHECK(!sdk_json_parse_number("1.7976931348623159e308", 22, &v));
  CHECK(number_is("1e300", 1e300));
  CHECK(number_is("1e-300", 1e-300));
  CHECK(number_is("8.98846567431158e307", 8.98846567431158e307));
  CHECK(number_is("1234567890123456789", 1234567890123456789.0));
  CHECK(number_is("9007199254740993", 9007199254740992.0)); /* an exact tie rounds to even */
  CHECK(number_is("9007199254740995", 9007199254740996.0));
  CHECK(number_is("0.1e-30", 1e-31));
  CHECK(number_is("80e-23", 8e-22));
  CHECK(number_is("4.9e-324", 4.9e-324));
  CHECK(number_is("2e-324", 0.0));
  CHECK(number_is("2.2250738585072014e-308", DBL_MIN));
  CHECK(number_is("0", 0.0));
  CHECK(number_is("1e-400", 0.0));
  CHECK(number_is("0e99999999999999999999", 0.0));
  CHECK(number_is("1e-99999999999999999999", 0.0));
  CHECK(sdk_json_parse_number("-0", 2, &v) && v == 0.0 && 1.0 / v < 0);
  /* past 19 significant digits the 20th rounds */
  CHECK(number_is("12345678901234567890123", 12345678901234567890123.0));
  CHECK(number_is("0.30000000000000000000001", 0.3));
  CHECK(number_is("100000000000000000000000000000", 1e29));
  CHECK(number_is("1e308", 1e308));
  CHECK(!sdk_json_parse_number("1e309", 5, &v));
  CHECK(!sdk_json_parse_number("-1e400", 6, &v));
  CHECK(!sdk_json_parse_number("01", 2, &v));
  CHECK(!sdk_json_parse_number("1.", 2, &v));
  CHECK(!sdk_json_parse_number(" 1", 2, &v));
  CHECK(!sdk_json_parse_number("", 0, &v));
  CHECK(!sdk_json_parse_number("1.5x", 4, &v));
  CHECK(sdk_json_parse_number("1.5x", 3, &v) && v == 1.5); /* only text[0..len) is read */

  sdk_json_object obj;
  char text[128];
  int64_t i = 0;
  struct {
    const char *json;
    int64_t value;
  } ints[] = {
      {"0", 0},   {"-0", 0},  {"1.0", 1}, {"1e3", 1000}, {"1.5e1", 15}, {"2500e-2", 25}, {"-7", -7},
      {"0.0e5", 0}, {"100e-2", 1}, {"9223372036854775807", INT64_MAX}, {"-9223372036854775808", INT64_MIN},
      {"9223372036854775807.000", INT64_MAX}, {"922337203685477580.7e1", INT64_MAX},
      {"0.00000000000000000001e20", 1},
  };
  for (size_t k = 0; k < sizeof ints / sizeof ints[0]; k++) {
    const sdk_json_field *f = field_of(ints[k].json, &obj, text, sizeof text);
    CHECK(sdk_json_get_int(f, INT64_MIN, INT64_MAX, &i) == SDK_JSON_OK && i == ints[k].value);
  }
  static const char *not_ints[] = {"0.5",  "1.01", "1e-1", "9223372036854775808", "-9223372036854775809",
                                   "1e19", "1e999999999", "18446744073709551616", "-1e100", "123456789e-20"};
  for (size_t k = 0; k < sizeof not_ints / sizeof not_ints[0]; k++) {
    const sdk_json_field *f = field_of(not_ints[k], &obj, text, sizeof text);
    CHECK(sdk_json_get_int(f, INT64_MIN, INT64_MAX, &i) == SDK_JSON_ERR_RANGE);
  }
  const sdk_json_field *f = field_of("28", &obj, text, sizeof text);
  CHECK(sdk_json_get_int(f, 0, 28, &i) == SDK_JSON_OK);
  CHECK(sdk_json_get_int(f, 0, 27, &i) == SDK_JSON_ERR_RANGE);
  CHECK(sdk_json_get_int(f, 29, 40, &i) == SDK_JSON_ERR_RANGE);
  f = field_of("\"28\"", &obj, text, sizeof text);
  CHECK(sdk_json_get_int(f, 0, 28, &i) == SDK_JSON_ERR_TYPE);
  double d = 0;
  CHECK(sdk_json_get_number(f, &d) == SDK_JSON_ERR_TYPE);
  f = field_of("1e999", &obj, text, sizeof text);
  CHECK(f != NULL && sdk_json_get_number(f, &d) == SDK_JSON_ERR_RANGE);
  f = field_of("true", &obj, text, sizeof text);
  CHECK(sdk_json_get_number(f, &d) == SDK_JSON_ERR_TYPE && sdk_json_get_int(f, 0, 1, &i) == SDK_JSON_ERR_TYPE);
}

static void test_large_arrays(void) {
  /* 12000 bytes: the largest array the protocol allows, in a 64 KB frame */
  static char text[65536];
  static uint8_t bytes[12000], back[12000];
  size_t n = (size_t)snprintf(text, sizeof text, "{\"type\":\"uart_write\",\"id\":1,\"uart\":0,\"data\":[");
  for (size_t k = 0; k < sizeof bytes; k++) {
    bytes[k] = (uint8_t)(k * 7 + k / 255);
    n += (size_t)snprintf(text + n, sizeof text - n, "%s%u", k ? "," : "", bytes[k]);
  }
  n += (size_t)snprintf(text + n, sizeof text - n, "]}");
  CHECK(n < 65536);
  sdk_json_object obj;
  CHECK(sdk_json_parse_object(text, n, &obj) == SDK_JSON_OK);
  size_t len = 0, bad = 0;
  const sdk_json_field *data = sdk_json_find(&obj, "data");
  CHECK(sdk_json_get_bytes(data, back, sizeof back, &len, &bad) == SDK_JSON_OK);
  CHECK(len == 12000 && memcmp(bytes, back, len) == 0);
  CHECK(sdk_json_get_bytes(data, back, 11999, &len, &bad) == SDK_JSON_ERR_TOO_LONG);

  /* one bad element is reported by index */
  char small[128];
  static const struct {
    const char *json;
    size_t bad;
  } bad_cases[] = {{"[1,2,256]", 2}, {"[-1]", 0}, {"[1,2.5]", 1}, {"[\"1\"]", 0}, {"[1,[2]]", 1}, {"[null]", 0},
                   {"[0,1,2,1e3]", 3}};
  for (size_t k = 0; k < sizeof bad_cases / sizeof bad_cases[0]; k++) {
    const sdk_json_field *f = field_of(bad_cases[k].json, &obj, small, sizeof small);
    bad = 99;
    CHECK(sdk_json_get_bytes(f, back, sizeof back, &len, &bad) == SDK_JSON_ERR_RANGE && bad == bad_cases[k].bad);
  }
  const sdk_json_field *f = field_of("[ 1.0 , 2e2 ,\n255, 0.0e0 ]", &obj, small, sizeof small);
  CHECK(sdk_json_get_bytes(f, back, 4, &len, &bad) == SDK_JSON_OK && len == 4);
  CHECK(back[0] == 1 && back[1] == 200 && back[2] == 255 && back[3] == 0);
  f = field_of("[ ]", &obj, small, sizeof small);
  CHECK(sdk_json_get_bytes(f, NULL, 0, &len, &bad) == SDK_JSON_OK && len == 0);
  CHECK(sdk_json_get_pixels(f, NULL, 0, &len, &bad) == SDK_JSON_OK && len == 0);

  /* 1024 pixels */
  static uint8_t rgb[1024 * 3], rgb_back[1024 * 3];
  n = (size_t)snprintf(text, sizeof text, "{\"type\":\"ws2812_write\",\"id\":2,\"pin\":22,\"pixels\":[");
  for (size_t k = 0; k < sizeof rgb; k += 3) {
    rgb[k] = (uint8_t)k;
    rgb[k + 1] = (uint8_t)(k >> 3);
    rgb[k + 2] = (uint8_t)(255 - k % 256);
    n += (size_t)snprintf(text + n, sizeof text - n, "%s[%u, %u,%u]", k ? "," : "", rgb[k], rgb[k + 1], rgb[k + 2]);
  }
  n += (size_t)snprintf(text + n, sizeof text - n, "]}");
  CHECK(sdk_json_parse_object(text, n, &obj) == SDK_JSON_OK);
  CHECK(sdk_json_get_pixels(sdk_json_find(&obj, "pixels"), rgb_back, 1024, &len, &bad) == SDK_JSON_OK);
  CHECK(len == 1024 && memcmp(rgb, rgb_back, sizeof rgb) == 0);
  CHECK(sdk_json_get_pixels(sdk_json_find(&obj, "pixels"), rgb_back, 1023, &len, &bad) == SDK_JSON_ERR_TOO_LONG);

  static const struct {
    const char *json;
    size_t bad;
  } bad_pixels[] = {{"[[1,2]]", 0},       {"[[1,2,3],[1,2,3,4]]", 1}, {"[[1,2,3],1]", 1}, {"[[1,2,256]]", 0},
                    {"[[1,2,3],[]]", 1}, {"[[1,2,\"3\"]]", 0},        {"[[1,2,[3]]]", 0}};
  for (size_t k = 0; k < sizeof bad_pixels / sizeof bad_pixels[0]; k++) {
    f = field_of(bad_pixels[k].json, &obj, small, sizeof small);
    bad = 99;
    CHECK(sdk_json_get_pixels(f, rgb_back, 8, &len, &bad) == SDK_JSON_ERR_RANGE && bad == bad_pixels[k].bad);
  }
  f = field_of("\"x\"", &obj, small, sizeof small);
  CHECK(sdk_json_get_pixels(f, rgb_back, 8, &len, &bad) == SDK_JSON_ERR_TYPE);
}

int main(void) {
  test_protocol_messages();
  test_malformed();
  test_strings();
  test_numbers();
  test_large_arrays();
  return check_exit("json_reader");
}
