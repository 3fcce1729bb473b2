#include "sdk_config.h"
#include "sdk_utf8.h"

#include <string.h>

#include "sdk_protocol.h"

enum { KIND_TEXT, KIND_UTF8, KIND_BYTES };

#define SDK_CONFIG_INDEX(NAME, tag, name, min_len, max_len, required, KIND) FIELD_##NAME,
enum { SDK_CONFIG_FIELDS(SDK_CONFIG_INDEX) FIELD_COUNT };

typedef struct {
  uint8_t tag;
  const char *name;
  uint16_t min_len;
  uint16_t max_len;
  bool required;
  uint8_t kind;
} field_spec;

#define SDK_CONFIG_SPEC(NAME, tag, name, min_len, max_len, required, KIND) \
  {tag, name, min_len, max_len, required, KIND_##KIND},
static const field_spec fields[FIELD_COUNT] = {SDK_CONFIG_FIELDS(SDK_CONFIG_SPEC)};

#define SDK_CONFIG_MAX(NAME, tag, name, min_len, max_len, required, KIND) MAX_##NAME = max_len,
enum { SDK_CONFIG_FIELDS(SDK_CONFIG_MAX) MAX_UNUSED_ };

#define MEMBER_SIZE(member) sizeof(((sdk_config *)0)->member)
_Static_assert(MEMBER_SIZE(device_id) > MAX_DEVICE_ID, "device_id holds the longest id");
_Static_assert(MEMBER_SIZE(secret) > MAX_SECRET, "secret holds the longest secret");
_Static_assert(MEMBER_SIZE(wifi_ssid) > MAX_WIFI_SSID, "wifi_ssid holds the longest SSID");
_Static_assert(MEMBER_SIZE(wifi_passphrase) > MAX_WIFI_PASSPHRASE, "wifi_passphrase holds the longest");
_Static_assert(MEMBER_SIZE(wifi_country) > MAX_WIFI_COUNTRY, "wifi_country holds two letters");
_Static_assert(MEMBER_SIZE(server) > MAX_SERVER, "server holds the longest address");
_Static_assert(MEMBER_SIZE(key_pin) == MAX_KEY_PIN, "key_pin is one SHA-256");
_Static_assert(FIELD_COUNT <= 32, "the seen-fields mask is a uint32_t");

static uint16_t read_u16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }

static uint32_t read_u32(const uint8_t *p) {
  return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static bool printable(const uint8_t *p, size_t len) {
  for (size_t i = 0; i < len; i++) {
    if (p[i] < 0x20 || p[i] > 0x7E) return false;
  }
  return true;
}


/* C0 controls or DEL (single bytes, so checking bytes is enough once the text is valid UTF-8). */
static bool has_controls(const uint8_t *p, size_t len) {
  for (size_t i = 0; i < len; i++) {
    if (p[i] < 0x20 || p[i] == 0x7F) return true;
  }
  return false;
}

static bool field_valid(const field_spec *spec, const uint8_t *p, size_t len) {
  if (len < spec->min_len || len > spec->max_len) return false;
  if (spec->kind == KIND_TEXT) return printable(p, len);
  if (spec->kind == KIND_UTF8) return sdk_utf8_valid(p, len) && !has_controls(p, len);
  return true;
}

static void copy_text(char *dst, const uint8_t *src, size_t len) {
  memcpy(dst, src, len);
  dst[len] = '\0';
}

static void store(sdk_config *out, size_t index, const uint8_t *p, size_t len) {
  switch (index) {
    case FIELD_DEVICE_ID: copy_text(out->device_id, p, len); break;
    case FIELD_SECRET: copy_text(out->secret, p, len); break;
    case FIELD_WIFI_SSID: copy_text(out->wifi_ssid, p, len); break;
    case FIELD_WIFI_PASSPHRASE: copy_text(out->wifi_passphrase, p, len); break;
    case FIELD_WIFI_COUNTRY: copy_text(out->wifi_country, p, len); break;
    case FIELD_SERVER: copy_text(out->server, p, len); break;
    case FIELD_CA_DER:
      out->ca_der = p;
      out->ca_der_len = len;
      break;
    case FIELD_KEY_PIN:
      memcpy(out->key_pin, p, sizeof out->key_pin);
      out->has_key_pin = true;
      break;
    default: break;
  }
}

static size_t field_index(uint8_t tag) {
  for (size_t i = 0; i < FIELD_COUNT; i++) {
    if (fields[i].tag == tag) return i;
  }
  return FIELD_COUNT;
}

/* Fills *out (already zeroed) from the fields of a payload whose CRC matched. */
static sdk_config_status read_fields(const uint8_t *payload, size_t len, sdk_config *out, const char **field) {
  uint32_t seen = 0;
  size_t at = 0;
  while (at < len) {
    if (len - at < 3) return SDK_CONFIG_BAD_FIELD;
    size_t index = field_index(payload[at]);
    size_t size = read_u16(payload + at + 1);
    at += 3;
    if (index < FIELD_COUNT) *field = fields[index].name;
    if (size > len - at) return SDK_CONFIG_BAD_FIELD;
    const uint8_t *value = payload + at;
    at += size;
    if (index == FIELD_COUNT) continue; /* a newer writer's field */
    if ((seen & (1u << index)) || !field_valid(&fields[index], value, size)) return SDK_CONFIG_BAD_FIELD;
    seen |= 1u << index;
    store(out, index, value, size);
    *field = "";
  }
  for (size_t i = 0; i < FIELD_COUNT; i++) {
    if (fields[i].required && !(seen & (1u << i))) {
      *field = fields[i].name;
      return SDK_CONFIG_MISSING_FIELD;
    }
  }
  return SDK_CONFIG_OK;
}

static sdk_config_status read_block(const uint8_t *block, size_t len, sdk_config *out, const char **field) {
  if (block == NULL || len < SDK_CONFIG_BLOCK_BYTES) return SDK_CONFIG_TRUNCATED;
  if (len > SDK_CONFIG_BLOCK_BYTES) return SDK_CONFIG_BAD_LENGTH;
  bool erased = true;
  for (size_t i = 0; i < SDK_CONFIG_HEADER_BYTES; i++) erased = erased && block[i] == 0xFF;
  if (erased) return SDK_CONFIG_ERASED;
  if (read_u32(block) != SDK_CONFIG_MAGIC) return SDK_CONFIG_BAD_MAGIC;
  if (read_u16(block + 4) != SDK_CONFIG_LAYOUT_VERSION) return SDK_CONFIG_BAD_VERSION;
  size_t header = read_u16(block + 6);
  uint32_t payload_len = read_u32(block + 8);
  if (header < SDK_CONFIG_HEADER_BYTES || header > SDK_CONFIG_BLOCK_BYTES ||
      payload_len > SDK_CONFIG_BLOCK_BYTES - header) {
    return SDK_CONFIG_BAD_LENGTH;
  }
  if (sdk_crc32(block + header, payload_len) != read_u32(block + 12)) return SDK_CONFIG_BAD_CRC;
  return read_fields(block + header, payload_len, out, field);
}

sdk_config_status sdk_config_parse(const uint8_t *block, size_t len, sdk_config *out, const char **field) {
  const char *bad = "";
  memset(out, 0, sizeof *out);
  sdk_config_status status = read_block(block, len, out, &bad);
  if (status != SDK_CONFIG_OK) memset(out, 0, sizeof *out);
  if (status != SDK_CONFIG_BAD_FIELD && status != SDK_CONFIG_MISSING_FIELD) bad = "";
  if (field != NULL) *field = bad;
  return status;
}

const char *sdk_config_status_text(sdk_config_status status) {
  switch (status) {
    case SDK_CONFIG_OK: return "the config block is valid";
    case SDK_CONFIG_ERASED: return "the config block is erased (never written)";
    case SDK_CONFIG_TRUNCATED: return "the config block is shorter than a sector";
    case SDK_CONFIG_BAD_MAGIC: return "the config block does not start with SDKC";
    case SDK_CONFIG_BAD_VERSION: return "the config block has a layout version this firmware does not read";
    case SDK_CONFIG_BAD_LENGTH: return "the config block's length field exceeds the block";
    case SDK_CONFIG_BAD_CRC: return "the config block's checksum does not match (corrupted)";
    case SDK_CONFIG_BAD_FIELD: return "a config field overruns the block, is too long or short, repeats or holds bad bytes";
    case SDK_CONFIG_MISSING_FIELD: return "a required config field is missing";
  }
  return "unknown config block status";
}
