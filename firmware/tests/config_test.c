/* sdk_config_parse against packages/protocol/vectors/config-block.jsonl, plus truncation, bit flips and
 * the never-half-filled rule. */
#include <stdlib.h>

#include "check.h"
#include "sdk_config.h"
#include "sdk_protocol.h"
#include "vectors.h"

static const char *const status_names[] = {"ok",      "erased",    "truncated", "bad_magic",    "bad_version",
                                           "bad_length", "bad_crc", "bad_field", "missing_field"};

static char line[VECTOR_LINE_MAX];
static vector_row row;
static uint8_t block[SDK_CONFIG_BLOCK_BYTES + 16];
static uint8_t valid_block[SDK_CONFIG_BLOCK_BYTES];
static bool have_valid_block = false;

static bool is_zeroed(const sdk_config *c) {
  static const sdk_config zero;
  return memcmp(c, &zero, sizeof zero) == 0;
}

static void to_hex(const uint8_t *data, size_t len, char *out) {
  static const char digits[] = "0123456789abcdef";
  for (size_t i = 0; i < len; i++) {
    out[2 * i] = digits[data[i] >> 4];
    out[2 * i + 1] = digits[data[i] & 0xF];
  }
  out[2 * len] = '\0';
}

static void check_fields(const sdk_config *c, const uint8_t *blk, size_t len) {
  static char hex[2 * SDK_CONFIG_BLOCK_BYTES + 1];
  CHECK_STR(c->device_id, vector_get(&row, "deviceId"));
  CHECK_STR(c->secret, vector_get(&row, "secret"));
  CHECK_STR(c->wifi_ssid, vector_get(&row, "wifiSsid"));
  CHECK_STR(c->wifi_passphrase, vector_get(&row, "wifiPassphrase"));
  CHECK_STR(c->wifi_country, vector_get(&row, "wifiCountry"));
  CHECK_STR(c->server, vector_get(&row, "server"));
  if (c->ca_der) {
    CHECK(c->ca_der > blk && c->ca_der + c->ca_der_len <= blk + len); /* points into the block */
    to_hex(c->ca_der, c->ca_der_len, hex);
  } else {
    CHECK(c->ca_der_len == 0);
    hex[0] = '\0';
  }
  CHECK_STR(hex, vector_get(&row, "caDer"));
  if (c->has_key_pin) {
    to_hex(c->key_pin, sizeof c->key_pin, hex);
  } else {
    hex[0] = '\0';
  }
  CHECK_STR(hex, vector_get(&row, "keyPin"));
}

static void check_vectors(void) {
  FILE *f = vector_open("config-block.jsonl");
  CHECK(f != NULL);
  if (!f) return;
  size_t rows = 0, ok_rows = 0;
  while (vector_next_line(f, line)) {
    bool parsed = vector_parse(line, &row);
    CHECK(parsed);
    const char *name = vector_get(&row, "name"), *hex = vector_get(&row, "hex");
    const char *expected = vector_get(&row, "status"), *expected_field = vector_get(&row, "field");
    CHECK(parsed && name && hex && expected && expected_field);
    if (!parsed || !name || !hex || !expected || !expected_field) continue;
    size_t len = vector_hex(hex, block, sizeof block);
    CHECK(len != (size_t)-1);
    if (len == (size_t)-1) continue;
    rows++;
    sdk_config config;
    memset(&config, 0xAA, sizeof config);
    const char *field = NULL;
    sdk_config_status status = sdk_config_parse(block, len, &config, &field);
    CHECK((size_t)status < sizeof status_names / sizeof status_names[0]);
    if (strcmp(status_names[status], expected) != 0 || strcmp(field, expected_field) != 0)
      fprintf(stderr, "vector \"%s\": ", name);
    CHECK_STR(status_names[status], expected);
    CHECK_STR(field, expected_field);
    CHECK(sdk_config_status_text(status)[0] != '\0');
    if (status == SDK_CONFIG_OK) {
      ok_rows++;
      check_fields(&config, block, len);
      if (!have_valid_block && len == sizeof valid_block) {
        memcpy(valid_block, block, len);
        have_valid_block = true;
      }
    } else {
      CHECK(is_zeroed(&config));
    }
  }
  fclose(f);
  CHECK(rows >= 20);
  CHECK(ok_rows >= 4);
}

/* Every proper prefix of a valid block is refused, and leaves *out zeroed. */
static void check_truncations(void) {
  CHECK(have_valid_block);
  size_t refused = 0;
  for (size_t len = 0; len < sizeof valid_block; len++) {
    sdk_config config;
    memset(&config, 0x55, sizeof config);
    if (sdk_config_parse(valid_block, len, &config, NULL) == SDK_CONFIG_TRUNCATED && is_zeroed(&config)) refused++;
  }
  CHECK(refused == sizeof valid_block);
  sdk_config config;
  CHECK(sdk_config_parse(NULL, 0, &config, NULL) == SDK_CONFIG_TRUNCATED);
  CHECK(sdk_config_parse(valid_block, sizeof valid_block, &config, NULL) == SDK_CONFIG_OK);
}

/* Flipping any bit of the header or payload is noticed. */
static void check_bit_flips(void) {
  uint32_t payload_len = (uint32_t)valid_block[8] | (uint32_t)valid_block[9] << 8 |
                         (uint32_t)valid_block[10] << 16 | (uint32_t)valid_block[11] << 24;
  size_t end = SDK_CONFIG_HEADER_BYTES + payload_len, accepted = 0;
  for (size_t i = 0; i < end; i++) {
    for (unsigned bit = 0; bit < 8; bit++) {
      memcpy(block, valid_block, sizeof valid_block);
      block[i] ^= (uint8_t)(1u << bit);
      sdk_config config;
      if (sdk_config_parse(block, sizeof valid_block, &config, NULL) == SDK_CONFIG_OK) accepted++;
    }
  }
  CHECK(accepted == 0);
}

static void check_crc32(void) {
  CHECK(sdk_crc32((const uint8_t *)"123456789", 9) == 0xCBF43926u);
  CHECK(sdk_crc32(NULL, 0) == 0);
  CHECK(sdk_crc32((const uint8_t *)"a", 1) == 0xE8B7BE43u);
}

int main(void) {
  check_crc32();
  check_vectors();
  check_truncations();
  check_bit_flips();
  return check_exit("config_test");
}
