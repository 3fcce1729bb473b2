#include <string.h>

#include "sdk_commands.h"
#include "sdk_protocol.h"
#include "sdk_text.h"

enum arg_kind {
  K_DIGITAL_PIN, K_GPIO, K_ADC_PIN, K_LEVEL, K_BUS, K_BUS_PIN, K_INTEGER, K_NUMBER, K_ONE_OF,
  K_I2C_ADDRESS, K_BAUD, K_BYTES, K_PIXELS
};
enum arg_table {
  T_NONE, T_I2C_SDA, T_I2C_SCL, T_SPI_SCK, T_SPI_TX, T_SPI_RX, T_UART_TX, T_UART_RX,
  T_PIN_MODES, T_PULLS, T_EDGES, T_PARITIES, T_UART_STOP_BITS
};

typedef struct {
  int command;
  const char *name;
  enum arg_kind kind;
  bool optional;
  double min, max;
  enum arg_table table;
  const char *what;
  const char *unit;
} arg_spec;

#define SDK_ARG_ROW(cmd, name, kind, opt, min, max, table, what, unit) \
  {SDK_COMMAND_##cmd, name, K_##kind, opt, min, max, T_##table, what, unit},
static const arg_spec specs[] = {SDK_COMMAND_ARGS(SDK_ARG_ROW)};
#define SPEC_COUNT (sizeof specs / sizeof specs[0])

static const char *const command_names[SDK_COMMAND_COUNT] = SDK_COMMAND_NAMES;
static const char *const board_ids[SDK_BOARD_COUNT] = SDK_BOARD_IDS;
static const char *const board_names[SDK_BOARD_COUNT] = SDK_BOARD_NAMES;
static const uint32_t gpio_masks[SDK_BOARD_COUNT] = SDK_BOARD_GPIO_MASKS;
static const uint32_t adc_masks[SDK_BOARD_COUNT] = SDK_BOARD_ADC_MASKS;
static const uint32_t role_masks[7][SDK_BOARD_COUNT][SDK_BUS_COUNT] = {
    SDK_BOARD_I2C_SDA_MASKS, SDK_BOARD_I2C_SCL_MASKS, SDK_BOARD_SPI_SCK_MASKS, SDK_BOARD_SPI_TX_MASKS,
    SDK_BOARD_SPI_RX_MASKS,  SDK_BOARD_UART_TX_MASKS, SDK_BOARD_UART_RX_MASKS,
};
static const char *const role_peripheral[7] = {"I2C", "I2C", "SPI", "SPI", "SPI", "UART", "UART"};
static const char *const pin_modes[] = SDK_PIN_MODES;
static const char *const pulls[] = SDK_PULLS;
static const char *const edges[] = SDK_EDGES;
static const char *const parities[] = SDK_PARITIES;
static const int stop_bits[] = SDK_UART_STOP_BITS;
static const int32_t bauds[SDK_UART_BAUD_COUNT] = SDK_UART_BAUDS;

#define DASH "\xE2\x80\x93" /* – */

int sdk_board_find(const char *id) {
  for (int b = 0; b < SDK_BOARD_COUNT; b++)
    if (strcmp(board_ids[b], id) == 0) return b;
  return -1;
}

const char *sdk_board_id(sdk_board board) { return board_ids[board]; }

int sdk_command_find(const char *type, size_t len) {
  for (int c = 0; c < SDK_COMMAND_COUNT; c++)
    if (strlen(command_names[c]) == len && memcmp(command_names[c], type, len) == 0) return c;
  return -1;
}

const char *sdk_command_name(int command) {
  return command >= 0 && command < SDK_COMMAND_COUNT ? command_names[command] : "";
}

/* String(value) as JavaScript prints it, for the (got …) part of a message. */
static void describe(sdk_text *t, const sdk_json_field *f) {
  if (!f) {
    sdk_text_add(t, "undefined");
  } else if (f->kind == SDK_JSON_OBJECT) {
    sdk_text_add(t, "[object Object]");
  } else if (f->kind == SDK_JSON_ARRAY) {
    for (size_t i = 1; i + 1 < f->value_len; i++)
      if (f->value[i] != ' ' && f->value[i] != '[' && f->value[i] != ']') sdk_text_add_n(t, &f->value[i], 1);
  } else {
    sdk_text_add_n(t, f->value, f->value_len);
  }
}

static bool int_in(const sdk_json_field *f, int64_t min, int64_t max, int64_t *out) {
  return f && sdk_json_get_int(f, min, max, out) == SDK_JSON_OK;
}

/* "0–22 and 26–28": runs of set bits */
static void number_runs(sdk_text *t, uint32_t mask) {
  int total = 0, written = 0;
  for (int p = 0; p < 32; p++)
    if ((mask & (1u << p)) && (p == 0 || !(mask & (1u << (p - 1))))) total++;
  for (int p = 0; p < 32; p++) {
    if (!(mask & (1u << p)) || (p > 0 && (mask & (1u << (p - 1))))) continue;
    int end = p;
    while (end < 31 && (mask & (1u << (end + 1)))) end++;
    if (written > 0) sdk_text_add(t, written == total - 1 ? " and " : ", ");
    sdk_text_int(t, p);
    if (end != p) {
      sdk_text_add(t, DASH);
      sdk_text_int(t, end);
    }
    written++;
  }
  if (total == 0) sdk_text_add(t, "none");
}

/* "GP26, GP27, GP28", the last separator `last` */
static void gp_list(sdk_text *t, uint32_t mask, const char *last) {
  int total = 0, seen = 0;
  for (int p = 0; p < 32; p++) total += (mask >> p) & 1u ? 1 : 0;
  for (int p = 0; p < 32; p++) {
    if (!(mask & (1u << p))) continue;
    if (seen > 0) sdk_text_add(t, seen == total - 1 ? last : ", ");
    sdk_text_add(t, "GP");
    sdk_text_int(t, p);
    seen++;
  }
}

/* "<label> 23 is not a GPIO of the …" (label: "pin", "cs", or a bus role's "sda pin"). */
static void not_a_gpio(sdk_text *t, sdk_board board, const char *label, const char *suffix,
                       const sdk_json_field *f) {
  sdk_text_add(t, label);
  sdk_text_add(t, suffix);
  sdk_text_add(t, " ");
  describe(t, f);
  sdk_text_add(t, " is not a GPIO of the ");
  sdk_text_add(t, board_names[board]);
  sdk_text_add(t, " (GPIO numbers ");
  number_runs(t, gpio_masks[board]);
  sdk_text_add(t, ", not physical pin numbers)");
}

static bool pin_in(const sdk_json_field *f, uint32_t mask, int64_t *pin) {
  return int_in(f, 0, 31, pin) && (mask & (1u << *pin));
}

static bool one_of(const arg_spec *s, const sdk_json_field *f, sdk_text *t) {
  const char *const *names = NULL;
  size_t count = 0;
  switch (s->table) {
    case T_PIN_MODES: names = pin_modes; count = SDK_PIN_MODES_COUNT; break;
    case T_PULLS: names = pulls; count = SDK_PULLS_COUNT; break;
    case T_EDGES: names = edges; count = SDK_EDGES_COUNT; break;
    case T_PARITIES: names = parities; count = SDK_PARITIES_COUNT; break;
    default: break;
  }
  if (names) {
    for (size_t i = 0; i < count; i++)
      if (f && sdk_json_string_equals(f, names[i])) return true;
    sdk_text_add(t, s->name);
    sdk_text_add(t, " must be one of ");
    for (size_t i = 0; i < count; i++) {
      if (i) sdk_text_add(t, ", ");
      sdk_text_add(t, names[i]);
    }
  } else {
    int64_t v;
    size_t n = sizeof stop_bits / sizeof stop_bits[0];
    for (size_t i = 0; i < n; i++)
      if (int_in(f, stop_bits[i], stop_bits[i], &v)) return true;
    sdk_text_add(t, s->name);
    sdk_text_add(t, " must be ");
    for (size_t i = 0; i < n; i++) {
      if (i) sdk_text_add(t, " or ");
      sdk_text_int(t, stop_bits[i]);
    }
  }
  sdk_text_add(t, " (got ");
  describe(t, f);
  sdk_text_add(t, ")");
  return false;
}

static bool check_bytes(const sdk_json_field *f, const char *name, sdk_text *t) {
  if (!f || f->kind != SDK_JSON_ARRAY) {
    sdk_text_add(t, name);
    sdk_text_add(t, " must be an array of bytes");
    return false;
  }
  /* Walk the elements without decoding into a buffer: each must be an integer 0–255. */
  size_t index = 0, i = 1;
  while (i < f->value_len) {
    while (i < f->value_len && (f->value[i] == ' ' || f->value[i] == '\t' || f->value[i] == '\n' ||
                                f->value[i] == '\r' || f->value[i] == ','))
      i++;
    if (i >= f->value_len || f->value[i] == ']') break;
    size_t start = i;
    while (i < f->value_len && f->value[i] != ',' && f->value[i] != ']' && f->value[i] != ' ' &&
           f->value[i] != '\t' && f->value[i] != '\n' && f->value[i] != '\r') {
      if (f->value[i] == '[' || f->value[i] == '{' || f->value[i] == '"') break;
      i++;
    }
    double v;
    bool ok = i > start && sdk_json_parse_number(f->value + start, i - start, &v) && v >= 0 && v <= 255 &&
              v == (double)(int)v;
    if (index >= SDK_MAX_BYTES_PER_MESSAGE) {
      sdk_text_add(t, name);
      sdk_text_add(t, " has more than ");
      sdk_text_int(t, SDK_MAX_BYTES_PER_MESSAGE);
      sdk_text_add(t, " bytes; at most ");
      sdk_text_int(t, SDK_MAX_BYTES_PER_MESSAGE);
      sdk_text_add(t, " fit in one message");
      return false;
    }
    if (!ok) {
      sdk_text_add(t, name);
      sdk_text_add(t, "[");
      sdk_text_int(t, (int64_t)index);
      sdk_text_add(t, "] must be a byte 0" DASH "255 (got ");
      if (i == start) {
        /* a nested value: describe it roughly, as String() would not help either */
        sdk_text_add(t, f->value[i] == '"' ? "a string" : "a nested value");
      } else {
        sdk_text_add_n(t, f->value + start, i - start);
      }
      sdk_text_add(t, ")");
      return false;
    }
    index++;
  }
  return true;
}

static bool check_pixels(const sdk_json_field *f, uint8_t *scratch, size_t scratch_cap, sdk_text *t) {
  size_t pixels = 0, bad = 0;
  sdk_json_status st = SDK_JSON_ERR_TYPE;
  size_t max = scratch_cap / 3 < SDK_WS2812_PIXELS_MAX ? scratch_cap / 3 : SDK_WS2812_PIXELS_MAX;
  if (f) st = sdk_json_get_pixels(f, scratch, max, &pixels, &bad);
  if (st == SDK_JSON_OK && pixels >= SDK_WS2812_PIXELS_MIN) return true;
  if (st == SDK_JSON_ERR_RANGE) {
    sdk_text_add(t, "pixels[");
    sdk_text_int(t, (int64_t)bad);
    sdk_text_add(t, "] must be [r, g, b] with each value 0" DASH "255");
    return false;
  }
  sdk_text_add(t, "pixels must be an array of ");
  sdk_text_int(t, SDK_WS2812_PIXELS_MIN);
  sdk_text_add(t, DASH);
  sdk_text_int(t, SDK_WS2812_PIXELS_MAX);
  sdk_text_add(t, " [r, g, b] triples");
  return false;
}

static bool check_arg(sdk_board board, const arg_spec *s, const sdk_json_object *args, int64_t bus,
                      sdk_text *t) {
  const sdk_json_field *f = sdk_json_find(args, s->name);
  int64_t v;
  switch (s->kind) {
    case K_DIGITAL_PIN:
    case K_GPIO:
      if (s->kind == K_DIGITAL_PIN && f && sdk_json_string_equals(f, SDK_ONBOARD_LED)) return true;
      if (pin_in(f, gpio_masks[board], &v)) return true;
      not_a_gpio(t, board, s->what, "", f);
      return false;
    case K_ADC_PIN:
      if (pin_in(f, adc_masks[board], &v)) return true;
      sdk_text_add(t, "pin ");
      describe(t, f);
      sdk_text_add(t, " cannot read analog values: the ADC pins are ");
      gp_list(t, adc_masks[board], " and ");
      sdk_text_add(t, " (0" DASH "3.3 V)");
      return false;
    case K_LEVEL:
    case K_BUS:
      if (int_in(f, 0, 1, &v)) return true;
      sdk_text_add(t, s->kind == K_LEVEL ? s->name : s->what);
      sdk_text_add(t, " must be 0 or 1 (got ");
      describe(t, f);
      sdk_text_add(t, ")");
      return false;
    case K_BUS_PIN: {
      if (!pin_in(f, gpio_masks[board], &v)) {
        not_a_gpio(t, board, s->name, " pin", f);
        return false;
      }
      int role = (int)s->table - (int)T_I2C_SDA;
      uint32_t options = role_masks[role][board][bus];
      if (options & (1u << v)) return true;
      sdk_text_add(t, "GP");
      sdk_text_int(t, v);
      sdk_text_add(t, " cannot be ");
      sdk_text_add(t, role_peripheral[role]);
      sdk_text_int(t, bus);
      sdk_text_add(t, " ");
      for (const char *c = s->name; *c; c++) {
        char upper = (char)(*c >= 'a' && *c <= 'z' ? *c - 'a' + 'A' : *c);
        sdk_text_add_n(t, &upper, 1);
      }
      sdk_text_add(t, "; use one of ");
      gp_list(t, options, ", ");
      return false;
    }
    case K_INTEGER:
    case K_NUMBER: {
      bool ok;
      if (s->kind == K_INTEGER) {
        ok = int_in(f, (int64_t)s->min, (int64_t)s->max, &v);
      } else {
        double d;
        ok = f && sdk_json_get_number(f, &d) == SDK_JSON_OK && d >= s->min && d <= s->max;
      }
      if (ok) return true;
      sdk_text_add(t, s->what);
      sdk_text_add(t, " must be");
      if (s->min == 0 && s->max == 255) sdk_text_add(t, " a byte");
      sdk_text_add(t, " ");
      sdk_text_int(t, (int64_t)s->min);
      sdk_text_add(t, DASH);
      sdk_text_int(t, (int64_t)s->max);
      sdk_text_add(t, s->unit);
      sdk_text_add(t, " (got ");
      describe(t, f);
      sdk_text_add(t, ")");
      return false;
    }
    case K_ONE_OF:
      return one_of(s, f, t);
    case K_I2C_ADDRESS:
      if (int_in(f, SDK_I2C_ADDRESS_MIN, SDK_I2C_ADDRESS_MAX, &v)) return true;
      sdk_text_add(t, "I2C address must be 0x");
      sdk_text_hex2(t, SDK_I2C_ADDRESS_MIN);
      sdk_text_add(t, DASH "0x");
      sdk_text_hex2(t, SDK_I2C_ADDRESS_MAX);
      sdk_text_add(t, " (got ");
      if (int_in(f, 0, 0xFFFFFFFF, &v)) {
        sdk_text_add(t, "0x");
        sdk_text_hex2(t, (uint32_t)v);
      } else {
        describe(t, f);
      }
      sdk_text_add(t, ")");
      return false;
    case K_BAUD:
      for (size_t i = 0; i < SDK_UART_BAUD_COUNT; i++)
        if (int_in(f, bauds[i], bauds[i], &v)) return true;
      sdk_text_add(t, "baud must be a standard rate (");
      for (size_t i = 0; i < SDK_UART_BAUD_COUNT; i++) {
        if (i) sdk_text_add(t, ", ");
        sdk_text_int(t, bauds[i]);
      }
      sdk_text_add(t, "; got ");
      describe(t, f);
      sdk_text_add(t, ")");
      return false;
    case K_BYTES:
      return check_bytes(f, s->name, t);
    case K_PIXELS: {
      static uint8_t pixels[SDK_WS2812_PIXELS_MAX * 3];
      return check_pixels(f, pixels, sizeof pixels, t);
    }
  }
  return false;
}

bool sdk_command_check(sdk_board board, int command, const sdk_json_object *args, char *msg, size_t cap) {
  sdk_text t;
  sdk_text_init(&t, msg, cap);
  int64_t bus = 0;
  for (size_t i = 0; i < SPEC_COUNT; i++) {
    const arg_spec *s = &specs[i];
    if (s->command != command) continue;
    const sdk_json_field *f = sdk_json_find(args, s->name);
    if (s->optional && !f) continue;
    if (!check_arg(board, s, args, bus, &t)) return false;
    if (s->kind == K_BUS) (void)int_in(f, 0, 1, &bus);
  }
  return true;
}
