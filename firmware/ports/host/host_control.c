/*
 * The control protocol of packages/conformance/README.md, as packages/simulator/src/control-host.ts
 * implements it. Two more commands for tests:
 *   adc <pin> <volts>       sets the voltage on GP26-28 (clamped to 0-3.3 V)  -> ok
 *   temperature <celsius>   sets what temperature_read answers                -> ok
 */
#include "host_control.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host_board.h"
#include "host_peripherals.h"
#include "sdk_port.h"

typedef struct {
  const char *s;
  size_t n;
} word;

#define MAX_WORDS 4

typedef struct {
  char *out;
  size_t cap;
} reply;

static bool fail(reply *r, const char *format, ...) __attribute__((format(printf, 2, 3)));

static bool fail(reply *r, const char *format, ...) {
  int n = snprintf(r->out, r->cap, "error ");
  if (n < 0 || (size_t)n >= r->cap) return false;
  va_list args;
  va_start(args, format);
  (void)vsnprintf(r->out + n, r->cap - (size_t)n, format, args);
  va_end(args);
  return false;
}

static bool is_word(word w, const char *text) { return w.n == strlen(text) && memcmp(w.s, text, w.n) == 0; }

/* /^\d+$/ */
static bool parse_int(reply *r, word w, uint64_t *value) {
  if (w.n == 0) return fail(r, "not a number: \"\"");
  uint64_t v = 0;
  for (size_t i = 0; i < w.n; i++) {
    if (w.s[i] < '0' || w.s[i] > '9') return fail(r, "not a number: \"%.*s\"", (int)w.n, w.s);
    v = v * 10u + (uint64_t)(w.s[i] - '0');
    if (v > UINT32_MAX) return fail(r, "number too large: \"%.*s\"", (int)w.n, w.s);
  }
  *value = v;
  return true;
}

static bool parse_bus(reply *r, word w, uint8_t *bus) {
  uint64_t v;
  if (!parse_int(r, w, &v)) return false;
  if (v > 1) return fail(r, "no bus %" PRIu64, v);
  *bus = (uint8_t)v;
  return true;
}

static bool parse_gpio(reply *r, word w, uint8_t *pin) {
  uint64_t v;
  if (!parse_int(r, w, &v)) return false;
  unsigned board = (unsigned)host_peripherals_board();
  if (!host_board_gpio(board, v)) {
    return fail(r, "GP%" PRIu64 " is not a usable GPIO on the %s", v, host_board_name(board));
  }
  *pin = (uint8_t)v;
  return true;
}

static bool parse_double(reply *r, word w, double *value) {
  char text[64];
  if (w.n == 0 || w.n >= sizeof text) return fail(r, "not a number: \"%.*s\"", (int)w.n, w.s);
  memcpy(text, w.s, w.n);
  text[w.n] = '\0';
  char *end = NULL;
  double v = strtod(text, &end);
  if (end != text + w.n || !isfinite(v)) return fail(r, "not a finite number: \"%s\"", text);
  *value = v;
  return true;
}

static int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* /^([0-9a-f]{2})*$/i; the byte count in *len. */
static bool check_hex(reply *r, word w, size_t *len) {
  bool ok = w.n % 2 == 0;
  for (size_t i = 0; ok && i < w.n; i++) ok = hex_digit(w.s[i]) >= 0;
  if (!ok) return fail(r, "not hex bytes: %.*s", (int)w.n, w.s);
  *len = w.n / 2;
  return true;
}

static void decode_hex(const char *hex, uint8_t *out, size_t len) {
  for (size_t i = 0; i < len; i++) out[i] = (uint8_t)(hex_digit(hex[2 * i]) * 16 + hex_digit(hex[2 * i + 1]));
}

/* Appends to the answer; false (answer turned into an error) when it does not fit. */
static bool put(reply *r, size_t *used, const char *text) {
  size_t n = strlen(text);
  if (*used + n + 1 > r->cap) {
    (void)snprintf(r->out, r->cap, "error the answer does not fit");
    return false;
  }
  memcpy(r->out + *used, text, n + 1);
  *used += n;
  return true;
}

/* A number as JavaScript's String(number) prints it: the shortest digits that read back the same. */
static void js_number(double v, char *out, size_t cap) {
  if (isnan(v)) {
    (void)snprintf(out, cap, "NaN");
    return;
  }
  if (isinf(v)) {
    (void)snprintf(out, cap, v < 0 ? "-Infinity" : "Infinity");
    return;
  }
  if (v == 0.0) {
    (void)snprintf(out, cap, "0");
    return;
  }
  char sci[40];
  for (int precision = 1; precision <= 17; precision++) {
    (void)snprintf(sci, sizeof sci, "%.*e", precision - 1, v);
    if (strtod(sci, NULL) == v) break;
  }
  /* sci is [-]d[.ddd]e±x: collect the digits and the exponent. */
  const char *p = sci;
  bool negative = *p == '-';
  if (negative) p++;
  char digits[20];
  int k = 0;
  for (; *p && *p != 'e'; p++) {
    if (*p != '.' && k < (int)sizeof digits - 1) digits[k++] = *p;
  }
  while (k > 1 && digits[k - 1] == '0') k--;
  digits[k] = '\0';
  int n = (int)strtol(p + 1, NULL, 10) + 1; /* v = 0.digits × 10^n */
  char text[48];
  size_t t = 0;
  if (negative) text[t++] = '-';
  if (k <= n && n <= 21) { /* an integer: the digits, then zeros */
    for (int i = 0; i < n; i++) text[t++] = i < k ? digits[i] : '0';
  } else if (0 < n && n <= 21) { /* the point inside the digits */
    for (int i = 0; i < k; i++) {
      if (i == n) text[t++] = '.';
      text[t++] = digits[i];
    }
  } else if (-6 < n && n <= 0) { /* 0.000ddd */
    text[t++] = '0';
    text[t++] = '.';
    for (int i = 0; i < -n; i++) text[t++] = '0';
    for (int i = 0; i < k; i++) text[t++] = digits[i];
  } else { /* d.ddde±x */
    text[t++] = digits[0];
    if (k > 1) text[t++] = '.';
    for (int i = 1; i < k; i++) text[t++] = digits[i];
    int written = snprintf(text + t, sizeof text - t, "e%c%d", n - 1 < 0 ? '-' : '+', abs(n - 1));
    t += written > 0 ? (size_t)written : 0;
  }
  text[t] = '\0';
  (void)snprintf(out, cap, "%s", text);
}

static bool run_input(reply *r, const word *w) {
  uint64_t level;
  uint8_t pin;
  if (!parse_int(r, w[2], &level)) return false;
  if (level > 1) return fail(r, "level must be 0 or 1");
  if (!parse_gpio(r, w[1], &pin)) return false;
  host_peripherals_drive(pin, (int)level);
  return true;
}

static bool run_uart(reply *r, const word *w) {
  uint8_t uart;
  size_t len;
  if (!parse_bus(r, w[1], &uart) || !check_hex(r, w[2], &len)) return false;
  if (!host_peripherals_uart_configured(uart)) {
    return fail(r, "UART %u is not configured; send uart_configure first", uart);
  }
  if (len > host_peripherals_uart_space(uart)) {
    return fail(r, "UART %u receive buffer is full (%zu bytes free)", uart, host_peripherals_uart_space(uart));
  }
  uint8_t chunk[512];
  for (size_t done = 0; done < len;) {
    size_t n = len - done < sizeof chunk ? len - done : sizeof chunk;
    decode_hex(w[2].s + 2 * done, chunk, n);
    if (host_peripherals_uart_inject(uart, chunk, n) != n) return fail(r, "UART %u receive buffer is full", uart);
    done += n;
  }
  return true;
}

static bool run_pin(reply *r, const word *w) {
  uint8_t pin = SDK_PIN_LED;
  if (!is_word(w[1], host_board_led_name()) && !parse_gpio(r, w[1], &pin)) return false;
  char text[96];
  double frequency, duty;
  if (host_peripherals_pwm(pin, &frequency, &duty)) {
    char hz[40], fraction[40];
    js_number(frequency, hz, sizeof hz);
    js_number(duty, fraction, sizeof fraction);
    (void)snprintf(text, sizeof text, "ok %u pwm %s %s", host_peripherals_level(pin), hz, fraction);
  } else {
    (void)snprintf(text, sizeof text, "ok %u", host_peripherals_level(pin));
  }
  size_t used = 0;
  return put(r, &used, text);
}

static bool run_pixels(reply *r, const word *w) {
  uint64_t v;
  if (!parse_int(r, w[1], &v)) return false;
  size_t used = 0;
  if (!put(r, &used, "ok")) return false;
  const uint8_t *rgb;
  size_t pixels;
  if (v >= HOST_GPIO_COUNT || !host_peripherals_pixels((uint8_t)v, &rgb, &pixels)) return true;
  for (size_t i = 0; i < pixels; i++) {
    char text[8];
    (void)snprintf(text, sizeof text, " %02x%02x%02x", rgb[3 * i], rgb[3 * i + 1], rgb[3 * i + 2]);
    if (!put(r, &used, text)) return false;
  }
  return true;
}

static bool run_i2c(reply *r, const word *w) {
  size_t len;
  uint8_t bus;
  uint64_t address;
  if (!check_hex(r, w[3], &len) || !parse_bus(r, w[1], &bus) || !parse_int(r, w[2], &address)) return false;
  if (address > 127) return fail(r, "not a 7-bit I2C address: %" PRIu64, address);
  if (len > HOST_I2C_TARGET_BYTES) return fail(r, "at most %u bytes for an I2C target", HOST_I2C_TARGET_BYTES);
  uint8_t data[HOST_I2C_TARGET_BYTES];
  decode_hex(w[3].s, data, len);
  if (!host_peripherals_i2c_attach(bus, (uint8_t)address, data, len)) return fail(r, "cannot attach");
  return true;
}

static bool run_adc(reply *r, const word *w) {
  uint64_t pin;
  double volts;
  if (!parse_int(r, w[1], &pin) || !parse_double(r, w[2], &volts)) return false;
  if (pin > 255 || !host_peripherals_set_voltage((uint8_t)pin, volts)) {
    return fail(r, "GP%" PRIu64 " is not an ADC pin (GP26-GP28)", pin);
  }
  return true;
}

static bool run_temperature(reply *r, const word *w) {
  double celsius;
  if (!parse_double(r, w[1], &celsius)) return false;
  host_peripherals_set_temperature(celsius);
  return true;
}

static size_t split(const char *line, word *w) {
  const char *start = line;
  const char *end = line + strlen(line);
  while (start < end && isspace((unsigned char)*start)) start++;
  while (end > start && isspace((unsigned char)end[-1])) end--;
  size_t count = 0;
  for (const char *p = start;; p++) {
    if (p == end || *p == ' ') {
      if (count < MAX_WORDS) w[count] = (word){start, (size_t)(p - start)};
      count++;
      if (p == end) break;
      start = p + 1;
    }
  }
  return count;
}

bool host_control_line(const char *line, char *answer, size_t cap) {
  if (cap == 0) return false;
  reply r = {answer, cap};
  word w[MAX_WORDS];
  for (size_t i = 0; i < MAX_WORDS; i++) w[i] = (word){"", 0};
  size_t count = split(line, w);
  static const struct {
    const char *verb;
    size_t words;
    bool (*run)(reply *, const word *);
  } commands[] = {
      {"input", 3, run_input},   {"uart", 3, run_uart}, {"pin", 2, run_pin},
      {"pixels", 2, run_pixels}, {"i2c", 4, run_i2c},   {"adc", 3, run_adc},
      {"temperature", 2, run_temperature},
  };
  if (is_word(w[0], "stop")) {
    if (count > 1) return fail(&r, "stop takes no arguments");
    (void)snprintf(answer, cap, "ok");
    return true;
  }
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
    if (!is_word(w[0], commands[i].verb)) continue;
    if (count > commands[i].words) {
      (void)fail(&r, "%s takes at most %zu arguments", commands[i].verb, commands[i].words - 1);
    } else {
      (void)snprintf(answer, cap, "ok");
      (void)commands[i].run(&r, w);
    }
    return false;
  }
  (void)fail(&r, "unknown control command \"%.*s\"", (int)w[0].n, w[0].s);
  return false;
}
