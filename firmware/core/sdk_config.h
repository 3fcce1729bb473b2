/*
 * The config block: one flash sector (the same bytes in a file for the host build) holding the
 * device's credentials, Wi-Fi and server address. The layout is data in @sdk/protocol
 * (packages/protocol/src/config-block.ts) and is generated into sdk_protocol.h; docs/firmware.md
 * describes it. A block is used whole or not at all.
 */
#ifndef SDK_CONFIG_H
#define SDK_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
  SDK_CONFIG_OK = 0,
  SDK_CONFIG_ERASED,        /* the header is all 0xFF: never written */
  SDK_CONFIG_TRUNCATED,     /* fewer than SDK_CONFIG_BLOCK_BYTES bytes (a block is one whole sector) */
  SDK_CONFIG_BAD_MAGIC,
  SDK_CONFIG_BAD_VERSION,   /* a layout version this firmware does not read */
  SDK_CONFIG_BAD_LENGTH,    /* the header or payload length exceeds the block, or len > SDK_CONFIG_BLOCK_BYTES */
  SDK_CONFIG_BAD_CRC,
  SDK_CONFIG_BAD_FIELD,     /* a field overruns the payload, is too long or short, repeats or holds bad bytes */
  SDK_CONFIG_MISSING_FIELD  /* a required field is absent */
} sdk_config_status;

typedef struct {
  char device_id[65];
  char secret[129];
  char wifi_ssid[33];
  char wifi_passphrase[64]; /* "" for an open network */
  char wifi_country[3];
  char server[254];
  const uint8_t *ca_der; /* the server's CA certificate (DER), pointing into the block; NULL when absent */
  size_t ca_der_len;
  bool has_key_pin;
  uint8_t key_pin[32]; /* SHA-256 of the server certificate's SubjectPublicKeyInfo (DER) */
} sdk_config;

/*
 * Reads a config block. On success *out holds every field; on any failure *out is zeroed (never
 * half-filled). `field` (may be NULL) receives the camelCase name of the offending field for
 * BAD_FIELD and MISSING_FIELD ("deviceId"; "" when the field's tag is unknown or its header is cut
 * short), else "". Text fields are NUL-terminated; ca_der points into `block`.
 */
sdk_config_status sdk_config_parse(const uint8_t *block, size_t len, sdk_config *out, const char **field);
/* A sentence for logs: "the config block is erased (never written)". */
const char *sdk_config_status_text(sdk_config_status status);

uint32_t sdk_crc32(const uint8_t *data, size_t len); /* IEEE 802.3, as zlib's crc32 */

#endif /* SDK_CONFIG_H */
